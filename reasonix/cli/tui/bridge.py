"""The chat view's side of the command layer: slash commands and ``@`` references.

The registry comes from ``reasonix.boot.commands.build_commands(rt)`` and the
references from ``reasonix.command.refs`` (TEAM API), the same ones the line
chat uses, so every command behaves alike in both. Blocking calls (running a
command, resolving references) are the app's to put on a background thread;
completion reads at most one directory level and runs on the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.command.api import CommandResult

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Commands"]


class Commands:
    """Slash commands, autocomplete and ``@`` references for one runtime.

    ``registry`` is for tests (an object of the registry's shape); by default
    it is built over ``rt`` with ``notify`` showing lines while a command runs.
    """

    def __init__(self, rt: Any, registry: Any = None, notify: Any = None) -> None:
        self.rt = rt
        if registry is None:
            from reasonix.boot.commands import build_commands

            registry = build_commands(rt, notify=notify)
        self.registry = registry
        self.notices: list[str] = list(getattr(registry, "notices", []) or [])
        self.resources: list[Any] = []  # MCP resources for @ completion (refresh_resources)

    @property
    def host(self) -> Any:
        """The registry's CommandHost."""
        return getattr(self.registry, "host", None)

    def interrupt(self) -> None:
        """Cancel the host calls a running command makes (Esc or Ctrl-C in the view)."""
        fn = getattr(self.host, "interrupt", None)
        if fn is not None:
            fn("cancelled by the user")

    # -- slash commands ------------------------------------------------------------
    def is_command(self, line: str) -> bool:
        """True for a slash command (a leading ``//`` or a path like ``/usr/bin`` is text)."""
        return bool(self.registry.is_command(line))

    def plain(self, line: str) -> str:
        """What to send for a line that is not a command (``//x`` escapes to ``/x``)."""
        stripped = line.lstrip()
        return stripped[1:] if stripped.startswith("//") else line

    def run(self, line: str) -> CommandResult:
        """Run one command line (blocking: call it off the UI thread)."""
        result: CommandResult = self.registry.run(line)
        return result

    def complete(self, prefix: str) -> list[tuple[str, str]]:
        """Slash candidates with descriptions: names, then arguments after a space."""
        return [(c.text, c.description) for c in self.registry.complete(prefix)]

    # -- @ references ----------------------------------------------------------------
    def complete_ref(self, word: str) -> list[tuple[str, str]]:
        """``@`` candidates for the word being typed (one directory level per step)."""
        from reasonix.command.refs import complete_reference

        got = complete_reference(
            word,
            workspace=self.rt.workspace,
            resources=self.resources,
            forbid_read=self.rt.tool_ctx.forbid_read,
        )
        return [(c.text, c.description) for c in got]

    def expand(self, text: str) -> tuple[str, list[str]]:
        """``text`` with its ``@`` references resolved (blocking: off the UI thread)."""
        if "@" not in text:
            return text, []
        from reasonix.command.refs import expand_references

        read = getattr(self.host, "read_resource", None) if self.rt.mcp is not None else None
        expanded, notices = expand_references(
            text,
            workspace=self.rt.workspace,
            forbid_read=self.rt.tool_ctx.forbid_read,
            read_resource=read,
        )
        return expanded, list(notices)

    def refresh_resources(self) -> None:
        """Ask the MCP servers for their resources again (blocking: off the UI thread), so
        ``@`` completion never waits for a server."""
        fn = getattr(self.host, "mcp_resources", None)
        if fn is None or self.rt.mcp is None:
            return
        try:
            self.resources = list(fn())
        except Exception:  # noqa: BLE001 - a broken server costs its completions only
            return
