"""The turn a custom command file starts: its ``allowed-tools`` and shell lines (issue 35).

Frontends run a :class:`~reasonix.command.api.CommandResult` that carries a
``turn`` with :func:`run_turn` instead of ``rt.runner.run``::

    for event in run_turn(rt, text, cancel, result.turn):   # text: result.prompt, @ resolved
        ...                                                 # the same events as runner.run

In order:

1. the command's ``allowed-tools`` become allow rules of the gate for this turn
   only (``Gate.for_turn``): deny and ask rules still win, and they are gone when
   the turn ends however it ends;
2. its shell lines (``!`cmd``` inline, ```` ```! ```` blocks) run one after the
   other as ``bash`` calls through the same path as the model's calls — PreToolUse
   hooks, the permission gate (the allow rules above count; anything else asks the
   user in the chat, the browser or the editor, and a headless gate refuses with a
   line naming the command) and the bash tool's sandbox — so the user sees them as
   tool activity;
3. each line is replaced in the text by a marked block with its output (capped,
   exit code noted) or the reason it did not run, and the turn runs on that text.

A workspace's own command files (scope ``project``) get neither allow rules nor
shell lines while the workspace is untrusted: the lines are replaced by a note
saying so, a notice names the command, and the start-up warnings already listed
the file (``reasonix.config.command_trust``). Shell lines are only looked for in
the command's own expansion, never in ``@`` attachments put in front of it.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

from reasonix.agent.events import Done, Event, Notice, ToolEnd
from reasonix.agent.execute import run_in_worker
from reasonix.cancel import Cancel
from reasonix.command.api import CommandTurn
from reasonix.config.command_trust import ShellLine, find_shell_lines
from reasonix.provider.types import ToolCall, Usage

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["LINE_CAP", "TOTAL_CAP", "run_turn"]

LINE_CAP = 16 * 1024  # characters of one shell line's output the model receives
TOTAL_CAP = 64 * 1024  # of all of one command's shell output together
_TAG = "command-output"


def run_turn(
    rt: Runtime, text: str, cancel: Cancel, turn: CommandTurn | None = None
) -> Iterator[Event]:
    """``rt.runner.run(text, cancel)``, with ``turn``'s allow rules and shell lines applied."""
    if turn is None:
        yield from rt.runner.run(text, cancel)
        return
    trusted = turn.scope != "project" or bool(rt.config.trust.trusted)
    before = rt.resolved.ref
    wanted = _command_model(rt, turn.model) if turn.model else None
    if turn.model and wanted is None:
        yield Notice("command", f"{turn.command} asks for model {turn.model!r}, which none of "
                                f"your providers serves; this turn stays on {before}")  # fmt: skip
    elif wanted is not None and wanted != before:
        rt.switch_model(wanted)
        yield Notice("command", f"{turn.command} runs on {wanted} as its frontmatter asks "
                                f"(that model starts without a prompt cache); back to {before} "
                                "after this turn")  # fmt: skip
    try:
        yield from _turn(rt, text, turn, trusted, cancel)
    finally:
        if rt.resolved.ref != before:
            rt.switch_model(before)


def _command_model(rt: Runtime, name: str) -> str | None:
    """The model a command's ``model:`` names among the user's providers, or None.

    A reference our resolver knows wins; Claude's aliases (``haiku``, ``sonnet``,
    ``opus``) pick the first listed model whose name contains the alias.
    """
    from reasonix.errors import ConfigError

    try:
        return rt.config.resolve_model(name).ref
    except ConfigError:
        pass
    alias = name.strip().lower()
    if alias in ("haiku", "sonnet", "opus"):
        for p in rt.config.providers:
            for m in p.models:
                if alias in m.lower() and (p.api_key or not p.api_key_env):
                    return f"{p.name}/{m}"
    return None


def _turn(
    rt: Runtime, text: str, turn: CommandTurn, trusted: bool, cancel: Cancel
) -> Iterator[Event]:
    if turn.allow and not trusted:
        yield Notice("command", f"{turn.command}: allowed-tools not applied: the workspace "
                                "is not trusted (`reasonix trust`)")  # fmt: skip
    with rt.gate.for_turn(turn.allow if trusted else ()):
        text = yield from _shell_lines(rt, text, turn, trusted, cancel)
        if cancel.cancelled:  # stopped while a shell line ran: no turn is sent
            yield Notice("cancelled", f"{turn.command} was cancelled before its turn")
            yield Done("", "cancelled", 0, Usage())
            return
        yield from rt.runner.run(text, cancel)


def _shell_lines(
    rt: Runtime, text: str, turn: CommandTurn, trusted: bool, cancel: Cancel
) -> Generator[Event, None, str]:
    """Run the shell lines of the command's part of ``text``; the text with their output."""
    body = turn.prompt
    lines = find_shell_lines(body)
    if not lines:
        return text
    if not text.endswith(body):  # a frontend changed it: what would run is unclear
        yield Notice("command", f"{turn.command}: shell lines not run (the text was changed)")
        return text
    head = text[: len(text) - len(body)]
    if not trusted:
        why = "not run: this workspace is not trusted (run `reasonix trust` to allow it)"
        yield Notice("command", f"{turn.command}: {len(lines)} shell line(s) {why}")
        return head + _splice(body, lines, [_block(s, why, skipped=True) for s in lines])
    if rt.registry.get("bash") is None:
        why = "not run: the bash tool is not enabled ([tools].enabled)"
        yield Notice("command", f"{turn.command}: {len(lines)} shell line(s) {why}")
        return head + _splice(body, lines, [_block(s, why, skipped=True) for s in lines])
    calls = [
        ToolCall(f"command-shell-{i}", "bash", json.dumps({"command": s.command}))
        for i, s in enumerate(lines, 1)
    ]
    base = rt.agent.tool_ctx
    # The turn's checkpoint starts with its message, after these lines: they are not
    # part of a /rewind point (a shell line that writes files is the user's own command).
    ctx = base.replace(extra={k: v for k, v in base.extra.items() if k != "checkpoints"})
    refused: dict[str, str] = {}
    worker = run_in_worker(calls, rt.registry, rt.gate, ctx, cancel, rt.approver)
    try:
        while True:
            try:
                event = next(worker)
            except StopIteration as stop:
                results = stop.value
                break
            if isinstance(event, ToolEnd) and event.blocked:
                refused[event.call_id] = event.content
            yield event
    finally:
        worker.close()
    blocks: list[str] = []
    budget = TOTAL_CAP
    for line, call, result in zip(lines, calls, results, strict=True):
        if call.id in refused:
            reason = refused[call.id].removeprefix("blocked: bash was not run ").strip()
            if reason.startswith("(") and reason.endswith(")"):
                reason = reason[1:-1]
            note = f"{turn.command}: `{_one_line(line.command)}` was not run ({reason})"
            yield Notice("command", note)
            blocks.append(_block(line, note, skipped=True))
            continue
        content = _cap(result.content, min(LINE_CAP, budget))
        budget = max(budget - len(content), 0)
        blocks.append(_block(line, content))
    return head + _splice(body, lines, blocks)


def _one_line(command: str, width: int = 200) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _cap(content: str, limit: int) -> str:
    """At most ``limit`` characters: the head, a marker, and the last line (the exit code)."""
    if len(content) <= limit:
        return content
    last = content.rstrip("\n").rsplit("\n", 1)[-1]
    keep = max(limit - len(last) - 80, 0)
    cut = len(content) - keep - len(last)
    return f"{content[:keep]}\n[… {cut:,} characters of output cut …]\n{last}"


def _block(line: ShellLine, content: str, *, skipped: bool = False) -> str:
    """The marked text that replaces one shell line."""
    status = ' status="not run"' if skipped else ""
    body = content if content.endswith("\n") else content + "\n"
    return f'<{_TAG} command="{_attr(_one_line(line.command))}"{status}>\n{body}</{_TAG}>'


def _splice(body: str, lines: list[ShellLine], blocks: list[str]) -> str:
    out: list[str] = []
    at = 0
    for line, block in zip(lines, blocks, strict=True):
        out.append(body[at : line.start])
        out.append(block)
        at = line.end
    out.append(body[at:])
    return "".join(out)
