"""Shorter GIL slices while a helper thread works beside a busy main thread.

A helper (the window probe, a checkpoint's git processes) mostly waits on a
socket or a child process; each time that wait ends it needs the GIL back,
and a main thread busy in Python code (building the run, running a tool)
gives it up only every switch interval. At CPython's 5 ms default a helper
of a few quick steps spends most of its time queueing for the GIL: it
started git 5 ms late and finished long after the main thread needed it.
While any helper runs, :func:`short_slices` lowers the interval; the last
one to leave restores it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

__all__ = ["HELPER_SWITCH", "short_slices"]

HELPER_SWITCH = 0.0005  # seconds of GIL per turn while a helper runs (CPython's default: 0.005)

_lock = threading.Lock()
_users = 0
_saved = 0.0


@contextlib.contextmanager
def short_slices() -> Iterator[None]:
    """Lower the GIL switch interval to :data:`HELPER_SWITCH` for the ``with`` block
    (never raise it: an interval already shorter is kept)."""
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved, HELPER_SWITCH))
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                sys.setswitchinterval(_saved)
