"""Imports done while the main thread waits for a model's answer.

The modules a turn's tools need (a tool's implementation, the bash
classifier) are imported on their first call, between the model's answer and
the next request: on the critical path. :func:`offer` names them once the
runtime is built; the HTTP layer calls :func:`run_until` after a request has
been sent and before it reads the answer, which imports them one by one until
the first byte of the answer is there (``ready()``) or none is left. A real
model takes hundreds of milliseconds to answer, so they are all loaded by the
first tool call; against a server that answers at once, at most the import
under way when the answer arrives is waited for.

Only the main thread does this work, and only where it would otherwise
block: no thread is added for it, and the tools that would import the same
modules do not run while a request is awaited. A module that cannot be
imported is left for its real first use, which reports the error. Nothing
here imports the rest of Reasonix.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable

__all__ = ["offer", "run_until"]

_todo: list[str] = []
_lock = threading.Lock()


def offer(modules: Iterable[str]) -> None:
    """Queue ``modules`` (dotted names, in the order they are likely needed)."""
    with _lock:
        _todo.extend(m for m in modules if m not in _todo)


def run_until(ready: Callable[[], bool]) -> None:
    """Import queued modules until ``ready()`` is true or none is left (main thread only)."""
    if not _todo or threading.current_thread() is not threading.main_thread():
        return  # (nothing queued: not even a look at the socket)
    while _todo and not ready():
        with _lock:
            if not _todo:
                return
            name = _todo.pop(0)
        if name in sys.modules:
            continue
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - its first real use imports it again and says why
            pass
