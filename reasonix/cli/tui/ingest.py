"""Where Runner events and stored messages become view state — and are sanitised.

Every piece of untrusted text (model output, tool arguments and results,
file contents in diffs, notices, command output, MCP text) passes
:func:`clean` or :func:`clean_line` (the one terminal sanitiser,
``reasonix.cli.safe_text.printable``) here, before it is stored, so the
renderers never see a control character.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.prompt import typed_text
from reasonix.cli.safe_text import printable
from reasonix.provider.types import arguments_object

from .diff import EDIT_TOOLS, call_diff, proposed_diff
from .state import (
    AnswerBlock,
    ApprovalOverlay,
    AppState,
    Block,
    NoticeBlock,
    ReasoningBlock,
    ToolBlock,
    UserBlock,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "apply_event",
    "approval_overlay",
    "blocks_from_messages",
    "clean",
    "clean_line",
    "diff_for",
]

_CHOICE_KEYS = {"ONCE": "1", "SESSION": "2", "ALWAYS": "3", "DENY": "4"}


def clean(text: str) -> str:
    """Untrusted text made safe for the terminal (newlines and tabs kept)."""
    return printable(text)


def clean_line(text: str) -> str:
    """Untrusted text for one row (tabs expanded, newlines shown as ``\\n``)."""
    return printable(text.expandtabs(4), keep_newlines=False)


def _clean_value(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_line(str(k)): _clean_value(v) for k, v in value.items()}
    return value


def diff_for(tool: str, args: dict[str, Any], workspace: Path) -> list[str] | None:
    """The sanitised preview diff of an edit call (None for other tools). Reads files:
    call it off the UI thread."""
    if tool not in EDIT_TOOLS:
        return None
    try:
        lines = proposed_diff(tool, args, workspace)
    except (OSError, ValueError):
        return None
    return None if lines is None else [clean_line(ln) for ln in lines]


PLAN_LINES = 60  # of a plan shown in the approval overlay (the whole plan is saved)


def approval_overlay(event: Any, diff: list[str] | None) -> ApprovalOverlay:
    """The modal question for one ApprovalRequested event."""
    request = event.request
    rule = clean_line(str(request.suggested_rule or ""))
    detail: list[str] = []
    if request.reason:
        detail.append(clean_line(str(request.reason)))
    command = request.args.get("command") if isinstance(request.args, dict) else None
    if isinstance(command, str) and diff is None:
        detail.append("$ " + clean(command))
    if request.fresh:
        detail.append("nested or indirect shell: only a person can allow it, once")
    body = str(getattr(request, "detail", "") or "")  # a plan awaiting approval, in full
    if body:
        lines = body.splitlines()
        detail += [clean_line(line) for line in lines[:PLAN_LINES]]
        if len(lines) > PLAN_LINES:
            detail.append(f"… {len(lines) - PLAN_LINES} more lines (saved with the plan)")
    labels = {
        "ONCE": "allow once",
        "SESSION": f"allow for this session ({rule})",
        "ALWAYS": f"always allow ({rule}, saved to ./reasonix.toml)",
        "DENY": "deny",
    }
    choices = []
    for choice in request.choices:
        name = getattr(choice, "name", str(choice))
        if name in labels:
            choices.append((_CHOICE_KEYS[name], labels[name], choice))
    title = f"allow {clean_line(str(request.summary))}?"
    return ApprovalOverlay(request, event, title, detail, diff, choices)


def _tool_for(state: AppState, name: str, args: dict[str, Any], call_id: str) -> ToolBlock:
    """The card of a call: an existing one by id, a waiting one of this call, or a new card."""
    t = state.transcript
    found = t.tool(call_id) if call_id else None
    if found is not None:
        return found
    for block in reversed(t.blocks[-20:]):
        if (
            isinstance(block, ToolBlock)
            and block.status == "waiting"
            and not block.call_id
            and block.name == name
            and (not args or block.arguments == args)
        ):
            block.call_id = call_id
            return block
    block = ToolBlock(name, args, call_id)
    t.add(block)
    return block


def apply_event(state: AppState, event: Any, extra: dict[str, Any] | None = None) -> None:
    """Change ``state`` for one Runner event (``extra``: what the pump computed, e.g. a diff)."""
    from reasonix.agent import events as ev

    extra = extra or {}
    t = state.transcript
    if isinstance(event, ev.TextDelta):
        block = t.stream(AnswerBlock)
        block.add(clean(event.text))
    elif isinstance(event, ev.ReasoningDelta):
        block = t.stream(ReasoningBlock)
        block.add(clean(event.text))
    elif isinstance(event, ev.StepStart):
        t.close_streams()
    elif isinstance(event, ev.ToolStart):
        args = _clean_value(arguments_object(event.arguments))
        card = _tool_for(state, clean_line(event.name), args, event.call_id)
        card.status = "running"
        if card.diff is None and extra.get("diff") is not None:
            card.diff = extra["diff"]
        card.touch()
    elif isinstance(event, ev.ToolEnd):
        card = _tool_for(state, clean_line(event.name), {}, event.call_id)
        status = "blocked" if event.blocked else ("error" if event.is_error else "ok")
        card.finish(status, clean(event.content), None if event.blocked else event.seconds)
    elif isinstance(event, ev.ApprovalRequested):
        request = event.request
        args = _clean_value(dict(request.args)) if isinstance(request.args, dict) else {}
        card = ToolBlock(clean_line(str(request.tool_name)), args)
        card.status, card.diff = "waiting", extra.get("diff")
        t.add(card)
        overlay = approval_overlay(event, extra.get("diff"))
        if extra.get("answer") is not None:
            overlay.event = extra["answer"]  # answering it also wakes the waiting turn
        state.overlays.append(overlay)
    elif isinstance(event, ev.Notice):
        kind = "warn" if event.kind in ("max_steps", "cancelled") else "notice"
        t.add(NoticeBlock(clean(event.text), kind))
    elif isinstance(event, ev.Error):
        t.add(NoticeBlock(clean(event.message), "error"))
    elif isinstance(event, ev.Done):
        t.close_streams()
        state.subagents.clear()  # the sub-agent panel lives for one turn
    elif isinstance(event, ev.SubagentProgress):
        from .subagents import note

        note(state, event)
    elif isinstance(event, ev.UsageReport):
        state.status.context_used = event.usage.input_tokens
    elif isinstance(event, ev.WebSearch):  # a search the provider ran on its side
        _web_search(state, event)
    elif isinstance(event, ev.SandboxEscape):
        verdict = "allowed" if event.granted else "refused"
        text = f"running outside the sandbox {verdict}: {event.command} ({event.detail})"
        t.add(NoticeBlock(clean(text), "warn"))


def _web_search(state: AppState, event: Any) -> None:
    """A card for a provider-side web search: the query, then one line per result."""
    card = ToolBlock("web_search", {"query": clean_line(str(event.query))}, str(event.call_id))
    lines = []
    for hit in event.results:
        title, url = clean_line(str(hit.title)), clean_line(str(hit.url))
        lines.append(f"{title} — {url}" if title else url)
    if event.error:
        card.finish("error", clean_line(f"search failed: {event.error}"), None)
    else:
        card.finish("ok", "\n".join(lines) or "(no results)", None)
    state.transcript.add(card)


def blocks_from_messages(messages: list[Any]) -> list[Block]:
    """The transcript of a resumed session (``-c``): user turns, answers, thinking, cards."""
    blocks: list[Block] = []
    cards: dict[str, ToolBlock] = {}
    for m in messages:
        role = getattr(m.role, "value", str(m.role))
        if role == "user":
            blocks.append(UserBlock(clean(typed_text(m.content))))
        elif role == "assistant":
            if m.reasoning:
                r = ReasoningBlock(clean(m.reasoning))
                r.open = False
                blocks.append(r)
            if m.content.strip():
                a = AnswerBlock(clean(m.content))
                a.open = False
                blocks.append(a)
            for call in m.tool_calls:
                args = arguments_object(call.arguments)
                card = ToolBlock(clean_line(call.name), _clean_value(args), call.id)
                # The file has changed since: show the call's own old and new strings.
                raw = call_diff(call.name, args)
                card.diff = None if raw is None else [clean_line(ln) for ln in raw]
                card.status = "done"
                cards[call.id] = card
                blocks.append(card)
        elif role == "tool":
            done = cards.get(m.tool_call_id)
            if done is not None:
                # The transcript does not record whether a result was an error.
                status = "blocked" if m.content.startswith("blocked:") else "done"
                done.finish(status, clean(m.content), None)
    return blocks
