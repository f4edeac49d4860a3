"""The command layer as the browser uses it: ``/`` commands, ``@`` completion and expansion.

The same registry as the terminal (``reasonix.boot.commands.build_commands``)
and the same reference resolver (``reasonix.command.refs``), over the
session's live runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.command.api import CommandResult, Completion

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Commands"]


class Commands:
    """The slash commands and ``@`` references of one live runtime.

    ``notify`` shows a line to every tab while a command still runs (the URL
    of ``/mcp auth``).
    """

    def __init__(self, runtime: Any, notify: Callable[[str], None]) -> None:
        from reasonix.boot.commands import build_commands

        self.runtime = runtime
        self.registry = build_commands(runtime, notify=notify)

    @property
    def notices(self) -> list[str]:
        """Problems found while loading commands (bad command files …)."""
        return list(self.registry.notices)

    def is_command(self, line: str) -> bool:
        """A line for the registry: ``/name …`` (``//`` and ``/a/path`` are text)."""
        return bool(self.registry.is_command(line))

    def run(self, line: str) -> CommandResult:
        """Run one command line; never raises for user errors."""
        return self.registry.run(line)

    def interrupt(self) -> None:
        """Cancel a long command (``/compact``, ``/mcp auth``): the stop button."""
        interrupt = getattr(self.registry.host, "interrupt", None)  # RuntimeCommandHost has it
        if interrupt is not None:
            interrupt("stopped from the browser")

    def complete(self, text: str) -> list[Completion]:
        """Completions for the composer: ``@`` for the word being typed, else ``/``."""
        from reasonix.command.refs import complete_reference

        words = text.split()
        word = words[-1] if words and not text[-1:].isspace() else ""
        if word.startswith("@"):
            resources = self.registry.host.mcp_resources() if self.runtime.mcp else []
            return complete_reference(
                word,
                workspace=self.runtime.workspace,
                resources=resources,
                forbid_read=self.runtime.tool_ctx.forbid_read,
            )
        if text.lstrip().startswith("/"):
            return list(self.registry.complete(text))
        return []

    def expand(self, text: str) -> tuple[str, list[str]]:
        """The text for the model with ``@`` references read in, and notices (blocking)."""
        from reasonix.command.refs import expand_references

        if "@" not in text:
            return text, []
        rt = self.runtime
        return expand_references(
            text,
            workspace=rt.workspace,
            forbid_read=rt.tool_ctx.forbid_read,
            read_resource=self.registry.host.read_resource if rt.mcp is not None else None,
        )


def plain_text(line: str) -> str:
    """The text to send for a line that is not a command (``//x`` -> ``/x``)."""
    from reasonix.command.registry import plain_text as unescape

    return unescape(line)
