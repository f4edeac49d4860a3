"""``reasonix`` in a terminal: the interactive line-mode chat.

A readline prompt; the answer streams as it arrives, tool activity shows as
short lines, and permission questions are asked inline (allow once, allow
for this session, always allow — persisted into ./reasonix.toml — or deny).
Ctrl-C cancels the running turn (a second one exits), Ctrl-D or ``/exit``
leaves, ``/new`` starts a fresh session, ``/compact`` compacts the context
now, ``/memory …`` manages remembered facts, ``/help`` lists the commands.
This is the fallback for terminals without curses and for ``--plain``.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from types import FrameType
from typing import Any

from reasonix.agent.events import (
    ApprovalRequested,
    Done,
    Error,
    Event,
    Notice,
    ReasoningDelta,
    Runner,
    TextDelta,
    ToolEnd,
    ToolStart,
)
from reasonix.agent.telemetry import Telemetry
from reasonix.boot import Runtime
from reasonix.cancel import Cancel
from reasonix.cli.safe_text import printable
from reasonix.cli.setup_run import add_run_flags, build
from reasonix.errors import ReasonixError
from reasonix.permission import ApprovalChoice, ApprovalRequest

__all__ = ["configure", "execute"]

HELP = """\
commands:
  /help   this list
  /new    start a new session (the current one stays on disk)
  /compact          prune and summarise the context now
  /memory [ACTION]  remembered facts: list, search Q, show ID, revisions ID,
                    restore ID REV, archived, recover NAME, forget ID,
                    recall TEXT, instructions
  /exit   leave (Ctrl-D works too)
keys: Ctrl-C cancels the running turn; pressed again it leaves.
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


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the chat flags (the run flags plus ``--plain``)."""
    parser.description = "Interactive chat in the current directory."
    parser.add_argument("--plain", action="store_true", help="line mode (no full-screen view)")
    add_run_flags(parser)


def execute(args: argparse.Namespace) -> int:
    """Run the chat until the user leaves; return the exit code."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401 - importing it gives input() line editing and history
    setup = build(args, interactive=True)
    try:
        _banner(setup)
        if getattr(args, "compact", False):  # `reasonix -c --compact`: compact, then chat
            print(printable(_local_command(setup, "/compact")))
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
            if text in ("/exit", "/quit"):
                return 0
            if text == "/help":
                print(HELP)
                continue
            if text == "/new":
                setup.new_session()
                print(f"new session {setup.session.id}")
                continue
            if text == "/compact" or text == "/memory" or text.startswith("/memory "):
                print(printable(_local_command(setup, text)))
                continue
            if not _turn(setup, line):
                return 1
    finally:
        setup.close()


def _local_command(setup: Runtime, text: str) -> str:
    """``/compact`` and ``/memory …``: act locally, never reach the model (CMD-1)."""
    from reasonix.agent.context import ContextManager
    from reasonix.agent.memory.catalog import Memory
    from reasonix.agent.memory.commands import compact_command, run_memory_command

    if text.startswith("/memory"):
        return run_memory_command(Memory.for_workspace(setup.workspace), text[len("/memory") :])
    context = setup.context
    if not isinstance(context, ContextManager):
        return "compaction is not available in this session"
    cancel = Cancel()
    try:
        with _TurnInterrupts(cancel):
            return compact_command(context, cancel)
    except ReasonixError as err:
        return f"compact failed: {err}"
    except KeyboardInterrupt:
        return "compact cancelled"


def _banner(setup: Runtime) -> None:
    state = "resumed" if setup.resumed else "new"
    print(printable(f"reasonix · {setup.resolved.ref} · {setup.workspace}"))
    print(f"{state} session {setup.session.id} · /help for commands, Ctrl-D to leave")
    for note in setup.notices:
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


def _turn(setup: Runtime, text: str) -> bool:
    """Run one turn; False when the user asked to leave mid-turn."""
    cancel = Cancel()
    view = _View()
    before = len(setup.telemetry.per_request)
    try:
        runner: Runner = setup.runner  # LOOP-7: the CLI sees only the Runner protocol
        with _TurnInterrupts(cancel):
            for event in runner.run(text, cancel):
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
    return True


def _tty() -> bool:
    return sys.stdout.isatty()


class _View:
    """Prints events as plain lines."""

    def __init__(self) -> None:
        self.mid_line = False
        self.thinking = False

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
        elif isinstance(event, Notice):
            self._newline()
            print(printable(f"[{event.text}]"))
        elif isinstance(event, Done):
            self._newline()
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
    reason = f"  — {request.reason}" if request.reason else ""
    print(printable(f"\n? allow {request.summary}{reason}"))
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
