"""Workspace trust: what a process learns about its workspace, and what trust covers.

A cloned repository is not the user. What a workspace declares that runs code
or widens reach (hooks, MCP servers, providers at other hosts, allow rules,
wider permission modes, sandbox changes; :mod:`reasonix.config.trust_rules`)
takes effect only once the user trusts the workspace. The user's answers live
in their home (:mod:`reasonix.config.trust_store`), never in the workspace,
keyed by the workspace's real path, so a checkout cannot trust itself and a
symlink to a trusted folder is the trusted folder.

A process is trusted for its workspace when, in this order:

1. the frontend says so for this run (``run --trust``, or the user just
   answered yes to the trust question);
2. ``REASONIX_TRUST_WORKSPACE=1`` is in the environment (CI containers, test
   harnesses);
3. the store lists the workspace's real path.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from reasonix.config.trust_store import (
    TRUST_ENV,
    env_trusts,
    grant,
    is_trusted,
    revoke,
    store_file,
    trusted_workspaces,
)
from reasonix.lazy import dataclass, field

__all__ = [
    "TRUST_ENV",
    "TrustItem",
    "WorkspaceTrust",
    "decide",
    "env_trusts",
    "grant",
    "is_trusted",
    "revoke",
    "store_path",
    "trusted_workspaces",
]


class TrustItem(NamedTuple):
    """One thing a workspace declares that takes effect only with trust (an immutable
    record, a :class:`typing.NamedTuple`: loading config defines it before every first
    request)."""

    kind: str  # "hook" | "mcp" | "provider" | "permissions" | "sandbox" | "serve"
    text: str  # what it is and what it would do, one line
    file: str  # the file that declares it

    def line(self) -> str:
        """``text (file)`` for prompts and warnings."""
        return f"{self.text} ({self.file})"


@dataclass
class WorkspaceTrust:
    """One process's trust answer for its workspace, and what it covers."""

    trusted: bool = False
    how: str = ""  # "flag" | "env" | "store" | "" (not trusted)
    items: list[TrustItem] = field(default_factory=list)

    @property
    def skipped(self) -> list[TrustItem]:
        """The items left out of this process (all of them when not trusted)."""
        return [] if self.trusted else list(self.items)

    def warnings(self, workspace: Path) -> list[str]:
        """One warning per skipped item, then how to trust the workspace."""
        if not self.skipped:
            return []
        out = [f"untrusted workspace: skipped {item.line()}" for item in self.skipped]
        out.append(
            f"{workspace} is not trusted, so what it declares above was left out; "
            "if you trust this checkout, run `reasonix trust` in it (or pass --trust "
            f"for one run, or set {TRUST_ENV}=1)"
        )
        return out


def store_path() -> Path:
    """``<home>/trusted-workspaces``: the user's answers, never in a workspace."""
    return Path(store_file())


def decide(workspace: Path | str, flag: bool | None = None) -> tuple[bool, str]:
    """``(trusted, how)`` for ``workspace``: the run's flag, then the environment, then the store.

    ``flag`` False means "not trusted, whatever the store says" (a frontend
    whose user declined); None means "no answer from the frontend".
    """
    if flag is not None:
        return flag, "flag" if flag else ""
    if env_trusts():
        return True, "env"
    if is_trusted(workspace):
        return True, "store"
    return False, ""
