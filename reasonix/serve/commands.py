"""The command layer as the browser uses it: ``/`` commands, ``@`` completion and expansion.

The registry (``reasonix.boot.commands.build_commands``) and the reference
helpers (``reasonix.command.refs``) are looked up when first needed, so a
build without them still serves chats: ``/`` lines then get a clear "not
available" answer and ``@`` text goes to the model unchanged.
"""

from __future__ import annotations

import importlib
from typing import Any

from reasonix.command.api import CommandResult, Completion

__all__ = ["Commands", "complete_reference", "expand_references"]


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _refs() -> Any:
    return _module("reasonix.command.refs")


class Commands:
    """The slash-command registry of one live runtime (None inside when not built in)."""

    def __init__(self, runtime: Any) -> None:
        mod = _module("reasonix.boot.commands")
        self.registry: Any = mod.build_commands(runtime) if mod is not None else None

    @property
    def notices(self) -> list[str]:
        """Problems found while loading commands (bad command files …)."""
        return list(getattr(self.registry, "notices", []) or [])

    def is_command(self, line: str) -> bool:
        """A line for the registry: starts with ``/`` (``//`` escapes to text)."""
        if self.registry is not None:
            return bool(self.registry.is_command(line))
        return line.startswith("/") and not line.startswith("//")

    def run(self, line: str) -> CommandResult:
        """Run one command line; never raises for user errors."""
        if self.registry is None:
            return CommandResult(text="slash commands are not available in this build", error=True)
        result: CommandResult = self.registry.run(line)
        return result

    def complete(self, prefix: str) -> list[Completion]:
        """Slash completions with descriptions."""
        if self.registry is None:
            return []
        return list(self.registry.complete(prefix))


def complete_reference(partial: str, runtime: Any) -> list[Completion]:
    """``@`` completions (files of the workspace, MCP resources) for ``partial``."""
    refs = _refs()
    if refs is None:
        return []
    return list(refs.complete_reference(partial, workspace=runtime.workspace))


def expand_references(text: str, runtime: Any) -> tuple[str, list[str]]:
    """The text for the model with ``@`` references read in, and notices (blocking)."""
    refs = _refs()
    if refs is None or "@" not in text:
        return text, []
    forbid = list(getattr(runtime.tool_ctx, "forbid_read", []) or [])
    expanded, notices = refs.expand_references(
        text, workspace=runtime.workspace, forbid_read=forbid
    )
    return str(expanded), [str(n) for n in notices]
