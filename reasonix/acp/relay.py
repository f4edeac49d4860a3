"""One prompt turn: Runner events in, ``session/update`` notifications and questions out.

The relay consumes the runtime's Runner stream (it never reaches into the
agent) and keeps the editor's view of the turn current:

- text and thinking deltas → ``agent_message_chunk`` / ``agent_thought_chunk``;
- tool calls → ``tool_call`` when first seen, ``tool_call_update`` with
  ``in_progress`` when they start and ``completed``/``failed`` with their
  content (diffs of the files they changed, the terminal that ran them, or
  their text) when they end; ``todo_write`` also replaces the ``plan``;
- an approval request → ``session/request_permission`` with the proposed
  diff; the answer goes back to the gate (see :mod:`.permissions`);
- usage → ``usage_update`` (context used and size, cumulative cost);
- the Coordinator's plans (a planner's, or Plan mode's ``exit_plan_mode``) →
  ``plan`` with their steps; a provider-side web search → a ``fetch`` tool
  call with its results; a posture changed during the turn →
  ``current_mode_update``.

A call the gate asks about has not started yet, so its id is found in the
model's reply, which the agent stored in the transcript before running tools.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
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
from reasonix.agent.telemetry import estimate_cost
from reasonix.boot import Runtime
from reasonix.cancel import Cancel
from reasonix.errors import Cancelled
from reasonix.permission import ApprovalChoice
from reasonix.provider.types import arguments_object
from reasonix.tool.builtin._preview import proposed_change

from .permissions import options_for, read_answer, save_deny_rule
from .rpc import ConnectionClosed, RpcError
from .toolcalls import KINDS, CallBoard, describe, diff_content, text_content

__all__ = ["STOP_REASONS", "TurnRelay"]

STOP_REASONS = {
    "complete": "end_turn",
    "max_steps": "max_turn_requests",
    "cancelled": "cancelled",
    "max_tokens": "max_tokens",  # the output limit cut the answer (issue 33)
    "refusal": "refusal",
    "content_filter": "refusal",  # ACP has no filter reason: the provider refused
}
_PLAN_STATUSES = ("pending", "in_progress", "completed")


if TYPE_CHECKING:
    from typing import Any

    from reasonix.command.api import CommandTurn

    Send = Callable[[dict[str, Any]], None]
    Ask = Callable[[str, dict[str, Any], Cancel], Any]


def chunk(kind: str, text: str) -> dict[str, Any]:
    """A message/thought chunk update holding ``text``."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def plan_from_steps(steps: list[str]) -> dict[str, Any]:
    """A ``plan`` update from a Coordinator plan's steps (all pending when the plan is new)."""
    entries = [{"content": s, "priority": "medium", "status": "pending"} for s in steps if s]
    return {"sessionUpdate": "plan", "entries": entries}


def plan_update(todos: Any) -> dict[str, Any] | None:
    """A ``plan`` update from ``todo_write`` arguments (None when they hold no list)."""
    if not isinstance(todos, list):
        return None
    entries = []
    for item in todos:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            continue
        status = item.get("status")
        entries.append(
            {
                "content": item["content"].strip(),
                "priority": "medium",  # todo_write has no priorities; ACP requires one
                "status": status if status in _PLAN_STATUSES else "pending",
            }
        )
    return {"sessionUpdate": "plan", "entries": entries}


class TurnRelay:
    """Translates one turn of ``rt.runner`` for the editor."""

    def __init__(
        self, rt: Runtime, session_id: str, send: Send, ask: Ask, board: CallBoard
    ) -> None:
        self.rt, self.session_id = rt, session_id
        self.send, self.ask, self.board = send, ask, board
        self.cwd = Path(rt.workspace)
        self._reply: list[dict[str, Any]] | None = None  # the model's tool calls this step
        self._asked: set[str] = set()
        self._synthetic = 0
        self._mode = rt.mode

    # -- the turn ---------------------------------------------------------------
    def run(self, text: str, cancel: Cancel, command: CommandTurn | None = None) -> str:
        """Run the turn; the ACP stop reason (raises the turn's error when it failed).

        ``command``: a command file's CommandTurn (its allowed-tools and shell lines)."""
        from reasonix.boot.command_turn import run_turn

        reason = "end_turn"
        try:
            for event in run_turn(self.rt, text, cancel, command):
                if isinstance(event, Done):
                    reason = STOP_REASONS.get(event.reason, "end_turn")
                elif isinstance(event, Error):
                    if cancel.cancelled:
                        return "cancelled"
                    raise event.error
                else:
                    self._event(event, cancel)
        finally:
            self.board.forget_turn()
        return "cancelled" if cancel.cancelled else reason

    def _event(self, event: Event, cancel: Cancel) -> None:
        if isinstance(event, TextDelta):
            self.send(chunk("agent_message_chunk", event.text))
        elif isinstance(event, ReasoningDelta):
            self.send(chunk("agent_thought_chunk", event.text))
        elif isinstance(event, StepStart):
            self._reply, self._asked = None, set()  # ids are per reply
            self.board.begin_step()
        elif isinstance(event, ApprovalRequested):
            self._approve(event, cancel)
        elif isinstance(event, ToolStart):
            self._started(event)
        elif isinstance(event, ToolEnd):
            self._ended(event)
        elif isinstance(event, UsageReport):
            self._usage(event)
        elif isinstance(event, SubagentProgress):
            self._subagent(event)
        elif isinstance(event, Notice) and event.kind != "cancelled":
            self.send(chunk("agent_thought_chunk", f"\n[{event.text}]\n"))
        elif isinstance(event, Phase) and event.phase == "plan" and event.plan_id:
            self._plan(event.plan_id)
        elif isinstance(event, WebSearch):
            self._web_search(event)
        elif isinstance(event, SandboxEscape):
            verdict = "granted" if event.granted else "refused"
            self.send(
                chunk("agent_thought_chunk", f"\n[sandbox escape {verdict}: {event.detail}]\n")
            )
        if self.rt.mode != self._mode:  # exit_plan_mode or a command changed the posture
            self._mode = self.rt.mode
            self.send({"sessionUpdate": "current_mode_update", "currentModeId": self._mode})

    # -- the Coordinator and the provider's own tools ---------------------------------
    def _plan(self, plan_id: str | None) -> None:
        """The steps of a saved plan (its record in the transcript; None: the newest)."""
        for rec in reversed(self.rt.session.records()):
            plan = rec.get("plan") if rec.get("type") == "plan" else None
            if isinstance(plan, dict) and plan_id in (None, plan.get("id")):
                raw = plan.get("sections")
                sections: dict[str, Any] = raw if isinstance(raw, dict) else {}
                steps = sections.get("steps") or sections.get("summary") or []
                if isinstance(steps, list):
                    self.send(plan_from_steps([str(s) for s in steps]))
                return

    def _subagent(self, event: SubagentProgress) -> None:
        """A sub-agent's live counters, on the tool call that started it (issue 36).

        ACP has no sub-agent object: the counters ride in the call's ``_meta``
        (``reasonix/subagent``), which clients that do not know it ignore."""
        if event.call_id and self.board.known(event.call_id):
            self.board.update(event.call_id, {"_meta": {"reasonix/subagent": event.as_dict()}})

    def _web_search(self, event: WebSearch) -> None:
        links = [
            {"type": "content", "content": {"type": "resource_link", "uri": r.url,
                                            "name": r.title or r.url}}
            for r in event.results
        ]  # fmt: skip
        title = f"Web search: {event.query}" if event.query else "Web search"
        self.board.announce(event.call_id, {"title": title, "kind": "fetch", "status": "pending",
                                            "rawInput": {"query": event.query}})  # fmt: skip
        status = "failed" if event.error else "completed"
        content = links or [text_content(event.error or "no results")]
        self.board.update(event.call_id, {"status": status, "content": content})

    # -- tool calls -------------------------------------------------------------
    def _calls(self) -> list[dict[str, Any]]:
        """The tool calls of the model's latest reply (from the transcript)."""
        if self._reply is None:
            self._reply = []
            for rec in reversed(self.rt.session.records()):
                msg = rec.get("message") if rec.get("type") == "message" else None
                if isinstance(msg, dict) and msg.get("role") == "assistant":
                    calls = msg.get("tool_calls")
                    self._reply = [c for c in calls if isinstance(c, dict)] if calls else []
                    break
        return self._reply

    def _call(self, call_id: str) -> dict[str, Any] | None:
        return next((c for c in self._calls() if c.get("id") == call_id), None)

    def _announce(self, call_id: str, name: str, arguments: str, status: str) -> None:
        if not self.board.known(call_id):
            self.board.announce(call_id, {**describe(name, arguments, self.cwd), "status": status})

    def _started(self, event: ToolStart) -> None:
        if self.board.known(event.call_id):
            self.board.update(event.call_id, {"status": "in_progress"})
        else:
            self._announce(event.call_id, event.name, event.arguments, "in_progress")

    def _ended(self, event: ToolEnd) -> None:
        call = self._call(event.call_id)
        arguments = str(call.get("arguments") or "{}") if call else "{}"
        self._announce(event.call_id, event.name, arguments, "pending")
        content = [diff_content(c) for c in self.board.take_changes(event.call_id)]
        terminal = self.board.terminal_of(event.call_id)
        if terminal is not None:
            content.append({"type": "terminal", "terminalId": terminal})
        else:
            content.append(text_content(event.content))
        status = "failed" if event.is_error else "completed"
        self.board.update(event.call_id, {"status": status, "content": content})
        if event.name == "todo_write" and not event.is_error:
            plan = plan_update(arguments_object(arguments).get("todos"))
            if plan is not None:
                self.send(plan)

    # -- approvals --------------------------------------------------------------
    def _match(self, request: Any) -> dict[str, Any] | None:
        """The reply's call this approval is about: same tool, same arguments, not asked yet.

        A tool that asks by itself (``exit_plan_mode``) sends no arguments with
        its question; then the first unasked call of that tool is the one.
        """
        same = [
            c for c in self._calls()
            if str(c.get("id") or "") not in self._asked and c.get("name") == request.tool_name
        ]  # fmt: skip
        for call in same:
            if arguments_object(str(call.get("arguments") or "")) == request.args:
                return call
        return same[0] if same and not request.args else None

    def _approve(self, event: ApprovalRequested, cancel: Cancel) -> None:
        request = event.request
        call = self._match(request)
        if call is not None:
            call_id, arguments = str(call["id"]), str(call.get("arguments") or "{}")
            fields = describe(request.tool_name, arguments, self.cwd)
        else:  # a question raised inside a call (write scope, a memory write)
            self._synthetic += 1
            call_id = f"approval-{self._synthetic}"
            kind = KINDS.get(request.tool_name, "other")
            fields = {"title": request.summary, "kind": kind, "rawInput": request.args}
        self._asked.add(call_id)
        if KINDS.get(request.tool_name) == "switch_mode":  # a plan to approve: show its steps
            self._plan(None)
        change = proposed_change(request.tool_name, request.args, self.rt.tool_ctx)
        detail = getattr(request, "detail", "") or request.reason or request.summary
        content = [diff_content(change)] if change is not None else [text_content(detail)]
        simulated = _rule_preview(request)
        if simulated:  # what "always allow" would also have approved before (the simulator)
            content.append(text_content(simulated))
        tool_call = {"toolCallId": self.board.acp_id(call_id), **fields, "status": "pending",
                     "content": content}  # fmt: skip
        self._announce_pending(call_id, tool_call)
        params = {
            "sessionId": self.session_id,
            "toolCall": tool_call,
            "options": options_for(request),
        }
        try:
            answer = read_answer(self.ask("session/request_permission", params, cancel), request)
        except (RpcError, ConnectionClosed, Cancelled):
            event.answer(None)  # no answer is a deny
            self._close_synthetic(call_id, call, ApprovalChoice.DENY)
            return
        event.answer(answer.choice)
        if answer.deny_rule:
            note = save_deny_rule(self.rt.gate, self.rt.workspace, answer.deny_rule)
            if note:
                self.send(chunk("agent_thought_chunk", f"\n[{note}]\n"))
        self._close_synthetic(call_id, call, answer.choice)

    def _announce_pending(self, call_id: str, tool_call: dict[str, Any]) -> None:
        fields = {k: v for k, v in tool_call.items() if k != "toolCallId"}
        if self.board.known(call_id):
            self.board.update(call_id, {"content": fields["content"]})
        else:
            self.board.announce(call_id, fields)

    def _close_synthetic(self, call_id: str, call: Any, choice: ApprovalChoice) -> None:
        """A question without its own tool call is finished as soon as it is answered."""
        if call is None:
            status = "failed" if choice is ApprovalChoice.DENY else "completed"
            self.board.update(call_id, {"status": status})

    # -- usage ------------------------------------------------------------------
    def _usage(self, event: UsageReport) -> None:
        resolved = self.rt.resolved
        size = resolved.provider.context_window_for(resolved.model)
        used = event.usage.input_tokens + event.usage.output_tokens
        update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": size}
        cost = estimate_cost(self.rt.telemetry.total, self.rt.price)
        if cost is not None:
            update["cost"] = {"amount": cost.amount, "currency": cost.currency}
        self.send(update)


def _rule_preview(request: Any) -> str:
    """The rule simulator's answer for the rule "always allow" would save ("" when none)."""
    preview, rule = getattr(request, "preview", None), str(request.suggested_rule or "")
    if preview is None or not rule or ApprovalChoice.ALWAYS not in request.choices:
        return ""
    try:
        return f"Always allow {rule}? {preview(rule)}"
    except Exception:  # noqa: BLE001 - no preview is never a reason to fail the question
        return ""
