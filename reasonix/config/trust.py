"""Workspace trust: the folders the user has trusted, and how a process learns its answer.

A cloned repository is not the user. What a workspace declares that runs code
or widens reach (hooks, MCP servers, providers at other hosts, allow rules,
wider permission modes, sandbox changes; :mod:`reasonix.config.trust_rules`)
takes effect only once the user trusts the workspace. The answer lives in the
user's home (``<home>/trusted-workspaces.json``), never in the workspace, keyed
by the workspace's real path, so a checkout cannot trust itself and a symlink
to a trusted folder is the trusted folder.

A process is trusted for its workspace when, in this order:

1. the frontend says so for this run (``run --trust``, or the user just
   answered yes to the trust question);
2. ``REASONIX_TRUST_WORKSPACE=1`` is in the environment (CI containers, test
   harnesses);
3. the store lists the workspace's real path.

A store that cannot be read counts as empty: an unreadable answer is "not
trusted", never "trusted" (fail closed).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from reasonix.config import paths
from reasonix.lazy import dataclass, field

__all__ = [
    "TRUST_ENV",
    "TrustItem",
    "WorkspaceTrust",
    "decide",
    "grant",
    "is_trusted",
    "revoke",
    "store_path",
    "trusted_workspaces",
]

TRUST_ENV = "REASONIX_TRUST_WORKSPACE"
_YES = frozenset({"1", "true", "yes", "on"})
_STORE_NAME = "trusted-workspaces.json"
_STORE_LIMIT = 4 * 1024 * 1024  # a store larger than this is not ours


@dataclass(frozen=True)
class TrustItem:
    """One thing a workspace declares that takes effect only with trust."""

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
    """``<home>/trusted-workspaces.json``: the user's answers, never in a workspace."""
    return paths.home_dir() / _STORE_NAME


def _key(workspace: Path | str) -> str:
    return os.path.realpath(os.fspath(workspace))


def _read() -> dict[str, dict[str, object]]:
    """The store's entries; an absent, unreadable or malformed store is empty."""
    try:
        with open(store_path(), "rb") as fh:
            raw = fh.read(_STORE_LIMIT + 1)
    except OSError:
        return {}
    if len(raw) > _STORE_LIMIT:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    entries = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return {}
    return {k: v if isinstance(v, dict) else {} for k, v in entries.items() if isinstance(k, str)}


def _write(entries: dict[str, dict[str, object]]) -> None:
    from reasonix.config.atomic import write_atomic

    text = json.dumps({"version": 1, "workspaces": entries}, indent=2, sort_keys=True)
    write_atomic(store_path(), text + "\n", mode=0o600)


def is_trusted(workspace: Path | str) -> bool:
    """True when the store lists ``workspace``'s real path."""
    return _key(workspace) in _read()


def trusted_workspaces() -> list[tuple[str, str]]:
    """``(real path, when)`` for every trusted workspace, sorted by path."""
    return sorted((k, str(v.get("trusted_at", ""))) for k, v in _read().items())


def grant(workspace: Path | str) -> str:
    """Record that the user trusts ``workspace``; returns the real path recorded."""
    key = _key(workspace)
    entries = _read()
    entries[key] = {"trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _write(entries)
    return key


def revoke(workspace: Path | str) -> bool:
    """Forget the trust in ``workspace``; False when it was not trusted."""
    key = _key(workspace)
    entries = _read()
    if key not in entries:
        return False
    del entries[key]
    _write(entries)
    return True


def env_trusts() -> bool:
    """True when ``REASONIX_TRUST_WORKSPACE`` says yes for this process."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in _YES


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
