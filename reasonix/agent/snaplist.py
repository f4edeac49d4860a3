"""A workspace's files listed without ``git ls-files``, where no rule could leave one out.

Before its first tree, the shadow repository has no index, and
``git ls-files -z --others --exclude-standard`` lists every file and symlink
of the work tree that no ignore rule excludes. When there are no such rules
(no ``.gitignore`` anywhere, no global excludes file, only the shadow
repository's own ``info/exclude``), that list is simply every file and
symlink, which a walk gives without starting git (a process per snapshot:
two or three per turn that writes).

:func:`list_plain` returns None, leaving the listing to git, whenever its
answer could differ from git's: a ``.gitignore`` or a global excludes file,
a nested repository (a directory holding ``.git``, which git lists as
``dir/``), a special file, a directory ``info/exclude`` names (the state
directory inside the workspace, ``.reasonix-checkpoints``), an unreadable
directory, more than ``limit`` names, or a system other than Linux (where
git may fold the case or the Unicode form of names).
``tests/agent/test_snaplist.py`` holds it to git's answer on generated trees.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["global_excludes", "list_plain"]

_CHECKPOINTS_DIR = b".reasonix-checkpoints"  # excluded at any depth by info/exclude


def global_excludes(env: Mapping[str, str]) -> Path | None:
    """The excludes file git reads by default (``core.excludesFile`` unset)."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg:
        return Path(xdg) / "git" / "ignore"
    home = env.get("HOME", "")
    return Path(home) / ".config" / "git" / "ignore" if home else None


def list_plain(
    workspace: Path,
    excluded: Iterable[str],
    limit: int,
    env: Mapping[str, str] | None = None,
) -> bytes | None:
    """``ls-files -z --others --exclude-standard`` of ``workspace`` (names in any order),
    or None when git must list (see the module docstring). ``excluded``: the work-tree
    relative directories ``info/exclude`` anchors at the root."""
    if sys.platform != "linux":
        return None
    found = global_excludes(os.environ if env is None else env)
    if found is not None and os.path.lexists(found):
        return None
    skip = {os.fsencode(p.strip("/")) for p in excluded}
    base = os.fsencode(workspace)
    names: list[bytes] = []
    todo = [b""]
    while todo:
        rel = todo.pop()
        try:
            listing = os.scandir(base + b"/" + rel if rel else base)
        except OSError:
            return None  # unreadable: git's warning and answer are its own
        with listing:
            for entry in listing:
                name = entry.name
                if name == b".git":
                    if rel:
                        return None  # a nested repository
                    continue  # the project's own repository: never listed
                if name == b".gitignore":
                    return None
                path = rel + b"/" + name if rel else name
                try:
                    if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                        names.append(path)
                    elif entry.is_dir(follow_symlinks=False):
                        if name == _CHECKPOINTS_DIR or path in skip:
                            return None
                        todo.append(path)
                    else:
                        return None  # a socket, a FIFO, a device
                except OSError:
                    return None
                if len(names) > limit:
                    return None
    return b"\0".join(names)
