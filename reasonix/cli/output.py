"""Headless output: events as JSON lines, redacted lifecycle events, the result object.

The final result object follows DESIGN §4 (Claude Code's shape) plus the cost
estimate and the delegation counters of spec §3.17 (SUB-27).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from reasonix.agent.events import (
    ApprovalRequested,
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
from reasonix.agent.telemetry import Telemetry, estimate_cost, usage_fields

if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["EventLog", "RunOutcome", "event_json", "redacted_event", "result_object"]


def event_json(event: Event) -> dict[str, Any] | None:
    """The stream-json form of one event (None for events not shown)."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ReasoningDelta):
        return {"type": "reasoning", "text": event.text}
    if isinstance(event, StepStart):
        return {"type": "request", "step": event.step}
    if isinstance(event, ToolStart):
        return {
            "type": "tool_start",
            "id": event.call_id,
            "name": event.name,
            "arguments": event.arguments,
            "read_only": event.read_only,
        }
    if isinstance(event, ToolEnd):
        return {
            "type": "tool_end",
            "id": event.call_id,
            "name": event.name,
            "is_error": event.is_error,
            "blocked": event.blocked,
            "content": event.content,
            "duration_ms": int(event.seconds * 1000),
        }
    if isinstance(event, UsageReport):
        return {"type": "usage", "step": event.step, "usage": usage_fields(event.usage)}
    if isinstance(event, WebSearch):
        return {
            "type": "web_search",
            "id": event.call_id,
            "query": event.query,
            "results": [{"title": r.title, "url": r.url} for r in event.results],
            "error": event.error,
        }
    if isinstance(event, SandboxEscape):
        return {
            "type": "sandbox_escape",
            "id": event.call_id,
            "command": event.command,
            "justification": event.justification,
            "granted": event.granted,
            "detail": event.detail,
        }
    if isinstance(event, Notice):
        return {"type": "notice", "kind": event.kind, "text": event.text}
    if isinstance(event, SubagentProgress):  # live counters of one sub-agent (issue 36)
        return {"type": "subagent", **event.as_dict()}
    if isinstance(event, Phase):
        obj: dict[str, Any] = {"type": "phase", "phase": event.phase, "route": event.route,
                               "reason": event.reason, "plan_id": event.plan_id,
                               "status": event.status}  # fmt: skip
        if event.stats:
            obj["stats"] = dict(event.stats)
        return obj
    if isinstance(event, ApprovalRequested):
        return {"type": "approval_request", "tool": str(getattr(event.request, "tool_name", ""))}
    if isinstance(event, Done):
        return None  # the result object follows
    if isinstance(event, Error):
        return {"type": "error", "error": type(event.error).__name__, "message": event.message}
    return None


# What --events-jsonl keeps: lifecycle events only, minus every field that could
# carry a prompt, an argument, an output or a path. A web search keeps its result
# count; a sandbox escape its outcome (granted, and the one-word detail).
_LIFECYCLE = frozenset(
    {
        "request", "tool_start", "tool_end", "usage", "notice", "approval_request", "error",
        "web_search", "sandbox_escape", "phase", "subagent",
    }
)  # fmt: skip
# Questions the host itself asks (not tools): their names are ours, not model output.
_HOST_QUESTIONS = frozenset({"write scope", "sandbox escape"})
# a sub-agent's label may be a fleet item id the model wrote
_SECRET_FIELDS = frozenset(
    {"text", "arguments", "content", "message", "query", "results", "command", "justification",
     "label"}
)  # fmt: skip


def redacted_event(event: Event, tools: Collection[str] | None = None) -> dict[str, Any] | None:
    """The ``--events-jsonl`` form: lifecycle only — no prompts, arguments, outputs or paths.

    ``tools`` names the run's registered tools; any other tool name (one the
    model made up, which is model output and may quote the prompt) is logged
    as ``"(unknown)"``. None keeps every name.
    """
    if isinstance(event, Done):
        return {"event": "done", "reason": event.reason, "steps": event.steps}
    obj = event_json(event)
    if obj is None or obj["type"] not in _LIFECYCLE:
        return None
    kind = obj.pop("type")
    if kind == "web_search":
        obj["result_count"] = len(obj["results"])
    for key in ("name", "tool"):
        if key in obj and tools is not None and obj[key] not in {*tools, *_HOST_QUESTIONS}:
            obj[key] = "(unknown)"
    return {"event": kind, **{k: v for k, v in obj.items() if k not in _SECRET_FIELDS}}


class EventLog:
    """Writes redacted lifecycle events to a file, one JSON object per line."""

    def __init__(self, fh: IO[str] | None) -> None:
        self.fh = fh
        self.t0 = time.monotonic()

    def write(self, record: dict[str, Any] | None) -> None:
        """Append one record with a relative timestamp (no wall-clock time: nothing to leak)."""
        if self.fh is None or record is None:
            return
        record = {"t_ms": int((time.monotonic() - self.t0) * 1000), **record}
        self.fh.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.fh.flush()

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self.fh is not None:
            self.fh.close()
            self.fh = None


# max_tokens: the answer is there, cut at the output limit; the subtype says so (issue 33)
# budget: a run budget (--max-cost/--max-tokens/--max-time) is spent, state saved (issue 36)
_OK_REASONS = frozenset(
    {"complete", "plan_saved", "awaiting_approval", "goal_paused", "max_tokens", "budget"}
)
# subtypes beyond success / error_during_execution, by stop reason
_SUBTYPES = {
    "max_tokens": "truncated",
    "refusal": "refused",
    "content_filter": "filtered",
    "budget": "budget_exhausted",
}


class RunOutcome:
    """What one headless run ended with, gathered while consuming events.

    ``reason`` is one of complete | max_steps | cancelled | error | plan_saved |
    awaiting_approval | goal_paused | goal_blocked | plan_rejected | max_tokens | refusal |
    content_filter | budget; ``error_kind`` is errors.classify()'s ("context.exhausted",
    "provider.transient", …); ``extra`` always holds ``route`` and ``plan_id`` (None until
    known, COORD telemetry) unless given. A plain class, not a dataclass: an accumulator
    every run fills in place (issue 39).
    """

    def __init__(
        self,
        result: str = "",
        reason: str = "",
        error: str = "",
        error_type: str = "",
        error_kind: str = "",
        num_turns: int = 0,
        session_id: str = "",
        model: str = "",
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.result = result
        self.reason = reason
        self.error = error
        self.error_type = error_type
        self.error_kind = error_kind
        self.num_turns = num_turns
        self.session_id = session_id
        self.model = model
        self.extra: dict[str, Any] = {"route": None, "plan_id": None} if extra is None else extra

    @property
    def ok(self) -> bool:
        """True when the run ended where it should: the task done, a plan saved or
        waiting for approval, a goal paused at its budget."""
        return self.reason in _OK_REASONS and not self.error


def result_object(
    outcome: RunOutcome,
    telemetry: Telemetry,
    duration_ms: int,
    price: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The final ``{"type":"result", …}`` object of DESIGN §4."""
    total = telemetry.total
    cost = estimate_cost(total, price)
    obj: dict[str, Any] = {
        "type": "result",
        "subtype": _SUBTYPES.get(outcome.reason)
        or ("success" if outcome.ok else "error_during_execution"),
        "is_error": not outcome.ok,
        "duration_ms": duration_ms,
        "num_turns": outcome.num_turns,
        "result": outcome.result,
        "session_id": outcome.session_id,
        "usage": usage_fields(total),
        "stop_reason": outcome.reason or "error",
        "model": outcome.model,
        "cache_hit_ratio": (
            round(telemetry.cache_hit_ratio, 4) if telemetry.cache_hit_ratio is not None else None
        ),
        "cost": {"amount": cost.amount, "currency": cost.currency} if cost else "unknown",
        "total_cost_usd": cost.amount if cost and cost.currency == "USD" else None,
    }
    obj["cache_breaks"] = []  # forecasts of prompt-cache losses this run took
    if outcome.error:
        obj["error"] = {"type": outcome.error_type, "message": outcome.error}
        if outcome.error_kind:
            obj["error"]["kind"] = outcome.error_kind
    obj.update(telemetry.counters)
    obj.update(outcome.extra)
    return obj
