"""Running one response's tool calls: gate, parallel readers, ordered writers.

Calls are taken in the model's order. A run of consecutive read-only calls
forms a batch whose members run in parallel threads; a writer runs alone,
after everything before it and before anything after it, so a read issued
after a write sees the write. Every call passes the permission gate first;
a refusal, an unknown tool or a crashing tool becomes a tool result the model
can read (LOOP-5, ERR-3). Results come back in call order.

This runs on a worker thread; it reports through ``emit`` so the agent's
generator can yield the events (including approval requests) as they occur.
"""

from __future__ import annotations

import json
import threading
import time
from _queue import SimpleQueue
from collections.abc import Callable, Generator

from reasonix.cancel import Cancel
from reasonix.lazy import replace
from reasonix.permission.modes import Decision
from reasonix.provider.types import ToolCall
from reasonix.tool import Registry, Tool, ToolContext, ToolResult

from .events import ApprovalRequested, Event, Notice, SandboxEscape, ToolEnd, ToolStart
from .ports import GateLike

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["EventApprover", "run_calls", "run_in_worker"]

Emit = Callable[[Event], None]


class EventApprover:
    """A Gate approver that turns each approval request into an ApprovalRequested event.

    The agent points :attr:`emit` and :attr:`cancel` at the running turn; the
    gate calls this from the tool worker thread, which then waits for the
    consumer's answer (None — deny — when nobody answers or the turn ends).
    """

    def __init__(self) -> None:
        self.emit: Emit | None = None
        self.cancel: Cancel = Cancel()
        self.notify: Callable[[str], None] | None = None  # the Notification hooks

    def __call__(self, request: Any) -> Any:
        if self.emit is None:
            return None
        if self.notify is not None:
            self.notify(f"Reasonix needs your permission: {getattr(request, 'summary', '')}")
        event = ApprovalRequested(request)
        self.emit(event)
        return event.wait(self.cancel)


def _parse(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _execute(tool: Tool, call: ToolCall, ctx: ToolContext, emit: Emit) -> ToolResult:
    emit(ToolStart(call.id, call.name, call.arguments, bool(tool.read_only)))
    start = time.monotonic()
    try:
        result = tool.execute(call.arguments, ctx)
    except Exception as err:  # noqa: BLE001 - a tool bug becomes a result, never a crash
        result = ToolResult.error(f"{call.name}: internal error {type(err).__name__}: {err}")
    escape = result.metadata.get("sandbox_escape")
    if ctx.cancel.cancelled and not result.is_error:
        result = ToolResult.error(f"{call.name}: cancelled by the user", partial=result.content)
    result = _post_tool_hooks(call, result, ctx, emit)
    if isinstance(escape, dict):  # the bash tool decided an unsandboxed retry (§3.7, §9)
        result.metadata["sandbox_escape"] = escape
        emit(
            SandboxEscape(
                call.id,
                str(escape.get("command", "")),
                str(escape.get("justification", "")),
                bool(escape.get("granted")),
                str(escape.get("detail", "")),
            )
        )
    emit(ToolEnd(call.id, call.name, result.content, result.is_error, time.monotonic() - start))
    return result


def _post_tool_hooks(
    call: ToolCall, result: ToolResult, ctx: ToolContext, emit: Emit
) -> ToolResult:
    """PostToolUse: the hook sees the result; what it says back is added for the model."""
    hooks = ctx.extra.get("hooks")
    if hooks is None or not hooks.has("PostToolUse"):
        return result
    from .hooks import tool_input

    fields = {
        "tool_input": tool_input(call.name, _parse(call.arguments)),
        "tool_response": {"content": result.content, "is_error": result.is_error},
    }
    outcome = hooks.run("PostToolUse", fields, call.name)
    for text in outcome.notices:
        emit(Notice("hook", text))
    extra = [f"[PostToolUse hook] {outcome.reason}"] if outcome.blocked else []
    extra += outcome.context
    if not extra:
        return result
    content = result.content + "\n\n" + "\n".join(extra)
    return replace(result, content=content)


def _pre_tool_hooks(
    call: ToolCall, args: dict[str, Any], ctx: ToolContext, emit: Emit
) -> tuple[str, str]:
    """PreToolUse: ("deny", reason), ("allow", "") or ("", "") when no hook decided."""
    hooks = ctx.extra.get("hooks")
    if hooks is None or not hooks.has("PreToolUse"):
        return "", ""
    from .hooks import tool_input

    outcome = hooks.run("PreToolUse", {"tool_input": tool_input(call.name, args)}, call.name)
    for text in outcome.notices:
        emit(Notice("hook", text))
    if outcome.blocked:
        return "deny", outcome.reason
    return ("allow", "") if outcome.permission == "allow" else ("", "")


def _refuse(call: ToolCall, text: str, emit: Emit, *, blocked: bool = False) -> ToolResult:
    emit(ToolEnd(call.id, call.name, text, True, 0.0, blocked=blocked))
    return ToolResult.error(text)


def _reads_only(tool: Tool, args: dict[str, Any]) -> bool:
    """Read-only for this call: the static flag, or a per-call ``reads_only(args)`` hint
    (``use_capability`` paging the session's own tool result)."""
    hint = getattr(tool, "reads_only", None)
    return bool(tool.read_only) or (callable(hint) and bool(hint(args)))


def _admit(
    call: ToolCall,
    registry: Registry,
    gate: GateLike | None,
    cancel: Cancel,
    emit: Emit,
    ctx: ToolContext | None = None,
) -> tuple[Tool, dict[str, Any]] | ToolResult:
    """The tool to run plus per-call ``ctx.extra`` additions, or the result replacing the run.

    A self-gated tool (``metadata["self_gated"]``: the memory writers) gets only
    explicit rules from the gate; an explicit ask reaches it as ``memory_rule``.
    """
    if cancel.cancelled:
        return _refuse(call, f"{call.name}: not run, the turn was cancelled", emit)
    tool = registry.get(call.name)
    if tool is None:
        known = ", ".join(registry.names()) or "none"
        return _refuse(call, f"unknown tool {call.name!r}; available tools: {known}", emit)
    extra: dict[str, Any] = {}
    hook = ("", "")
    if ctx is not None:
        hook = _pre_tool_hooks(call, _parse(call.arguments), ctx, emit)
        if hook[0] == "deny":
            text = f"blocked: {call.name} was not run (PreToolUse hook: {hook[1]})"
            return _refuse(call, text, emit, blocked=True)
    if gate is not None:
        args = _parse(call.arguments)
        self_gated = bool(getattr(tool, "metadata", {}).get("self_gated"))
        try:
            if self_gated:
                outcome = gate.check(call.name, bool(tool.read_only), args, self_gated=True)
            elif hook[0] == "allow":
                outcome = gate.check(call.name, _reads_only(tool, args), args, hook_allow=True)
            else:
                outcome = gate.check(call.name, _reads_only(tool, args), args)
            allowed, message = bool(outcome.allowed), str(getattr(outcome, "message", ""))
        except Exception as err:  # noqa: BLE001 - a gate failure must fail closed, not crash
            allowed, message = False, f"permission check failed: {err}"
        if not allowed:
            reason = message or "denied by the permission policy"
            return _refuse(call, f"blocked: {call.name} was not run ({reason})", emit, blocked=True)
        if self_gated and getattr(outcome, "decision", None) is Decision.ASK:
            extra["memory_rule"] = Decision.ASK
    recorder = ctx.extra.get("checkpoints") if ctx is not None else None
    if recorder is not None and not _reads_only(tool, _parse(call.arguments)):
        recorder.before_write()  # /rewind: snapshot once, before the turn's first write
        for note in recorder.notices:
            emit(Notice("checkpoint", note))
        recorder.notices.clear()
    return tool, extra


def run_calls(
    calls: list[ToolCall],
    registry: Registry,
    gate: GateLike | None,
    ctx: ToolContext,
    cancel: Cancel,
    emit: Emit,
) -> list[ToolResult]:
    """Run ``calls`` (readers in parallel batches, writers in order); results in call order."""
    ctx = replace(ctx, cancel=cancel)
    results: list[ToolResult | None] = [None] * len(calls)
    i = 0
    while i < len(calls):
        batch = [i]
        if _is_reader(registry, calls[i]):
            while batch[-1] + 1 < len(calls) and _is_reader(registry, calls[batch[-1] + 1]):
                batch.append(batch[-1] + 1)
        admitted: list[tuple[int, Tool, ToolContext]] = []
        for j in batch:
            got = _admit(calls[j], registry, gate, cancel, emit, ctx)
            if isinstance(got, ToolResult):
                results[j] = got
            else:
                tool, extra = got
                # ctx.extra stays the shared dict unless this call adds to it (todos live there)
                extras = {**ctx.extra, **extra} if extra else ctx.extra
                call_ctx = replace(ctx, extra=extras, call_id=calls[j].id)
                admitted.append((j, tool, call_ctx))
        _run_batch(admitted, calls, emit, results)
        i = batch[-1] + 1
    return [r if r is not None else ToolResult.error("not run") for r in results]


def _is_reader(registry: Registry, call: ToolCall) -> bool:
    tool = registry.get(call.name)
    return tool is not None and bool(tool.read_only)


def _run_batch(
    admitted: list[tuple[int, Tool, ToolContext]],
    calls: list[ToolCall],
    emit: Emit,
    results: list[ToolResult | None],
) -> None:
    if len(admitted) == 1:
        j, tool, ctx = admitted[0]
        results[j] = _execute(tool, calls[j], ctx, emit)
        return

    def work(j: int, tool: Tool, ctx: ToolContext) -> None:
        results[j] = _execute(tool, calls[j], ctx, emit)

    threads = [threading.Thread(target=work, args=a, daemon=True) for a in admitted]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_in_worker(
    calls: list[ToolCall],
    registry: Registry,
    gate: GateLike | None,
    ctx: ToolContext,
    cancel: Cancel,
    approver: EventApprover | None,
) -> Generator[Event, None, list[ToolResult]]:
    """:func:`run_calls` on a worker thread, yielding its events; returns the results.

    The generator's consumer answers approval requests between events; one
    left unanswered is denied. Closing the generator cancels the calls.
    """
    # put/get only: the C SimpleQueue, without the `queue` module (and its heapq) to import
    events: SimpleQueue[Event | None] = SimpleQueue()
    results: list[ToolResult] = []
    if approver is not None:
        approver.emit, approver.cancel = events.put, cancel

    def work() -> None:
        try:
            results.extend(run_calls(calls, registry, gate, ctx, cancel, events.put))
        finally:
            events.put(None)

    worker = threading.Thread(target=work, name="reasonix-tools", daemon=True)
    worker.start()
    drained = False
    try:
        while (event := events.get()) is not None:
            yield event
            if isinstance(event, ApprovalRequested):
                event.answer(None)  # unanswered means deny; a no-op when answered
        drained = True
    finally:
        # Only an early close (the consumer stopped listening) cancels the calls.
        # `worker.is_alive()` is no test: the worker is still alive for a moment
        # after it queued the final None, and cancelling then aborted a turn that
        # had just succeeded.
        if not drained:
            cancel.cancel("turn closed")
        worker.join()
    return results
