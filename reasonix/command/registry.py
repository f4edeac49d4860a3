"""The slash-command registry every frontend shares (CMD-1…6).

One :class:`CommandRegistry` per runtime holds three kinds of commands, in
this order of precedence when two share a name:

1. **built-ins** (``/help``, ``/new``, ``/clear`` …) — always win; a custom
   file that would shadow one is skipped with a notice;
2. **MCP prompts** ``/mcp__<server>__<prompt>`` (CMD-6) — the ``mcp__``
   prefix is reserved for them, so a command file named ``mcp__….md`` is
   skipped with a notice;
3. **custom commands** from Markdown files: project directories before the
   user's (CMD-2: the project wins), ``.reasonix/commands`` before Claude
   Code's ``.claude/commands`` within one scope. A file in a sub-folder
   (``frontend/component.md``) also answers to its short name ``/component``
   when no explicit name has it (:func:`_short_names`).

Names are given without the leading slash inside the registry; everything a
frontend sees (:meth:`CommandRegistry.names`, :class:`Completion` texts)
carries it. :meth:`CommandRegistry.run` never raises for a user's mistake
and never calls the model: it returns a :class:`CommandResult` telling the
frontend what to do (show text, send a prompt, open a picker, confirm, leave).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.command.api import CommandHost, CommandResult, Completion
from reasonix.errors import ReasonixError
from reasonix.lazy import dataclass

if TYPE_CHECKING:
    from reasonix.command.custom import CommandDir

__all__ = [
    "Command",
    "CommandRegistry",
    "CommandSource",
    "command_dirs",
    "plain_text",
    "split_command",
]

Handler = Callable[[str], CommandResult]  # the argument text -> what to do
ArgCompleter = Callable[[str], list[Completion]]  # the argument text typed so far -> candidates

KIND_ORDER = {"builtin": 0, "project": 1, "user": 2, "mcp": 3, "profile": 4, "skill": 5}
# More commands asked for on every refresh (``/<profile> task`` for sub-agent profiles,
# ``/<skill> args`` for inline skills);
# each source may add notices. They come after the custom command files.
CommandSource = Callable[[list[str]], list["Command"]]


@dataclass(frozen=True)
class Command:
    """One slash command: its name (no slash), what it does and where it came from."""

    name: str
    description: str
    kind: str  # "builtin" | "project" | "user" | "mcp" | "profile" | "skill"
    run: Handler
    argument_hint: str = ""
    source: str = ""  # the file of a custom command, the server of an MCP prompt
    complete_args: ArgCompleter | None = None
    hidden: bool = False  # aliases such as /quit: accepted, not listed

    def label(self) -> str:
        """The one-line description with the argument hint in front (for listings)."""
        if self.argument_hint and self.description:
            return f"{self.argument_hint} — {self.description}"
        return self.argument_hint or self.description


def split_command(line: str) -> tuple[str, str]:
    """``"/git:commit fix it"`` → ``("git:commit", "fix it")`` (the argument text stripped)."""
    body = line.strip()[1:]
    parts = body.split(None, 1)
    if not parts:
        return "", ""
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def plain_text(line: str) -> str:
    """The text to send for a line that is not a command: ``//x`` escapes to ``/x``."""
    stripped = line.lstrip()
    return stripped[1:] if stripped.startswith("//") else line


class CommandRegistry:
    """Built-ins, MCP prompts and custom commands of one runtime (see the module docstring).

    ``custom_dirs`` are the command directories in precedence order (first
    wins, see :func:`command_dirs`); :meth:`refresh` re-reads them and asks
    the host for the MCP prompts again. :attr:`notices` holds what the last
    load skipped. ``builtins`` replaces the standard built-ins (tests).
    """

    def __init__(
        self,
        host: CommandHost,
        builtins: Sequence[Command] | None = None,
        custom_dirs: Sequence[CommandDir] = (),
        sources: Sequence[CommandSource] = (),
    ) -> None:
        from reasonix.command.builtins import builtin_commands

        self.host = host
        self.custom_dirs = list(custom_dirs)
        self.sources = list(sources)
        self.notices: list[str] = []
        if builtins is None:
            builtins = builtin_commands(host, self._fresh_listing)
        self._builtins = {c.name: c for c in builtins}
        self._table: dict[str, Command] = dict(self._builtins)
        self.refresh()

    # -- loading -----------------------------------------------------------------
    def refresh(self) -> None:
        """Re-read the command files and the MCP prompts (bad files become notices)."""
        from reasonix.command import custom, prompts

        table = dict(self._builtins)
        notices: list[str] = []
        for cmd in prompts.prompt_commands(self.host, notices):
            table.setdefault(cmd.name, cmd)
        loaded = custom.load(*self.custom_dirs)
        notices.extend(loaded.notices)
        for found in loaded.commands:
            if found.name in self._builtins:
                notices.append(f"{found.source}: /{found.name} is a built-in command; skipped")
            elif found.name.startswith("mcp__"):
                notices.append(f"{found.source}: mcp__ names are kept for MCP prompts; skipped")
            else:
                table.setdefault(found.name, custom.as_command(found))
        for source in self.sources:
            for cmd in source(notices):
                if cmd.name in table:
                    notices.append(f"/{cmd.name} ({cmd.kind}) is shadowed by another command")
                else:
                    table[cmd.name] = cmd
        _short_names(table, [c.name for c in loaded.commands])
        self._table = table
        self.notices = notices

    def _fresh_listing(self) -> list[Command]:
        self.refresh()  # /help shows files added since start-up too
        return self.commands()

    def commands(self) -> list[Command]:
        """Every listed command: built-ins first, then project, user and MCP, each by name."""
        listed = [c for c in self._table.values() if not c.hidden]
        return sorted(listed, key=lambda c: (KIND_ORDER.get(c.kind, 9), c.name))

    def get(self, name: str) -> Command | None:
        """The command called ``name`` (no slash), or None."""
        return self._table.get(name.lstrip("/"))

    # -- the frontend API (TEAM.md) ------------------------------------------------
    def is_command(self, line: str) -> bool:
        """True for a line that starts with ``/`` (``//`` escapes to text).

        A first word with another ``/`` (``/usr/bin/env is broken``) is a path
        someone typed, not a command, so it is text too.
        """
        stripped = line.lstrip()
        if not stripped.startswith("/") or stripped.startswith("//"):
            return False
        first = stripped[1:].split(None, 1)
        return not first or "/" not in first[0]

    def run(self, line: str) -> CommandResult:
        """Run one command line; user errors come back as ``CommandResult(error=True)``."""
        name, args = split_command(line)
        if not name:
            name = "help"
        if name not in self._builtins:
            # a file added or edited since start-up, or an MCP server that came up late: a
            # command's text is a new message, so the latest one costs no cache
            self.refresh()
        cmd = self.get(name)
        if cmd is None:
            return CommandResult(text=self._unknown(name), error=True)
        try:
            return cmd.run(args)
        except ReasonixError as err:
            return CommandResult(text=f"/{name}: {err}", error=True)
        except OSError as err:
            where = f": {err.filename}" if err.filename else ""
            return CommandResult(text=f"/{name}: {err.strerror or err}{where}", error=True)
        except Exception as err:  # noqa: BLE001 - a command bug must not reach the user as a traceback
            return CommandResult(text=f"/{name} failed: {type(err).__name__}: {err}", error=True)

    def complete(self, prefix: str) -> list[Completion]:
        """Slash autocomplete: command names (with descriptions), then their arguments."""
        stripped = prefix.lstrip()
        if not stripped.startswith("/"):
            return []
        body = stripped[1:]
        if " " not in body:
            hits = [c for c in self.commands() if c.name.startswith(body)]
            if ":" in body:  # /folder:… completes the aliases of sub-folder commands too
                hits += [c for c in self._table.values() if c.hidden and c.name.startswith(body)]
            return [Completion("/" + c.name, c.label()) for c in hits]
        name, _, args = body.partition(" ")
        cmd = self.get(name)
        if cmd is None or cmd.complete_args is None:
            return []
        try:
            found = cmd.complete_args(args.lstrip())
        except (ReasonixError, OSError):
            return []
        return [Completion(f"/{name} {c.text}", c.description) for c in found]

    def names(self) -> list[tuple[str, str]]:
        """``("/name", description)`` of every listed command, in :meth:`commands` order.

        The argument hint is not part of the description here (``get(name)``
        has it); :meth:`complete` shows both.
        """
        return [("/" + c.name, c.description) for c in self.commands()]

    # -- helpers -------------------------------------------------------------------
    def _unknown(self, name: str) -> str:
        import difflib

        close = difflib.get_close_matches(name, list(self._table), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join('/' + c for c in close)}?" if close else ""
        return f"unknown command /{name}{hint} (/help lists the commands; // sends a slash)"


def _short_names(table: dict[str, Command], loaded: list[str]) -> None:
    """Give every command of a sub-folder its short name, as Claude Code does:
    ``frontend/component.md`` (``/frontend:component``) answers to ``/component``, listed
    with its folder as a label, and ``/frontend:component`` stays a hidden alias.

    Every explicit name comes first (built-ins, MCP prompts, files, profiles, skills), then
    the first file of a short name in load order; a file whose short name is taken keeps
    its full name in the listings, so it is still reachable and seen.
    """
    from reasonix.lazy import replace

    for full in loaded:
        folder, colon, short = full.rpartition(":")
        cmd = table.get(full)
        if not colon or cmd is None or cmd.kind not in ("project", "user"):
            continue  # a top-level file, or one skipped (a built-in's name)
        if short in table or short.startswith("mcp__"):
            continue  # the name is someone else's: /folder:name stays listed
        label = folder.replace(":", "/")
        desc = f"{cmd.description} ({label})" if cmd.description else f"({label})"
        table[short] = replace(cmd, name=short, description=desc)
        table[full] = replace(cmd, hidden=True)


def command_dirs(workspace: Path, home: Path, user_home: Path) -> list[CommandDir]:
    """The custom command directories in precedence order (CMD-2: the project wins).

    Project: ``<ws>/.reasonix/commands``, then Claude Code's
    ``<ws>/.claude/commands``; user: ``<home>/commands``, then
    ``~/.claude/commands`` — so a project set up for Claude Code works unchanged.
    """
    from reasonix.command.custom import CommandDir

    return [
        CommandDir(workspace / ".reasonix" / "commands", "project"),
        CommandDir(workspace / ".claude" / "commands", "project"),
        CommandDir(home / "commands", "user"),
        CommandDir(user_home / ".claude" / "commands", "user"),
    ]
