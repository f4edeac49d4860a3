"""``reasonix`` in a terminal: the interactive line-mode chat.

A readline prompt; the answer streams as it arrives, tool activity shows as
short lines, and permission questions are asked inline (allow once, allow
for this session, always allow — persisted into ./reasonix.toml — or deny).
Ctrl-C cancels the running turn (a second one exits), Ctrl-D or ``/exit``
leaves. Lines starting with ``/`` go to the shared command registry
(``reasonix/command``): built-ins act locally, custom commands and MCP
prompts become the user turn; pickers are numbered lists and ``/clear``
asks y/N. ``@path`` references are resolved before a turn is sent.
This is the fallback for terminals without curses and for ``--plain``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

from reasonix.agent.events import (
    ApprovalRequested,
    Done,
    Error,
    Event,
    Notice,
    ReasoningDelta,
    SandboxEscape,
    TextDelta,
    ToolEnd,
    ToolStart,
    WebSearch,
)
from reasonix.agent.telemetry import Telemetry
from reasonix.boot import Runtime
from reasonix.cancel import Cancel
from reasonix.cli.flags import CHAT
from reasonix.cli.safe_text import printable
from reasonix.cli.search_card import card_lines
from reasonix.cli.setup_run import build
from reasonix.command.api import CommandResult, CommandTurn
from reasonix.command.registry import CommandRegistry, plain_text
from reasonix.errors import ReasonixError
from reasonix.permission import ApprovalChoice, ApprovalRequest

if TYPE_CHECKING:
    from typing import Any, TypeVar

__all__ = ["configure", "execute"]

KEYS = """\
keys: Ctrl-C cancels the running turn; pressed again it leaves. Ctrl-D leaves.
resume later with `reasonix -c` (latest) or `reasonix -r QUERY`."""

# Answers to an approval question -> ApprovalChoice member names.
_CHOICES = {
    "1": "ONCE",
    "y": "ONCE",
    "2": "SESSION",
    "s": "SESSION",
    "3": "ALWAYS",
    "a": "ALWAYS",
    "4": "DENY",
    "n": "DENY",
    "": "DENY",
}
_EXIT = object()  # what a command returns to leave the chat

if TYPE_CHECKING:
    T = TypeVar("T")


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the chat flags (the run flags plus ``--plain``; cli/flags.py)."""
    parser.description = "Interactive chat in the current directory."
    from reasonix.cli.flag_parser import add_flags  # the argparse path only

    add_flags(parser, CHAT)


def execute(args: object) -> int:
    """Run the chat until the user leaves; return the exit code (``args``: either namespace)."""
    from reasonix.boot.commands import build_commands

    with contextlib.suppress(ImportError):
        import readline  # noqa: F401 - importing it gives input() line editing and history
    setup = build(args, interactive=True)
    try:
        commands = build_commands(
            setup, notify=lambda text: print(printable(f"[{text}]"), flush=True)
        )
        _banner(setup, commands)
        if getattr(args, "compact", False):  # `reasonix -c --compact`: compact, then chat
            _command(commands, "/compact")
        while True:
            try:
                line = input("› ")
            except EOFError:
                print()
                return 0
            except KeyboardInterrupt:
                print()
                continue
            text = line.strip()
            if not text:
                continue
            send: Any = plain_text(line)
            turn: CommandTurn | None = None
            if commands.is_command(text):
                got = _command(commands, text)
                if got is _EXIT:
                    return 0
                if got is None:
                    continue
                send, turn = got.prompt, got.turn
            if not _turn(setup, _with_references(setup, commands, send), turn):
                return 1
    finally:
        setup.close()


# -- commands -------------------------------------------------------------------------


class _CommandInterrupts:
    """While a command runs, Ctrl-C cancels it (the host's calls); a second one gives up."""

    def __init__(self, interrupt: Callable[[], None]) -> None:
        self.interrupt, self.count = interrupt, 0
        self.previous: Any = None

    def __enter__(self) -> _CommandInterrupts:
        self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
        self.interrupt()
        sys.stderr.write("\n[cancelling… press Ctrl-C again to give up]\n")

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self.previous)


def _guarded(commands: CommandRegistry, work: Callable[[], T]) -> T | None:
    """Run ``work`` with Ctrl-C wired to the host; None when the user gave up."""
    interrupt = getattr(commands.host, "interrupt", lambda: None)
    try:
        with _CommandInterrupts(interrupt):
            return work()
    except KeyboardInterrupt:
        print("[cancelled]")
        return None


def _run(commands: CommandRegistry, line: str) -> CommandResult | None:
    return _guarded(commands, lambda: commands.run(line))


def _command(commands: CommandRegistry, line: str) -> Any:
    """Run one command line: None (done), ``_EXIT``, or the result whose prompt is the turn."""
    result = _run(commands, line)
    if result is not None and not result.error and line.split() in (["/help"], ["/"]):
        result.text += "\n" + KEYS
    while result is not None:
        if result.text:  # may carry server-given text (MCP errors, descriptions)
            print(printable(result.text), file=sys.stderr if result.error else sys.stdout)
        if result.exit:
            return _EXIT
        if result.prompt is not None:
            return result
        follow = _follow_up(result)
        if follow is None:
            return None
        result = _run(commands, follow)
    return None


def _follow_up(result: CommandResult) -> str | None:
    """A picker (numbered list) or a y/N confirmation: the command line to run next."""
    try:
        if result.picker:
            print(f"{result.picker_title or 'choose'}:")
            items = list(result.picker)
            width = max(len(i.label) for i in items)
            for n, item in enumerate(items, 1):
                row = f"  {n:>2}. {item.label:<{width}}  {item.description}".rstrip()
                print(printable(row, keep_newlines=False))
            answer = input(f"  choose 1-{len(items)} (Enter to cancel): ").strip()
            if not answer:
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(items):
                return f"{result.picker_command} {items[int(answer) - 1].value}"
            print(f"  no choice {answer!r}")
            return None
        if result.confirm:
            answer = input(f"{result.confirm} [y/N] ").strip().lower()
            if answer in ("y", "yes"):
                return result.confirm_command
            print("  nothing changed")
    except (EOFError, KeyboardInterrupt):
        print()
    return None


def _with_references(setup: Runtime, commands: CommandRegistry, text: str) -> str:
    """The turn text with its ``@`` references resolved; failures are shown as notices."""
    from reasonix.command.refs import expand_references

    if "@" not in text:
        return text
    reader = commands.host.read_resource if setup.mcp is not None else None
    resolved = _guarded(
        commands,
        lambda: expand_references(
            text,
            workspace=setup.workspace,
            forbid_read=setup.tool_ctx.forbid_read,
            read_resource=reader,
        ),
    )
    if resolved is None:
        return text  # gave up on a slow read: the typed text goes as it is
    out, notices = resolved
    for note in notices:
        print(printable(f"[{note}]"))
    return out


def _banner(setup: Runtime, commands: CommandRegistry) -> None:
    state = "resumed" if setup.resumed else "new"
    print(printable(f"reasonix · {setup.resolved.ref} · {setup.workspace}"))
    print(f"{state} session {setup.session.id} · /help for commands, Ctrl-D to leave")
    for note in [*setup.notices, *commands.notices]:
        print(printable(f"[{note}]"))


class _TurnInterrupts:
    """During a turn the first Ctrl-C cancels it; a second one leaves the program."""

    def __init__(self, cancel: Cancel) -> None:
        self.cancel, self.count = cancel, 0
        self.previous: Any = None

    def __enter__(self) -> _TurnInterrupts:
        self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
        self.cancel.cancel("interrupted (Ctrl-C)")
        sys.stderr.write("\n[cancelling… press Ctrl-C again to leave]\n")

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self.previous)


def _turn(setup: Runtime, text: str, command: CommandTurn | None = None) -> bool:
    """Run one turn (a command file's with its allowed-tools and shell lines);
    False when the user asked to leave mid-turn."""
    from reasonix.boot.command_turn import run_turn

    cancel = Cancel()
    view = _View()
    before = len(setup.telemetry.per_request)
    try:
        with _TurnInterrupts(cancel):
            for event in run_turn(setup, text, cancel, command):  # LOOP-7: the Runner's events
                if isinstance(event, ApprovalRequested):
                    event.answer(_ask(event.request))
                else:
                    view.show(event)
    except KeyboardInterrupt:
        print("\n[left during a turn; the session is saved]")
        return False
    turn = Telemetry(setup.telemetry.per_request[before:])  # this turn's requests only
    if turn.per_request:
        line = f"[this turn: {turn.summary_line(setup.price)}]"
        print(f"\033[2m{line}\033[0m" if _tty() else line)
    if view.reason == "budget":
        _offer_grant(setup)
    return True


def _offer_grant(setup: Runtime) -> None:
    """A run budget is spent (issue 36): y grants the same amount again, anything else not."""
    budget, total = setup.run_budget, setup.telemetry.total
    try:
        answer = input("the run budget is spent; grant the same amount again? [y/N] ")
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        budget.grant(total, setup.price)
        print(f"[{budget.remaining(total, setup.price)}; send a message to go on]")
    else:
        print("[no more budget granted; raise it with --max-cost/--max-tokens/--max-time]")


def _tty() -> bool:
    return sys.stdout.isatty()


class _View:
    """Prints events as plain lines."""

    def __init__(self) -> None:
        self.mid_line = False
        self.thinking = False
        self.reason = ""  # the turn's Done reason ("budget": a run budget is spent)

    def _newline(self) -> None:
        if self.mid_line:
            print()
            self.mid_line = False

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if self.thinking:
                self._newline()
                self.thinking = False
            sys.stdout.write(printable(event.text))
            sys.stdout.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ReasoningDelta):
            if not self.thinking:
                self._newline()
                sys.stdout.write("(thinking) ")
                self.thinking = True
            sys.stdout.write(printable(event.text.replace("\n", " "), keep_newlines=False))
            sys.stdout.flush()
            self.mid_line = True
        elif isinstance(event, ToolStart):
            self._newline()
            print(f"· {_short(event.name)} {_short(event.arguments)}")
        elif isinstance(event, ToolEnd):
            mark = "blocked" if event.blocked else ("error" if event.is_error else "ok")
            lines = event.content.count("\n") + 1 if event.content else 0
            detail = _short(event.content) if event.is_error else f"{lines} lines"
            print(f"  {mark} · {_short(event.name)} · {detail}")
        elif isinstance(event, WebSearch):
            self._newline()
            links = _tty() and os.environ.get("TERM", "dumb") != "dumb"
            for line in card_lines(event, links=links):
                print(line)
        elif isinstance(event, SandboxEscape):
            verdict = "granted" if event.granted else "refused"
            print(
                f"  sandbox escape {verdict} ({_short(event.detail, 60)}) · {_short(event.command)}"
            )
        elif isinstance(event, Notice):
            self._newline()
            print(printable(f"[{event.text}]"))
        elif isinstance(event, Done):
            self._newline()
            self.reason = event.reason
        elif isinstance(event, Error):
            self._newline()
            print(printable(f"error: {event.message}"), file=sys.stderr)


def _short(text: str, width: int = 100) -> str:
    """One display line of untrusted text: whitespace folded, controls shown visibly."""
    flat = printable(" ".join(text.split()), keep_newlines=False)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _ask(request: ApprovalRequest) -> ApprovalChoice:
    """Ask the user about one call, offering only the choices the gate allows."""
    rule = request.suggested_rule
    labels = {
        ApprovalChoice.ONCE: "[1] allow once",
        ApprovalChoice.SESSION: f"[2] allow for this session ({rule})",
        ApprovalChoice.ALWAYS: f"[3] always allow ({rule}, saved to ./reasonix.toml)",
        ApprovalChoice.DENY: "[4] deny",
    }
    if request.detail:  # a plan to approve: show it whole before the question
        print(printable("\n" + request.detail.rstrip()))
    reason = f"  — {request.reason}" if request.reason else ""
    print(printable(f"\n? allow {request.summary}{reason}"))
    if request.tool_name == "sandbox escape":  # §9: say plainly what "once" means here
        print("  ! without the OS sandbox: it can write anywhere you can; asked every time")
    print(printable("  " + "  ".join(labels[c] for c in request.choices if c in labels)))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        answer = input("  choice [default deny]: ").strip().lower()
    except (EOFError, KeyboardInterrupt):
        answer = "n"
    finally:
        signal.signal(signal.SIGINT, previous)
    choice = ApprovalChoice[_CHOICES.get(answer[:1], "DENY")]
    if choice is ApprovalChoice.ALWAYS and request.preview is not None:
        choice = _confirm_always(request)
    return choice if choice in request.choices else ApprovalChoice.DENY


def _confirm_always(request: ApprovalRequest) -> ApprovalChoice:
    """Before saving an "always" rule: what it would have approved before, then confirm."""
    assert request.preview is not None
    try:
        print(printable(request.preview(request.suggested_rule)))
        answer = input("  save this rule? [y/N, N = allow for this session only]: ")
    except (EOFError, KeyboardInterrupt, ReasonixError):
        answer = "n"
    return (
        ApprovalChoice.ALWAYS if answer.strip().lower() in ("y", "yes") else ApprovalChoice.SESSION
    )
