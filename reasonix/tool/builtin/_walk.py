"""The directory walk shared by grep (Python engine), glob and code_index.

Depth-first, names sorted, symlinks not followed, only regular files yielded
(like ripgrep: a FIFO or device is never opened); ignore files
(``.gitignore``/``.ignore``/``.rgignore``) applied as ripgrep does (see
:mod:`._gitignore`). Hidden entries are skipped unless an ignore file
whitelists them or the caller asks for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled
from reasonix.tool.builtin._gitignore import IGNORE_FILES, IgnoreStack

__all__ = ["walk_files"]

_IGNORE_NAMES = frozenset((*IGNORE_FILES, ".git"))


def walk_files(
    root: str,
    cancel: Cancel,
    include: Callable[[str], bool] | None = None,
    forbidden: Callable[[str], bool] | None = None,
    *,
    skip_hidden: bool = True,
    skip_dirs: frozenset[str] = frozenset(),
    max_depth: int | None = None,
) -> Iterator[str]:
    """Yield files under ``root`` depth-first, names sorted, ignore rules applied.

    ``include`` sees the path relative to ``root``; ``forbidden`` the absolute
    path (a forbidden directory is pruned whole). ``max_depth``: files at most
    that many levels down (1: directly in ``root``); deeper folders are not opened.
    """
    prefix_len = len(root) + (0 if root.endswith("/") else 1)
    stack: list[tuple[Iterator[os.DirEntry[str]], IgnoreStack]] = []
    top = _open_dir(root, None)
    if top is not None:
        stack.append(top)
    while stack:
        if cancel.cancelled:
            raise Cancelled(cancel.reason or "cancelled")
        entries, ignores = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name = entry.name
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir()
            if not is_dir and not entry.is_file():
                continue  # FIFOs, sockets, devices: opening a FIFO would block forever
        except OSError:
            continue
        if is_dir and name in skip_dirs:
            continue
        path = entry.path
        verdict = None if ignores.empty else ignores.match(path, is_dir)
        if verdict is True:
            continue
        if verdict is None and skip_hidden and name.startswith("."):
            continue
        if forbidden is not None and forbidden(path):
            continue
        if is_dir:
            if max_depth is not None and len(stack) >= max_depth:
                continue  # nothing below can be yielded: not even listed
            child = _open_dir(path, ignores)
            if child is not None:
                stack.append(child)
            continue
        if include is not None and not include(path[prefix_len:]):
            continue
        yield path


def _open_dir(
    path: str, parent: IgnoreStack | None
) -> tuple[Iterator[os.DirEntry[str]], IgnoreStack] | None:
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return None
    if parent is None:
        ignores = IgnoreStack.for_root(path)
    elif any(e.name in _IGNORE_NAMES for e in entries):
        ignores = parent.child(path)  # only read ignore files that exist
    else:
        ignores = parent
    return iter(entries), ignores
