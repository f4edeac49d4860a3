"""Slash commands over ACP: advertised with ``available_commands_update``, run from prompts.

The command layer (``reasonix.boot.commands.build_commands``) owns the
commands: built-ins, custom commands and MCP prompts. An editor manages its
own sessions and windows, so the built-ins that would fight it (``/exit``,
``/new``, ``/clear``, ``/resume``) are neither advertised nor run here. A
command never reaches the model by itself; a result with a ``prompt`` (a
custom command or an MCP prompt) is sent as the user turn.

A build without the command layer advertises no command and treats a ``/``
line as an ordinary prompt.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from reasonix.command.api import CommandResult

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "EDITOR_OWNED",
    "CommandRegistryLike",
    "advertised",
    "editor_owned",
    "interrupt",
    "load_registry",
    "render",
]

EDITOR_OWNED = frozenset({"exit", "quit", "new", "clear", "resume"})


class CommandRegistryLike(Protocol):
    """What this frontend uses of the command registry (TEAM.md API)."""

    notices: list[str]

    def is_command(self, line: str) -> bool:
        """True when ``line`` is a command ("/" but not an escaped "//")."""
        ...

    def run(self, line: str) -> CommandResult:
        """Run one command line; never raises for user errors."""
        ...

    def names(self) -> list[tuple[str, str]]:
        """(name, description) of every command."""
        ...


def load_registry(rt: Any, notify: Callable[[str], None]) -> CommandRegistryLike | None:
    """The runtime's command registry, or None while the command layer is absent.

    ``notify`` shows a line while a command still runs (``/mcp auth``'s URL).
    """
    try:
        module = importlib.import_module("reasonix.boot.commands")
    except ImportError:
        return None
    try:
        registry: CommandRegistryLike = module.build_commands(rt, notify=notify)
    except TypeError:  # a command layer without the notify hook
        registry = module.build_commands(rt)
    return registry


def interrupt(registry: CommandRegistryLike | None) -> None:
    """Cancel a long command (``/compact``, MCP prompts) the registry's host is running."""
    stop = getattr(getattr(registry, "host", None), "interrupt", None)
    if callable(stop):
        stop()


def _bare(name: str) -> str:
    return name.lstrip("/")


def advertised(registry: CommandRegistryLike | None) -> list[dict[str, Any]]:
    """The ``availableCommands`` list (names without the slash, as the protocol shows)."""
    if registry is None:
        return []
    out = []
    for name, description in registry.names():
        bare = _bare(name)
        if bare and bare.split(":")[0] not in EDITOR_OWNED:
            out.append({"name": bare, "description": description or bare})
    return out


def editor_owned(line: str) -> bool:
    """True for a command line the editor handles itself (``/new`` …)."""
    word = line.strip().split(maxsplit=1)[0] if line.strip() else ""
    return _bare(word) in EDITOR_OWNED


def render(result: CommandResult) -> str:
    """The text a command result shows in the editor (pickers become a list)."""
    parts = [result.text] if result.text else []
    if result.picker:
        title = result.picker_title or "choose one"
        rows = [f"- {item.label}: `{result.picker_command} {item.value}`" for item in result.picker]
        parts.append(f"{title}:\n" + "\n".join(rows))
    if result.confirm:
        parts.append(f"{result.confirm} — send `{result.confirm_command}` to confirm")
    return "\n\n".join(parts) or "(done)"
