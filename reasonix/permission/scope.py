"""Expanding the write scope at run time (CFG-13, CFG-14).

File tools ask for the target's parent directory; bash must name its
``additional_write_dirs`` and a ``justification``. The user answers once /
this session / persist into the project ``reasonix.toml`` (``persist`` callback,
which the caller points at ``[sandbox].allow_write``) / deny. Headless runs fail
closed and name ``--add-dir``. The file-system root and the Reasonix state
directories can never be granted; the home directory only with a warning.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterable

from reasonix.lazy import dataclass

__all__ = ["ScopeChoice", "ScopeGate", "ScopeOutcome", "ScopeRequest"]


class ScopeChoice(enum.Enum):
    """The answer to a write-scope request."""

    ONCE = "once"
    SESSION = "session"
    PROJECT = "project"
    DENY = "deny"


@dataclass(frozen=True)
class ScopeRequest:
    """What the frontend shows: the directory, why it is needed, and any strong warning."""

    path: str
    justification: str
    warning: str = ""
    choices: tuple[ScopeChoice, ...] = tuple(ScopeChoice)


@dataclass(frozen=True)
class ScopeOutcome:
    """``allowed`` with the normalised directory, or a model-readable refusal."""

    allowed: bool
    message: str
    path: str = ""


def _norm(path: str) -> str:
    # Symlink-free absolute paths (CFG-10): a link inside a root must not smuggle in a target.
    return os.path.realpath(os.path.expanduser(path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class ScopeGate:
    """Tracks the writable roots of a session and answers requests to extend them.

    ``roots`` and ``protected`` are kept as symlink-free absolute paths; ``home`` (the
    user's home directory unless given) draws a warning when a grant would contain it.
    """

    def __init__(
        self,
        roots: list[str],
        protected: list[str] | None = None,
        approver: Callable[[ScopeRequest], ScopeChoice] | None = None,
        persist: Callable[[str], None] | None = None,
        home: str | None = None,
    ) -> None:
        self.roots = [_norm(r) for r in roots]
        self.protected = [_norm(p) for p in protected or ()]
        self.approver = approver
        self.persist = persist
        self.home = os.path.expanduser("~") if home is None else home

    def within(self, path: str) -> bool:
        """True when ``path`` is already inside a writable root."""
        try:
            p = _norm(path)
        except ValueError:  # a NUL byte: no such directory
            return False
        return any(_inside(p, r) for r in self.roots)

    def request(self, path: str, justification: str) -> ScopeOutcome:
        """Ask to make the directory ``path`` writable."""
        try:
            p = _norm(path)
        except ValueError:
            return ScopeOutcome(False, f"denied: {path!r} is not a valid path")
        if any(_inside(p, r) for r in self.roots):
            return ScopeOutcome(True, "already writable", p)
        if p == os.sep or os.path.dirname(p) == p:
            return ScopeOutcome(False, "denied: the file-system root can never be a write root")
        if any(_inside(p, s) for s in self.protected):
            return ScopeOutcome(
                False, f"denied: {p} holds Reasonix sessions/state and can never be made writable"
            )
        if not justification.strip():
            return ScopeOutcome(False, "denied: a write-scope request needs a justification")
        if self.approver is None:
            import shlex  # only for this message

            return ScopeOutcome(
                False,
                f"denied: {p} is outside the writable roots; rerun with --add-dir "
                f"{shlex.quote(p)} or add it to [sandbox].allow_write",
            )
        warning = ""
        home = _norm(self.home)
        if _inside(home, p):
            warning = (
                f"WARNING: {p} contains your whole home directory; every file there "
                "(shell profiles, keys, other projects) becomes writable"
            )
        choice = self.approver(ScopeRequest(p, justification, warning))
        if choice is ScopeChoice.DENY or choice not in tuple(ScopeChoice):
            return ScopeOutcome(False, f"denied: the user declined write access to {p}")
        if choice is not ScopeChoice.ONCE:
            self.add(p)
        if choice is ScopeChoice.PROJECT and self.persist is not None:
            self.persist(p)
        return ScopeOutcome(True, f"write access granted ({choice.value}): {p}", p)

    def add(self, path: str) -> None:
        """Add a root (``--add-dir``, a session grant)."""
        p = _norm(path)
        if p not in self.roots:
            self.roots.append(p)

    def extend(self, paths: Iterable[str]) -> None:
        """Add several roots."""
        for p in paths:
            self.add(p)
