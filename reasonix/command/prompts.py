"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> ARGS`` (CMD-6).

The prompt's declared arguments are filled from the argument text: a word
``name=value`` sets that argument; the other words fill the remaining
arguments in their declared order, and when only one argument is left it
takes all of them (so ``/mcp__gh__review fix the login bug`` works for a
prompt with one ``topic`` argument). The rendered ``prompts/get`` text is
sent as the user turn, exactly like typed input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reasonix.command.api import CommandHost, CommandResult
from reasonix.command.args import split_args
from reasonix.command.registry import Command
from reasonix.errors import ReasonixError, UsageError
from reasonix.lazy import Pattern

if TYPE_CHECKING:
    from typing import Any

__all__ = ["argument_hint", "command_name", "map_arguments", "prompt_commands"]

_UNSAFE = Pattern(r"[^A-Za-z0-9_-]")


def command_name(server: str, prompt: str) -> str:
    """``mcp__<server>__<prompt>``, other characters as ``_`` (the same rule as MCP tool ids)."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', prompt)}"


def _declared(arguments: Any) -> list[tuple[str, bool, str]]:
    """(name, required, description) of each well-formed declared argument."""
    out: list[tuple[str, bool, str]] = []
    for a in arguments if isinstance(arguments, list) else []:
        if isinstance(a, Mapping) and isinstance(a.get("name"), str) and a["name"]:
            out.append((a["name"], bool(a.get("required")), str(a.get("description") or "")))
    return out


def argument_hint(arguments: Any) -> str:
    """``<topic> [level]``: required arguments in angle brackets, optional in square ones."""
    return " ".join(f"<{n}>" if req else f"[{n}]" for n, req, _ in _declared(arguments))


def map_arguments(arguments: Any, text: str, command: str = "") -> dict[str, str]:
    """The ``prompts/get`` arguments for the typed ``text``; a UsageError when they do not fit."""
    declared = _declared(arguments)
    names = [n for n, _, _ in declared]
    usage = f"usage: /{command} {argument_hint(arguments)}".rstrip()
    out: dict[str, str] = {}
    loose: list[str] = []
    for word in split_args(text):
        key, eq, value = word.partition("=")
        if eq and key in names:
            out[key] = value
        else:
            loose.append(word)
    free = [n for n in names if n not in out]
    if loose:
        if not free:
            raise UsageError(f"too many arguments ({' '.join(loose)}); {usage}")
        if len(free) == 1:
            out[free[0]] = " ".join(loose)
        else:
            if len(loose) > len(free):
                loose[len(free) - 1 :] = [" ".join(loose[len(free) - 1 :])]
            out.update(zip(free, loose, strict=False))  # fewer words: the rest stay unset
    missing = [n for n, req, _ in declared if req and not out.get(n)]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}; {usage}")
    return out


def _command(host: CommandHost, info: Mapping[str, Any]) -> Command:
    server, prompt = str(info.get("server", "")), str(info.get("name", ""))
    name = str(info.get("command") or command_name(server, prompt))
    arguments = info.get("arguments") or []

    def run(text: str) -> CommandResult:
        values = map_arguments(arguments, text, name)
        rendered = host.mcp_prompt(server, prompt, values)
        if not rendered.strip():
            return CommandResult(text=f"/{name}: the prompt came back empty", error=True)
        return CommandResult(prompt=rendered)

    description = str(info.get("description") or "") or f"MCP prompt {prompt} of {server}"
    return Command(
        name=name,
        description=description,
        kind="mcp",
        run=run,
        argument_hint=argument_hint(arguments),
        source=server,
    )


def prompt_commands(host: CommandHost, notices: list[str]) -> Sequence[Command]:
    """One command per prompt of every ready MCP server (a failure becomes a notice)."""
    try:
        infos = host.mcp_prompts()
    except ReasonixError as err:
        notices.append(f"MCP prompts are unavailable: {err}")
        return []
    return [_command(host, info) for info in infos if info.get("name")]
