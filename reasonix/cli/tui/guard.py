"""What keeps the terminal the view's own while it runs, and what happens if it fails.

SIGTERM/SIGHUP leave through the same clean-up as Ctrl-D; SIGWINCH wakes the
loop to reflow; stray ``sys.stderr`` lines and a dying thread's traceback
become notices (:class:`Diverted`) instead of writing over the screen; a crash
of the view is reported in one line after the terminal is restored.
"""

from __future__ import annotations

import _signal as signal  # the C module: the signal module builds enums (and imports enum)
import contextlib
import os
import sys
from collections.abc import Callable

__all__ = ["Diverted", "call_key", "install_signals", "report_crash", "restore_signals"]


class Diverted:
    """Stands in for ``sys.stderr`` while the view runs: each line becomes a notice."""

    def __init__(self, post: Callable[[str, str, str], None]) -> None:
        self.post, self._partial = post, ""  # the app's post(kind, text, level)
        self.encoding, self.errors = "utf-8", "replace"

    def write(self, text: str) -> int:
        """Keep partial lines; post each complete, non-blank one."""
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            if line.strip():
                self.post("notice", line, "warn")
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered on the way to the screen."""
        return None

    def isatty(self) -> bool:
        """Not a terminal: nothing should draw through it."""
        return False

    def thread_died(self, hook: object) -> None:
        """``threading.excepthook`` (``hook``: its ``ExceptHookArgs``): one notice, no
        traceback on the screen."""
        name = getattr(getattr(hook, "thread", None), "name", "a thread")
        kind = getattr(getattr(hook, "exc_type", None), "__name__", "error")
        self.post("notice", f"{name} failed: {kind}: {getattr(hook, 'exc_value', '')}", "error")


def call_key(name: str, args: object) -> str:
    """A stable key for one call (tool name and arguments), to match an approval to its run."""
    import json

    try:
        return name + json.dumps(args, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return name


def install_signals(wake_fd: int) -> dict[int, object]:
    """SIGTERM/SIGHUP leave cleanly; SIGWINCH wakes the loop to reflow."""
    saved: dict[int, object] = {}

    def leave(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    def winch(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            os.write(wake_fd, b"w")

    for name, handler in (("SIGTERM", leave), ("SIGHUP", leave), ("SIGWINCH", winch)):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(ValueError, OSError):
                saved[sig] = signal.signal(sig, handler)
    return saved


def restore_signals(saved: dict[int, object]) -> None:
    """Put back the handlers :func:`install_signals` replaced."""
    for sig, handler in saved.items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def report_crash(err: BaseException, session: str) -> None:
    """One line on stderr for a view that failed (a traceback only with REASONIX_DEBUG);
    ``session``: the id of the session the runtime wrote, if it was built."""
    from reasonix.cli.safe_text import printable

    where = ""
    if session:
        where = f"; session {session} is saved (`reasonix -c` resumes it)"
    print(
        printable(f"reasonix: the chat view stopped: {type(err).__name__}: {err}{where}"),
        file=sys.stderr,
    )
    if os.environ.get("REASONIX_DEBUG"):
        import traceback

        traceback.print_exception(err)
