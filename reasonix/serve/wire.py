"""What the browser receives: Runner events and stored transcripts as small JSON objects.

Pure functions only. Every object has a ``type``; the page renders each type
one way whether it arrives live over SSE or from the stored transcript, so a
reloaded page looks like the one that watched the turn. Model and tool text
is sent as plain strings: the page inserts it with ``textContent``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from reasonix.agent.events import (
    Done,
    Error,
    Event,
    Notice,
    Phase,
    ReasoningDelta,
    SandboxEscape,
    StepStart,
    SubagentProgress,
    TextDelta,
    ToolEnd,
    ToolStart,
    UsageReport,
    WebSearch,
)
from reasonix.agent.prompt import typed_text
from reasonix.permission.approval import summarize_call
from reasonix.provider.types import Usage, arguments_object

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_TOOL_TEXT",
    "approval_payload",
    "display_user_text",
    "edit_diff",
    "event_payload",
    "history_items",
    "usage_dict",
]

MAX_TOOL_TEXT = 16_384  # characters of a tool result a card shows (the model saw its own copy)
MAX_DIFF_LINES = 400
_EDIT_TOOLS = ("edit_file", "multi_edit", "write_file")


def _clip(text: str, limit: int = MAX_TOOL_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


def usage_dict(u: Usage) -> dict[str, int]:
    """The normalised usage numbers (``input_tokens`` is the whole prompt)."""
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "reasoning_tokens": u.reasoning_tokens,
    }


def edit_diff(name: str, args: Mapping[str, Any]) -> list[str]:
    """Unified-diff lines of what an edit tool call changes; [] for other tools.

    Built from the call's own arguments (the replaced and the new text), so
    showing a diff never reads a file the call names.
    """
    if name not in _EDIT_TOOLS:
        return []
    import difflib  # only when an edit is shown

    path = str(args.get("path") or "")
    if name == "write_file":
        pairs = [("", str(args.get("content") or ""))]
    elif name == "edit_file":
        pairs = [(str(args.get("old_string") or ""), str(args.get("new_string") or ""))]
    else:
        edits = args.get("edits")
        items = edits if isinstance(edits, list) else []
        pairs = [
            (str(e.get("old_string") or ""), str(e.get("new_string") or ""))
            for e in items
            if isinstance(e, dict)
        ]
    lines: list[str] = []
    for old, new in pairs:
        lines.extend(
            difflib.unified_diff(
                old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=3
            )
        )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return lines


def _tool_card(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    args = arguments_object(arguments)
    return {
        "call_id": call_id,
        "name": name,
        "arguments": _clip(arguments, 4096),
        "summary": summarize_call(name, args),
        "diff": edit_diff(name, args),
    }


def event_payload(event: Event) -> dict[str, Any] | None:
    """The browser form of one Runner event (None for ApprovalRequested: see below)."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ReasoningDelta):
        return {"type": "reasoning", "text": event.text}
    if isinstance(event, StepStart):
        return {"type": "step", "step": event.step}
    if isinstance(event, ToolStart):
        return {"type": "tool_start", "read_only": event.read_only,
                **_tool_card(event.call_id, event.name, event.arguments)}  # fmt: skip
    if isinstance(event, ToolEnd):
        return {
            "type": "tool_end",
            "call_id": event.call_id,
            "name": event.name,
            "content": _clip(event.content),
            "is_error": event.is_error,
            "blocked": event.blocked,
            "seconds": round(event.seconds, 3),
        }
    if isinstance(event, WebSearch):
        return _search_card(event.call_id, event.query,
                            [{"title": r.title, "url": r.url} for r in event.results],
                            event.error)  # fmt: skip
    if isinstance(event, SandboxEscape):
        fields = ("call_id", "command", "justification", "granted", "detail")
        return _escape_card({k: getattr(event, k) for k in fields})
    if isinstance(event, Phase):  # coordination codes and ids only, never user text
        return {"type": "phase", "phase": event.phase, "route": event.route,
                "reason": event.reason, "plan_id": event.plan_id, "status": event.status,
                "stats": dict(event.stats)}  # fmt: skip
    if isinstance(event, UsageReport):
        return {"type": "usage", "step": event.step, **usage_dict(event.usage)}
    if isinstance(event, SubagentProgress):  # live counters of one sub-agent (issue 36)
        return {"type": "subagent", **event.as_dict()}
    if isinstance(event, Notice):
        return {"type": "notice", "kind": event.kind, "text": event.text}
    if isinstance(event, Done):
        return {"type": "done", "result": event.result, "reason": event.reason,
                "steps": event.steps}  # fmt: skip
    if isinstance(event, Error):
        return {"type": "error", "message": event.message or type(event.error).__name__}
    return None


def _search_card(call_id: str, query: str, results: Any, error: str) -> dict[str, Any]:
    """A provider-side web search; the page links only http(s) URLs."""
    hits = [
        {"title": str(r.get("title") or ""), "url": str(r.get("url") or "")}
        for r in (results if isinstance(results, list) else [])
        if isinstance(r, Mapping)
    ]
    return {"type": "web_search", "call_id": call_id, "query": query, "results": hits,
            "error": error}  # fmt: skip


def _escape_card(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The decision on re-running a bash command outside the sandbox."""
    return {
        "type": "sandbox_escape",
        "call_id": str(rec.get("call_id", "")),
        "command": str(rec.get("command", "")),
        "justification": str(rec.get("justification", "")),
        "granted": bool(rec.get("granted")),
        "detail": str(rec.get("detail", "")),
    }


def approval_payload(approval_id: str, request: Any, preview: str = "") -> dict[str, Any]:
    """An approval card: what is asked, why, the choices and the exact rule they would save.

    ``preview`` is the rule simulator's account of what the rule would have
    approved before (shown next to "always allow").
    """
    args = dict(getattr(request, "args", {}) or {})
    name = str(request.tool_name)
    return {
        "type": "approval",
        "id": approval_id,
        "tool": name,
        "summary": str(request.summary),
        "reason": str(request.reason or ""),
        "rule": str(request.suggested_rule or ""),
        "alternative_rule": str(getattr(request, "alternative_rule", "") or ""),
        "fresh": bool(getattr(request, "fresh", False)),
        "choices": [c.value for c in request.choices],
        "diff": edit_diff(name, args),
        "command": str(args.get("command") or ""),  # bash, or its unsandboxed retry
        "preview": preview,
    }


display_user_text = typed_text  # a stored user message as the user typed it


def history_items(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as the page shows it: user, reasoning, assistant and tool items."""
    items: list[dict[str, Any]] = []
    cards: dict[str, dict[str, Any]] = {}
    for rec in records:
        kind = rec.get("type")
        if kind == "checkpoint":
            items.append({"type": "notice", "kind": "compaction", "text": "context compacted"})
            continue
        if kind == "web_search":
            items.append(_search_card(str(rec.get("id", "")), str(rec.get("query", "")),
                                      rec.get("results"), str(rec.get("error", ""))))  # fmt: skip
            continue
        if kind == "sandbox_escape":
            items.append(_escape_card(rec))
            continue
        if kind != "message" or not isinstance(rec.get("message"), Mapping):
            continue
        msg = rec["message"]
        role, content = msg.get("role"), str(msg.get("content") or "")
        if role == "user":
            items.append({"type": "user", "text": display_user_text(content)})
        elif role == "assistant":
            if msg.get("reasoning"):
                items.append({"type": "reasoning", "text": str(msg["reasoning"])})
            if content:
                items.append({"type": "assistant", "text": content})
            for call in msg.get("tool_calls") or []:
                if not isinstance(call, Mapping):
                    continue
                card = {"type": "tool", "result": None, **_tool_card(
                    str(call.get("id", "")), str(call.get("name", "")),
                    str(call.get("arguments", "{}")))}  # fmt: skip
                cards[card["call_id"]] = card
                items.append(card)
        elif role == "tool":
            answered = cards.get(str(msg.get("tool_call_id", "")))
            if answered is not None:
                answered["result"] = _clip(content)
    return items
