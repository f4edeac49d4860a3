"""The built-in slash commands (CMD-1): they act on the runtime through the host only.

None of them sends anything to the model as a user turn. ``/compact`` is the
one that may make a provider request: the summary call that compaction is.
``/clear`` asks first (``CommandResult.confirm``); ``/model`` and ``/resume``
without an argument open a picker; ``/exit`` asks the frontend to leave.
The planning triggers (``/plan`` …, :mod:`reasonix.command.planning`) are the
exception: they hand their own line back as the turn, which the host routes.

Each command is one small function ``(context, argument text) -> CommandResult``
and one row of :data:`BUILTINS` (its name, help text, argument hint and
completer); :func:`builtin_commands` binds the rows to a host.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from reasonix.command.api import CommandHost, CommandResult, Completion, PickerItem
from reasonix.command.planning import planning_commands
from reasonix.command.registry import Command
from reasonix.errors import UsageError

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BUILTINS",
    "EFFORT_LEVELS",
    "LEAVING",
    "MEMORY_ACTIONS",
    "Builtin",
    "builtin_commands",
    "format_status",
]

# Reasoning-effort hints the providers understand; "default" clears the hint.
EFFORT_LEVELS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_EFFORT_CLEAR = ("default", "off", "unset")
MEMORY_ACTIONS = (
    "list",
    "search",
    "show",
    "revisions",
    "restore",
    "archived",
    "recover",
    "forget",
    "recall",
    "instructions",
)
MCP_TOGGLES = ("disable", "enable")  # /mcp disable|enable NAME (for this process)
CLEAR_CONFIRM = "/clear --yes"
REWIND_MODES = (
    ("both", "code and conversation", "files back and the conversation from before that turn"),
    ("code", "code only", "the files the agent changed go back; the conversation stays"),
    ("conversation", "conversation only", "continue from before that turn; files stay"),
    ("fork", "fork from here", "continue in a copy from before that turn; files stay"),
)


def _n(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, (int, float)) else "?"


def format_status(s: dict[str, Any]) -> str:
    """The ``/status`` text from :meth:`CommandHost.status`."""
    effort = f" (effort {s['effort']})" if s.get("effort") else ""
    title = f"  {s['title']}" if s.get("title") else ""
    ratio = s.get("cache_hit_ratio")
    cache = f"cache hit {ratio:.0%}" if isinstance(ratio, (int, float)) else "cache hit n/a"
    rows = [
        ("model", f"{s.get('model', '?')}{effort}"),
        ("mode", str(s.get("mode", "?"))),
        ("session", f"{s.get('session_id', '?')}{title}"),
        (
            "tokens",
            f"{_n(s.get('requests', 0))} requests · {_n(s.get('input_tokens', 0))} in / "
            f"{_n(s.get('output_tokens', 0))} out · {cache}",
        ),
        ("cost", str(s.get("cost") or "unknown (no price for this model)")),
    ]
    if s.get("budget"):  # a run budget is set (issue 36): what is left of it
        rows.append(("budget", str(s["budget"]).removeprefix("budget ")))
    window = s.get("context_window") or 0
    used = s.get("context_used") or 0
    share = f" ({used / window:.0%})" if window else ""
    context = f"{_n(used)} / {_n(window)} tokens{share}"
    if s.get("compact_at"):
        context += f"; compaction at {_n(s['compact_at'])}"
    rows.append(("context", context))
    return "\n".join(f"{k:<8} {v}" for k, v in rows)


def _mcp_table(servers: Sequence[dict[str, Any]]) -> str:
    if not servers:
        return "no MCP servers configured (add one with `reasonix mcp add`; see docs/MCP.md)"
    width = max(len(str(s.get("name", ""))) for s in servers)
    rows = ["MCP servers:"]
    for s in servers:
        counts = (
            f"{s.get('tools', 0)} tools · {s.get('prompts', 0)} prompts · "
            f"{s.get('resources', 0)} resources"
        )
        line = f"  {s.get('name', ''):<{width}}  {s.get('state', '?'):<8} {s.get('type', '')}"
        line += f"  {counts}" if s.get("state") == "ready" else ""
        if s.get("error"):
            line += f"\n    {s['error']}"
        rows.append(line)
    rows.append(
        "/mcp auth NAME authorises an OAuth server; /mcp disable|enable NAME stops or "
        "restores one; prompts run as /mcp__<server>__<prompt>"
    )
    return "\n".join(rows)


def _confirmed(args: str) -> tuple[str, bool]:
    """``ARGS --yes`` (a confirmed cache break) -> (ARGS, True)."""
    if args == "--yes" or args.endswith(" --yes"):
        return args[: -len("--yes")].strip(), True
    return args, False


def _words(options: Sequence[str], typed: str) -> list[Completion]:
    return [Completion(o) for o in options if o.startswith(typed)]


@dataclass
class _Context:
    """What a built-in acts on: the host, the full command listing (for ``/help``)
    and what a completer keeps between keystrokes."""

    host: CommandHost
    listing: Callable[[], Sequence[Command]] | None = None
    servers: list[str] = field(default_factory=list)  # MCP names, read once


Run = Callable[[_Context, str], CommandResult]
Complete = Callable[[_Context, str], list[Completion]]


def _help(ctx: _Context, args: str) -> CommandResult:
    every = list(ctx.listing()) if ctx.listing is not None else []
    if args:
        wanted = args.lstrip("/")
        for c in every:
            if c.name == wanted:
                where = f"\n  from {c.source}" if c.source else ""
                hint = f" {c.argument_hint}" if c.argument_hint else ""
                return CommandResult(text=f"/{c.name}{hint}\n  {c.description}{where}")
        return CommandResult(text=f"no command /{wanted}", error=True)
    width = max((len(c.name) for c in every), default=8) + 1
    groups = [
        ("commands", "builtin"),
        ("project commands", "project"),
        ("your commands", "user"),
        ("MCP prompts", "mcp"),
        ("sub-agents", "profile"),
        ("skills", "skill"),
    ]
    out: list[str] = []
    for title, kind in groups:
        rows = [f"  /{c.name:<{width}} {c.label()}" for c in every if c.kind == kind]
        if rows:
            out += [f"{title}:", *rows]
    out.append("// at the start sends a line that begins with a slash; @path attaches a file.")
    return CommandResult(text="\n".join(out))


def _new(ctx: _Context, args: str) -> CommandResult:
    sid = ctx.host.new_session()
    return CommandResult(text=f"new session {sid} (the previous one stays on disk)")


def _clear(ctx: _Context, args: str) -> CommandResult:
    if args == "--yes":
        return CommandResult(text=f"cleared; new session {ctx.host.clear()} (memory is kept)")
    if args:
        raise UsageError("usage: /clear (asks first)")
    forecast = ctx.host.cache_break("clear")
    note = f" ({forecast})" if forecast else ""
    question = "Discard this conversation? It will not be saved; remembered facts stay"
    return CommandResult(confirm=f"{question}{note}.", confirm_command=CLEAR_CONFIRM)


def _compact(ctx: _Context, args: str) -> CommandResult:
    return CommandResult(text=ctx.host.compact(args))


def _effort(ctx: _Context, args: str) -> CommandResult:
    args, sure = _confirmed(args)
    if not args:
        now = ctx.host.effort() or "default (the provider decides)"
        levels = ", ".join((*EFFORT_LEVELS, "default"))
        return CommandResult(text=f"effort: {now}\nset it with /effort LEVEL ({levels})")
    level = args.lower()
    if level in _EFFORT_CLEAR:
        ctx.host.set_effort("")
        return CommandResult(text="effort: default (the provider decides)")
    # The one check of a level: before the cache-break question, so a typo asks nothing.
    if level not in EFFORT_LEVELS:
        raise UsageError(f"unknown effort {args!r}; choose {', '.join(EFFORT_LEVELS)}, default")
    if not sure:
        forecast = ctx.host.cache_break("effort", level)
        if forecast:
            return CommandResult(confirm=f"{forecast}. Change the effort?",
                                 confirm_command=f"/effort {args} --yes")  # fmt: skip
    return CommandResult(text=f"effort: {ctx.host.set_effort(level)} from the next request on")


def _effort_args(ctx: _Context, typed: str) -> list[Completion]:
    return _words((*EFFORT_LEVELS, "default"), typed)


def _model(ctx: _Context, args: str) -> CommandResult:
    args, sure = _confirmed(args)
    if not args:
        items = ctx.host.models()
        if not items:
            return CommandResult(text="no models are configured; see docs/PROVIDERS.md", error=True)
        return CommandResult(picker=items, picker_title="Switch model", picker_command="/model")
    if not sure:
        forecast = ctx.host.cache_break("model", args)
        if forecast:
            return CommandResult(confirm=f"{forecast}. Switch to {args}?",
                                 confirm_command=f"/model {args} --yes")  # fmt: skip
    before = ctx.host.status().get("model")
    ref = ctx.host.switch_model(args)
    if ref == before:
        return CommandResult(text=f"model: {ref} (already in use)")
    return CommandResult(
        text=f"model: {ref} from the next request on (its prompt cache starts cold)"
    )


def _model_args(ctx: _Context, typed: str) -> list[Completion]:
    return [
        Completion(i.value, i.description) for i in ctx.host.models() if i.value.startswith(typed)
    ]


def _mcp(ctx: _Context, args: str) -> CommandResult:
    words = args.split()
    if not words:
        return CommandResult(text=_mcp_table(ctx.host.mcp_servers()))
    if words[0] == "auth" and len(words) == 2:
        return CommandResult(text=ctx.host.mcp_auth(words[1]))
    if words[0] in MCP_TOGGLES and len(words) == 2:
        return CommandResult(text=ctx.host.mcp_enable(words[1], words[0] == "enable"))
    raise UsageError("usage: /mcp  or  /mcp auth|enable|disable NAME")


def _mcp_args(ctx: _Context, typed: str) -> list[Completion]:
    action, space, part = typed.partition(" ")
    if space and action in ("auth", *MCP_TOGGLES):
        if not ctx.servers:  # read once: completion runs on every keystroke
            ctx.servers.extend(str(s.get("name", "")) for s in ctx.host.mcp_servers())
        return [Completion(f"{action} {n}") for n in ctx.servers if n.startswith(part)]
    return _words(["auth ", *(f"{a} " for a in MCP_TOGGLES)], typed)


def _resume(ctx: _Context, args: str) -> CommandResult:
    if args:
        return CommandResult(text=f"resumed session {ctx.host.resume(args)}")
    items: list[PickerItem] = ctx.host.sessions()
    if not items:
        return CommandResult(text="this project has no other sessions")
    return CommandResult(picker=items, picker_title="Resume a session", picker_command="/resume")


def _memory(ctx: _Context, args: str) -> CommandResult:
    return CommandResult(text=ctx.host.memory(args))


def _memory_args(ctx: _Context, typed: str) -> list[Completion]:
    return [] if " " in typed else _words(MEMORY_ACTIONS, typed)


def _status(ctx: _Context, args: str) -> CommandResult:
    return CommandResult(text=format_status(ctx.host.status()))


def _context(ctx: _Context, args: str) -> CommandResult:
    return CommandResult(text=ctx.host.context_report())


def _pin(ctx: _Context, args: str) -> CommandResult:
    if not args.strip():
        raise UsageError("usage: /pin TEXT (kept verbatim in every later summary)")
    items = ctx.host.pin(args)
    return CommandResult(text=f"pinned ({len(items)}): every later summary keeps it verbatim")


def _pins(ctx: _Context, args: str) -> CommandResult:
    items = ctx.host.pins()
    if not items:
        return CommandResult(text="nothing pinned (/pin TEXT keeps an item in every summary)")
    return CommandResult(text="\n".join(f"{i}. {p}" for i, p in enumerate(items, 1)))


def _unpin(ctx: _Context, args: str) -> CommandResult:
    if not args.strip().isdigit():
        raise UsageError("usage: /unpin N (the number /pins shows)")
    return CommandResult(text=f"unpinned: {ctx.host.unpin(int(args))}")


def _rewind(ctx: _Context, args: str) -> CommandResult:
    words = args.split()
    if words == ["undo"]:
        return CommandResult(text=ctx.host.rewind_undo())
    if not words:
        points = ctx.host.rewind_points()
        if not points:
            return CommandResult(text="nothing to rewind yet: no turn has been recorded")
        return CommandResult(
            picker=points, picker_title="Rewind to before…", picker_command="/rewind"
        )
    if not words[0].isdigit() or len(words) > 2:
        raise UsageError("usage: /rewind [TURN [both|code|conversation|fork]] | /rewind undo")
    if len(words) == 1:
        modes = [PickerItem(label, f"{words[0]} {value}", note) for value, label, note in
                 REWIND_MODES]  # fmt: skip
        return CommandResult(picker=modes, picker_title=f"Rewind to before turn {words[0]}",
                             picker_command="/rewind")  # fmt: skip
    return CommandResult(text=ctx.host.rewind(int(words[0]), words[1]))


def _leave(ctx: _Context, args: str) -> CommandResult:
    return CommandResult(exit=True)


@dataclass(frozen=True)
class Builtin:
    """One row of the table: a built-in command before it is bound to a host."""

    name: str
    description: str  # the help text /help shows
    run: Run
    hint: str = ""  # the argument hint, e.g. "[level]"
    complete: Complete | None = None
    hidden: bool = False  # an alias: accepted, not listed

    def bind(self, ctx: _Context) -> Command:
        """The :class:`Command` that runs this row against ``ctx``."""
        complete = partial(self.complete, ctx) if self.complete is not None else None
        return Command(self.name, self.description, "builtin", partial(self.run, ctx),
                       self.hint, "", complete, self.hidden)  # fmt: skip


# The built-ins in /help order; the planning triggers come between these and LEAVING.
BUILTINS: tuple[Builtin, ...] = (
    Builtin("help", "list the commands, or show one", _help, "[command]"),
    Builtin("new", "start a new session (the current one stays on disk)", _new),
    Builtin("clear", "discard this conversation (asks first; memory stays)", _clear),
    Builtin("compact", "prune and summarise the context now", _compact, "[focus]"),
    Builtin("effort", "show or set the reasoning effort", _effort, "[level]", _effort_args),
    Builtin("model", "switch the model (a picker without an argument)", _model, "[ref]",
            _model_args),
    Builtin("mcp", "MCP servers with their state and counts; auth|enable|disable NAME", _mcp,
            "[auth|enable|disable NAME]", _mcp_args),
    Builtin("resume", "continue another session of this project (a picker)", _resume,
            "[id|title]"),
    Builtin("memory", "remembered facts: list, search Q, show ID, forget ID …", _memory,
            "[action]", _memory_args),
    Builtin("status", "model, mode, session, tokens, cost and context in use", _status),
    Builtin("context", "context in use, what the last summary dropped, the pins", _context),
    Builtin("pin", "keep TEXT verbatim in every later summary", _pin, "TEXT"),
    Builtin("pins", "list the pinned items", _pins),
    Builtin("unpin", "remove a pinned item", _unpin, "N"),
    Builtin("rewind", "go back to before a turn: code, conversation or both", _rewind,
            "[turn [mode]] | undo"),
)  # fmt: skip
LEAVING: tuple[Builtin, ...] = (
    Builtin("exit", "leave (Ctrl-D works too)", _leave),
    Builtin("quit", "leave", _leave, hidden=True),
)


def builtin_commands(
    host: CommandHost, listing: Callable[[], Sequence[Command]] | None = None
) -> list[Command]:
    """The built-ins bound to ``host``; ``listing`` gives ``/help`` every command to show."""
    ctx = _Context(host, listing)
    return [
        *(row.bind(ctx) for row in BUILTINS),
        *planning_commands(),  # /plan, /plan-approve, /plan-only, /goal (the host routes them)
        *(row.bind(ctx) for row in LEAVING),
    ]
