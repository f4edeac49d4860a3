"""The chat view's side of the command layer: slash commands and ``@`` references.

The registry comes from ``reasonix.boot.commands.build_commands(rt)`` and the
references from ``reasonix.command.refs`` (TEAM API). When this build has no
command layer yet, :class:`Commands` keeps ``/exit`` working and says so for
the rest, rather than sending a slash line to the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonix.command.api import CommandResult

__all__ = ["Commands"]


class Commands:
    """Slash commands, autocomplete and ``@`` references for one runtime."""

    def __init__(self, rt: Any, registry: Any = None, notify: Any = None) -> None:
        self.rt = rt
        self.registry = registry if registry is not None else _load_registry(rt, notify)
        self.notices: list[str] = list(getattr(self.registry, "notices", []) or [])

    @property
    def host(self) -> Any:
        """The registry's CommandHost (None without a command layer)."""
        return getattr(self.registry, "host", None)

    def interrupt(self) -> None:
        """Cancel the host calls a running command makes (Esc or Ctrl-C in the view)."""
        fn = getattr(self.host, "interrupt", None)
        if fn is not None:
            fn("cancelled by the user")

    # -- slash commands ------------------------------------------------------------
    def is_command(self, line: str) -> bool:
        """True for a slash command (a leading ``//`` is text)."""
        if self.registry is not None:
            return bool(self.registry.is_command(line))
        return line.startswith("/") and not line.startswith("//")

    def plain(self, line: str) -> str:
        """What to send for a line that is not a command (``//x`` escapes to ``/x``)."""
        stripped = line.lstrip()
        return stripped[1:] if stripped.startswith("//") else line

    def run(self, line: str) -> CommandResult:
        """Run one command line (blocking: call it off the UI thread)."""
        if self.registry is not None:
            result: CommandResult = self.registry.run(line)
            return result
        name = line.split()[0] if line.split() else line
        if name in ("/exit", "/quit"):
            return CommandResult(exit=True)
        return CommandResult(
            text=f"{name}: slash commands are not available in this build", error=True
        )

    def complete(self, prefix: str) -> list[tuple[str, str]]:
        """Slash-command candidates with descriptions."""
        if self.registry is None:
            return [(t, d) for t, d in (("/exit", "leave"),) if t.startswith(prefix)]
        return [(c.text, c.description) for c in self.registry.complete(prefix)]

    # -- @ references ----------------------------------------------------------------
    def complete_ref(self, word: str) -> list[tuple[str, str]]:
        """``@`` candidates for the word being typed (one directory level per step)."""
        refs = _module("reasonix.command.refs")
        if refs is None:
            return []
        resources = self._resources()
        got = refs.complete_reference(word, workspace=Path(self.rt.workspace), resources=resources)
        return [(c.text, c.description) for c in got]

    def expand(self, text: str) -> tuple[str, list[str]]:
        """``text`` with its ``@`` references resolved (blocking: off the UI thread)."""
        if "@" not in text:
            return text, []
        refs = _module("reasonix.command.refs")
        if refs is None:
            return text, []
        forbid = list(getattr(self.rt.tool_ctx, "forbid_read", ()) or ())
        read = getattr(self.host, "read_resource", None) if self.rt.mcp is not None else None
        expanded, notices = refs.expand_references(
            text, workspace=Path(self.rt.workspace), forbid_read=forbid, read_resource=read
        )
        return expanded, list(notices)

    def _resources(self) -> list[Any]:
        fn = getattr(self.host, "mcp_resources", None)
        if fn is None or self.rt.mcp is None:
            return []
        try:
            return list(fn())
        except Exception:  # noqa: BLE001 - a broken server costs its completions only
            return []


def _module(name: str) -> Any:
    """The command layer's module ``name``, or None in a build without it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _load_registry(rt: Any, notify: Any) -> Any:
    boot_commands = _module("reasonix.boot.commands")
    return None if boot_commands is None else boot_commands.build_commands(rt, notify=notify)
