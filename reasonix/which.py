"""Finding a program on ``PATH`` without importing :mod:`shutil`.

Importing ``shutil`` also imports ``fnmatch``, ``bz2`` and ``lzma`` (about
2 ms of a clean interpreter's start-up), and the start of a run asks only
"is ``git`` here, is ``bwrap`` here". :func:`which` answers that the way
``shutil.which`` does on POSIX (``tests/test_which.py`` holds the two to the
same answer); on Windows, where ``PATHEXT`` and the current directory take
part, it is ``shutil.which``.
"""

from __future__ import annotations

import os
import sys

__all__ = ["which"]


def which(name: str, path: str | None = None) -> str | None:
    """The path of the executable ``name`` on ``path`` (default ``$PATH``), or None."""
    if sys.platform == "win32":
        import shutil

        return shutil.which(name, path=path)
    if os.path.dirname(name):  # a path: only that file, as shutil does
        return name if _runnable(name) else None
    if path is None:
        path = os.environ.get("PATH")
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):  # no confstr or no CS_PATH here
                path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for folder in os.fsdecode(path).split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, name)
        if _runnable(candidate):
            return candidate
    return None


def _runnable(candidate: str) -> bool:
    return (
        os.path.exists(candidate)
        and os.access(candidate, os.F_OK | os.X_OK)
        and not os.path.isdir(candidate)
    )
