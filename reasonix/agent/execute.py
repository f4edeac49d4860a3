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
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from reasonix.cancel import Cancel
from reasonix.lazy import replace
from reasonix.permission.modes import Decision
from reasonix.provider.types import ToolCall
from reasonix.tool import Registry, Tool, ToolContext, ToolResult

from .events import ApprovalRequested, Event, Notice, SandboxEscape, ToolEnd, ToolStart

if TYPE_CHECKING:
    from typing import Any

    from .ports import GateLike

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


def _execute(
    tool: Tool, call: ToolCall, ctx: ToolContext, emit: Emit, pre_context: list[str] | None = None
) -> ToolResult:
    emit(ToolStart(call.id, call.name, call.arguments, bool(tool.read_only)))
    start = time.monotonic()
    before = _before_write(call, ctx)
    try:
        result = tool.execute(call.arguments, ctx)
    except Exception as err:  # noqa: BLE001 - a tool bug becomes a result, never a crash
        result = ToolResult.error(f"{call.name}: internal error {type(err).__name__}: {err}")
    escape = result.metadata.get("sandbox_escape")
    if ctx.cancel.cancelled and not result.is_error:
        result = ToolResult.error(f"{call.name}: cancelled by the user", partial=result.content)
    result = _post_tool_hooks(call, result, ctx, emit, before)
    if pre_context:  # a PreToolUse hook's additionalContext reaches the model with the result
        result = replace(result, content=_with(result.content, pre_context))
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


def _base(ctx: ToolContext) -> str:
    """The directory a call's relative paths are taken against (hooks see them absolute)."""
    return str(ctx.cwd if ctx.cwd is not None else ctx.workspace)


def _with(text: str, context: Sequence[str]) -> str:
    """``text`` followed by the context hooks added for the model."""
    return "\n\n".join([text, *context]) if context else text


def _before_write(call: ToolCall, ctx: ToolContext) -> str | None:
    """A writer's file before the call, for PostToolUse's ``originalFile`` (hooks only)."""
    hooks = ctx.extra.get("hooks")
    if hooks is None or not hooks.selected("PostToolUse", {}, call.name):
        return None
    from .hook_shapes import original_text

    return original_text(call.name, _parse(call.arguments), _base(ctx))


def _post_tool_hooks(
    call: ToolCall, result: ToolResult, ctx: ToolContext, emit: Emit, before: str | None = None
) -> ToolResult:
    """PostToolUse (or PostToolUseFailure for a failed call): what the hook says is added.

    As in Claude Code, PostToolUse sees only calls that succeeded, with Claude's
    per-tool ``tool_response``; a failed call goes to PostToolUseFailure with
    ``error`` and ``is_interrupt``.
    """
    hooks = ctx.extra.get("hooks")
    event = "PostToolUseFailure" if result.is_error else "PostToolUse"
    if hooks is None or not hooks.has(event):
        return result
    from .hook_shapes import tool_input, tool_response

    args, base = _parse(call.arguments), _base(ctx)
    fields: dict[str, Any] = {"tool_input": tool_input(call.name, args, base)}
    fields["tool_use_id"] = call.id
    if result.is_error:
        fields.update(error=result.content, is_interrupt=ctx.cancel.cancelled)
    else:
        fields["tool_response"] = tool_response(call.name, args, result, before, base)
    outcome = hooks.run(event, fields, call.name)
    for text in outcome.notices:
        emit(Notice("hook", text))
    extra = [f"[{event} hook] {outcome.reason}"] if outcome.blocked else []
    extra += outcome.context
    return replace(result, content=_with(result.content, extra)) if extra else result


class _PreHooks(NamedTuple):
    """What the hooks before a call decided: a verdict, their reason, context, new arguments.

    A named tuple, not a dataclass: an immutable record made for every call (issue 39).
    """

    verdict: str = ""  # "deny" | "allow" | ""
    reason: str = ""
    context: tuple[str, ...] = ()
    args: dict[str, Any] | None = None  # the arguments after an updatedInput


def _hook_run(
    event: str, call: ToolCall, tool: Tool, args: dict[str, Any], ctx: ToolContext, emit: Emit,
    more: dict[str, Any] | None = None,
) -> _PreHooks:  # fmt: skip
    """Run PreToolUse or PermissionRequest for one call; ``args`` are ours."""
    hooks = ctx.extra.get("hooks")
    if hooks is None or not hooks.selected(event, {}, call.name):
        return _PreHooks()
    from .hook_shapes import merge_updated_input, tool_input

    sent = tool_input(call.name, args, _base(ctx))
    fields = {"tool_input": sent, "tool_use_id": call.id, **(more or {})}
    outcome = hooks.run(event, fields, call.name)
    for text in outcome.notices:
        emit(Notice("hook", text))
    context = tuple(outcome.context)
    if outcome.blocked:
        return _PreHooks("deny", outcome.reason, context)
    new_args = None
    if outcome.updated_input:
        schema = getattr(tool, "schema", None) or {}
        known = set(schema.get("properties", {})) if isinstance(schema, dict) else set()
        new_args = merge_updated_input(call.name, args, sent, outcome.updated_input, known)
    verdict = "allow" if outcome.permission == "allow" else ""
    return _PreHooks(verdict, "", context, new_args)


def _permission_request(
    call: ToolCall, tool: Tool, args: dict[str, Any], gate: GateLike, ctx: ToolContext, emit: Emit
) -> _PreHooks:
    """PermissionRequest hooks, when the policy would ask a human about this call."""
    policy = getattr(gate, "policy", None)
    hooks = ctx.extra.get("hooks")
    if policy is None or hooks is None or not hooks.has("PermissionRequest"):
        return _PreHooks()
    try:
        verdict = policy.evaluate(*_subject(call, tool, args))
    except Exception:  # noqa: BLE001 - the gate itself decides (and fails closed) below
        return _PreHooks()
    if verdict.decision is not Decision.ASK or args.get("escape_sandbox") is True:
        return _PreHooks()  # no question would be asked: the hook has nothing to answer
    rule = str(getattr(verdict, "suggested_rule", "") or "")
    suggestions = [{"type": "addRules", "rules": [{"toolName": rule}], "behavior": "allow",
                    "destination": "session"}] if rule else []  # fmt: skip
    more = {"permission_suggestions": suggestions}
    return _hook_run("PermissionRequest", call, tool, args, ctx, emit, more)


def _refuse(call: ToolCall, text: str, emit: Emit, *, blocked: bool = False) -> ToolResult:
    emit(ToolEnd(call.id, call.name, text, True, 0.0, blocked=blocked))
    return ToolResult.error(text)


def _subject(call: ToolCall, tool: Tool, args: dict[str, Any]) -> tuple[str, bool, dict[str, Any]]:
    """Name, read-only flag and arguments the permission layer judges for this call.

    Normally the call's own. A proxy call (``use_capability`` calling an MCP tool,
    the only way to reach deferred MCP tools, issue 37) is judged as the target:
    rules on ``mcp__server__tool`` and its read-only hint apply as to a direct call.
    """
    target = getattr(tool, "gate_target", None)
    got = target(args) if callable(target) else None
    if got is not None:
        return str(got[0]), bool(got[1]), dict(got[2])
    return call.name, _reads_only(tool, args), args


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
) -> tuple[Tool, dict[str, Any], ToolCall, list[str]] | ToolResult:
    """The tool to run, per-call ``ctx.extra`` additions, the call as it will run (after
    a hook's ``updatedInput``) and hook context for the model; or the result replacing
    the run.

    A self-gated tool (``metadata["self_gated"]``: the memory writers) gets only
    explicit rules from the gate; an explicit ask reaches it as ``memory_rule``.
    Arguments a hook rewrote pass the permission check as rewritten.
    """
    if cancel.cancelled:
        return _refuse(call, f"{call.name}: not run, the turn was cancelled", emit)
    tool = registry.get(call.name)
    if tool is None:
        known = ", ".join(registry.names()) or "none"
        return _refuse(call, f"unknown tool {call.name!r}; available tools: {known}", emit)
    extra: dict[str, Any] = {}
    args = _parse(call.arguments)
    hook = asked = _PreHooks()
    if ctx is not None:
        hook = _hook_run("PreToolUse", call, tool, args, ctx, emit)
        if hook.verdict == "deny":
            text = f"blocked: {call.name} was not run (PreToolUse hook: {hook.reason})"
            return _refuse(call, _with(text, hook.context), emit, blocked=True)
        if hook.args is not None:
            args = hook.args
            call = replace(call, arguments=json.dumps(args, ensure_ascii=False))
    context = list(hook.context)
    if gate is not None:
        self_gated = bool(getattr(tool, "metadata", {}).get("self_gated"))
        if ctx is not None and not self_gated and hook.verdict != "allow":
            asked = _permission_request(call, tool, args, gate, ctx, emit)
            context += asked.context
            if asked.verdict == "deny":
                text = f"blocked: {call.name} was not run (PermissionRequest hook: {asked.reason})"
                return _refuse(call, _with(text, context), emit, blocked=True)
            if asked.args is not None:
                args = asked.args
                call = replace(call, arguments=json.dumps(args, ensure_ascii=False))
        try:
            if self_gated:
                outcome = gate.check(call.name, bool(tool.read_only), args, self_gated=True)
            elif "allow" in (hook.verdict, asked.verdict):
                outcome = gate.check(*_subject(call, tool, args), hook_allow=True)
            else:
                outcome = gate.check(*_subject(call, tool, args))
            allowed, message = bool(outcome.allowed), str(getattr(outcome, "message", ""))
        except Exception as err:  # noqa: BLE001 - a gate failure must fail closed, not crash
            allowed, message = False, f"permission check failed: {err}"
        if not allowed:
            reason = message or "denied by the permission policy"
            text = f"blocked: {call.name} was not run ({reason})"
            return _refuse(call, _with(text, context), emit, blocked=True)
        if self_gated and getattr(outcome, "decision", None) is Decision.ASK:
            extra["memory_rule"] = Decision.ASK
    recorder = ctx.extra.get("checkpoints") if ctx is not None else None
    if ctx is not None and recorder is not None and not _reads_only(tool, args):
        from .snapedit import write_targets  # the files it writes, when it names them

        paths = write_targets(call.name, args, _base(ctx), ctx.extra.get("hooks"))
        recorder.before_write(paths)  # /rewind: snapshot once, before the turn's first write
        for note in recorder.notices:
            emit(Notice("checkpoint", note))
        recorder.notices.clear()
    return tool, extra, call, context


def run_calls(
    calls: list[ToolCall],
    registry: Registry,
    gate: GateLike | None,
    ctx: ToolContext,
    cancel: Cancel,
    emit: Emit,
) -> list[ToolResult]:
    """Run ``calls`` (readers in parallel batches, writers in order); results in call order."""
    ctx = ctx.replace(cancel=cancel)
    calls = list(calls)  # an updatedInput replaces a call here, never in the caller's list
    results: list[ToolResult | None] = [None] * len(calls)
    i = 0
    while i < len(calls):
        batch = [i]
        if _is_reader(registry, calls[i]):
            while batch[-1] + 1 < len(calls) and _is_reader(registry, calls[batch[-1] + 1]):
                batch.append(batch[-1] + 1)
        admitted: list[tuple[int, Tool, ToolContext, list[str]]] = []
        for j in batch:
            got = _admit(calls[j], registry, gate, cancel, emit, ctx)
            if isinstance(got, ToolResult):
                results[j] = got
            else:
                tool, extra, calls[j], context = got
                # ctx.extra stays the shared dict unless this call adds to it (todos live there)
                extras = {**ctx.extra, **extra} if extra else ctx.extra
                call_ctx = ctx.replace(extra=extras, call_id=calls[j].id)
                admitted.append((j, tool, call_ctx, context))
        _run_batch(admitted, calls, emit, results)
        i = batch[-1] + 1
    return [r if r is not None else ToolResult.error("not run") for r in results]


def _is_reader(registry: Registry, call: ToolCall) -> bool:
    tool = registry.get(call.name)
    return tool is not None and bool(tool.read_only)


def _run_batch(
    admitted: list[tuple[int, Tool, ToolContext, list[str]]],
    calls: list[ToolCall],
    emit: Emit,
    results: list[ToolResult | None],
) -> None:
    if len(admitted) == 1:
        j, tool, ctx, context = admitted[0]
        results[j] = _execute(tool, calls[j], ctx, emit, context)
        return

    def work(j: int, tool: Tool, ctx: ToolContext, context: list[str]) -> None:
        results[j] = _execute(tool, calls[j], ctx, emit, context)

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
