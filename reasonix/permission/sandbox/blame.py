"""Did the sandbox cause this failure? (spec §9: the escape prompt).

A sandboxed command that failed is blamed on the sandbox only on evidence in
its output: "Read-only file system" or "Permission denied" naming a path that
lies outside the writable roots *and* that the user could write outside the
jail; "No such file or directory" for a path under ``/tmp`` that exists on
the host (the jail's ``/tmp`` is private); a name-resolution or connection
failure while the network is off; or bubblewrap itself refusing to set up.
Anything else is an ordinary failure, and the model gets no offer to leave
the sandbox.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from reasonix.lazy import Pattern, dataclass

__all__ = ["Blame", "sandbox_blame"]

_FS_ERRORS = ("Read-only file system", "Permission denied", "Operation not permitted")
_MISSING = "No such file or directory"
# Quoted (ASCII or typographic quotes) or bare path-looking words on an error line.
_QUOTED = Pattern(r"'([^']+)'|‘([^’]+)’|\"([^\"]+)\"|`([^`']+)'")
_BARE = Pattern(r"(?:^|[\s(=])((?:/|~/|\.{1,2}/)[^\s:'\"‘’`,;)]+)")
_NET_ERRORS = Pattern(
    r"Could not resolve host|Temporary failure in name resolution|Name or service not known"
    r"|No address associated with hostname|Network is unreachable|getaddrinfo"
    r"|Failed to establish a new connection|Could not resolve|unable to access '[^']*https?:",
    re.IGNORECASE,
)
_VIRTUAL = ("/dev", "/proc", "/sys")  # the jail's own mounts: never a write root to ask for


@dataclass(frozen=True)
class Blame:
    """Why the sandbox is the likely cause; ``path`` is the refused path, when there is one."""

    reason: str
    path: str = ""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _candidates(line: str) -> list[str]:
    found = ["".join(groups) for groups in _QUOTED.findall(line)]
    found += _BARE.findall(line)
    return [c for c in found if c.strip()]


def _writable_outside(path: str) -> bool:
    """Could the user write ``path`` without the jail? (nearest existing ancestor)"""
    probe = path
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return False
        probe = parent
    return os.access(probe, os.W_OK)


def _hidden_in_tmp(path: str) -> bool:
    """``path`` (or its nearest existing ancestor) is below the host's ``/tmp``."""
    if not _inside(path, "/tmp"):
        return False
    probe = path
    while not os.path.lexists(probe):
        probe = os.path.dirname(probe)
    return probe != "/tmp" and _inside(probe, "/tmp")


def _paths(line: str, roots: Sequence[str], cwd: Path) -> list[str]:
    """Real paths named on ``line`` that lie outside every root and the jail's own mounts."""
    out = []
    for raw in _candidates(line):
        full = os.path.realpath(os.path.join(cwd, os.path.expanduser(raw.strip())))
        if not any(_inside(full, v) for v in _VIRTUAL) and not any(_inside(full, r) for r in roots):
            out.append(full)
    return out


def sandbox_blame(
    output: str, *, roots: Sequence[str | os.PathLike[str]], cwd: Path, network: bool
) -> Blame | None:
    """The sandbox's part in a failed command's ``output``, or None when it had none.

    ``roots`` are the directories the jail made writable; ``cwd`` resolves
    relative paths in messages; ``network`` is False when the jail had none.
    """
    real_roots = [os.path.realpath(os.fspath(r)) for r in roots]
    for line in output.splitlines():
        if line.startswith("bwrap: "):
            return Blame(f"bubblewrap could not set up the sandbox ({line[7:].strip()})")
        if any(marker in line for marker in _FS_ERRORS):
            for path in _paths(line, real_roots, cwd):
                if not _inside(path, "/tmp") and _writable_outside(path):
                    return Blame(f"{path} is outside the sandbox's writable roots", path)
        if _MISSING in line:
            for path in _paths(line, real_roots, cwd):
                # The host's /tmp is hidden behind a private tmpfs; a path that exists
                # there on the host is simply not visible inside the jail.
                if _hidden_in_tmp(path):
                    return Blame(f"{path} is outside the sandbox (its /tmp is private)", path)
    if not network:
        match = _NET_ERRORS.search(output)
        if match:
            return Blame(
                "the sandbox has no network ([sandbox] network = false) and the command "
                f"failed to connect ({match.group(0)})"
            )
    return None
