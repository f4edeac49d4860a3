"""The agent loop: request → stream → tools → repeat (spec §3.4, LOOP-2).

One :meth:`Agent.run` is one user turn. It appends the user message, then
asks the model; text streams out as events; tool calls run (see
:mod:`reasonix.agent.execute`) and their results are appended; the loop
repeats until the model answers without tools, the tool-round budget (D5)
runs out, or the cancel token fires. Every message goes to the session
transcript as it is produced, so a killed process loses at most one line.

Prefix-cache invariant: ``system`` and the tool schemas are fixed when the
agent is built and the message list only ever grows, so each request is a
byte-for-byte extension of the previous one. Auto-recall (``recall``) only
appends to the new user message, so it keeps the invariant.

Size: the new user message is checked against the context window before it
is added (``context.admit``) and is written to the transcript once the model
has taken it (its first answer chunk, or any failure other than "it can
never fit"), so a message that can never fit leaves the session unchanged.
Tool calls whose arguments could never fit either are not run (see
:mod:`reasonix.agent.oversize`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import (
    Cancelled,
    HookBlocked,
    InputTooLarge,
    ProviderAPIError,
    ProviderError,
    ProviderStreamError,
    ReasonixError,
)
from reasonix.lazy import replace
from reasonix.provider import Provider
from reasonix.provider.types import (
    Message,
    Request,
    Role,
    ToolCall,
    ToolSchema,
    Usage,
    WebSearchCall,
)
from reasonix.tool import Registry, ToolContext, ToolResult

from . import oversize
from .budget import OutputBudget
from .events import Done, Error, Event, Notice, StepStart, TextDelta, ToolEnd
from .execute import EventApprover, run_in_worker
from .nudge import ProgressWatch
from .prompt import valid_text
from .session import Session
from .stream import StreamCancelled, stream_reply
from .telemetry import Telemetry, usage_record

if TYPE_CHECKING:  # the hook runner exists only when hooks are configured
    from .hooks import HookRunner
    from .ports import ContextLike, GateLike

__all__ = ["AUTO_MAX_STEPS", "Agent"]

AUTO_MAX_STEPS = 200  # D5: max_steps = 0 means this safety bound
# answers that end the turn however they ended (finish reason -> Done.reason)
_ENDS = {"length": "max_tokens", "refusal": "refusal", "content_filter": "content_filter"}
_EMPTY_END = {  # what is shown when such an answer came with no text at all
    "refusal": "refused by the provider",
    "content_filter": "blocked by the provider's content filter",
}


class _Stop(Exception):
    """Ends a turn early; carries the reason and the final text (mini-swe-agent style)."""

    def __init__(self, reason: str, result: str) -> None:
        super().__init__(reason)
        self.reason, self.result = reason, result


class Agent:
    """A single-model Runner over one session, one provider and one tool registry."""

    def __init__(
        self,
        provider: Provider,
        registry: Registry,
        session: Session,
        *,
        model: str,
        system: str,
        tool_ctx: ToolContext,
        gate: GateLike | None = None,
        approver: EventApprover | None = None,
        max_steps: int = 0,
        temperature: float | None = None,
        effort: str = "",
        instructions: str = "",
        context: ContextLike | None = None,
        budget: OutputBudget | None = None,
        recall: Callable[[str], str] | None = None,
        hooks: HookRunner | None = None,
        tools: Sequence[ToolSchema] | None = None,
    ) -> None:
        self.provider, self.registry, self.session = provider, registry, session
        self.model, self.system, self.tool_ctx = model, system, tool_ctx
        self.gate, self.approver = gate, approver
        self.max_steps = max_steps if max_steps > 0 else AUTO_MAX_STEPS
        self.temperature, self.effort, self.instructions = temperature, effort, instructions
        self.context, self.budget = context, budget  # compaction projection; max_tokens rules
        self.recall = recall  # MEM-5: raw user text -> suffix for that turn (None: off)
        self.hooks = hooks  # the user's hook commands (SessionStart, UserPromptSubmit, Stop)
        # notices to show before a turn (instructions or MCP servers changed since the start)
        # text for the head of the next user message, once (a continued session's new
        # skill index): appended to the conversation, never written into earlier turns
        self.turn_prefix = ""
        self.turn_notices: Callable[[], list[str]] | None = None
        # asked before every model request after a tool round: the name of a spent budget
        # ends the turn there ("budget"), e.g. a goal's (coordinator/host.py)
        self.before_request: Callable[..., str] | None = None
        # True when a run budget is set (agent/spend.py): it is asked before a turn's
        # first request too, so a spent budget sends nothing more
        self.check_first_request = False
        # SessionStart's source for the next turn: None = this process's first turn
        # (startup or resume), "" = none; the runtime sets "clear"/"resume" on /new and
        # /resume, and ``compacted`` after a summary (source "compact")
        self.start_source: str | None = None
        # the configured provider's name, for the transcript's usage records ("": unknown)
        self.provider_name = ""
        self.compacted = False
        self._stop_blocks = 0  # Stop-hook blocks in a row with no tool call between
        # frozen for the session; the runtime passes the ones pinned in the transcript
        # (agent/toolpin.py), so a resumed session sends the bytes it sent before
        self.tools = (
            list(tools) if tools is not None else [ToolSchema(**s) for s in registry.schemas()]
        )
        self.telemetry = Telemetry()
        self.history, self._watch = session.message_log(), ProgressWatch()
        self._pending: Message | None = None  # the new user message until the model takes it
        self._title = ""
        self._finish = ("", "")  # the last answer's finish reason and the vendor's detail
        self._cut_calls = ""  # tool calls of the last answer the output limit cut (not run)
        self._close_dangling_calls()

    # -- transcript -------------------------------------------------------------
    def _append(self, message: Message, raw: str = "") -> None:
        self.history.append(message)
        self.session.append_message(message, raw_content=raw)

    def _commit(self) -> None:
        """Write the pending user message (idempotent): the model has taken it."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self.turn_prefix = ""  # the model has it now
            if self._title and not self.session.title:
                self.session.set_title(self._title)
            self._append(pending)  # flushed now, fsynced after the first answer

    def _close_dangling_calls(self) -> None:
        """Answer tool calls left without results by a killed run, so the history is valid."""
        at = next((i for i in range(len(self.history) - 1, -1, -1)
                   if self.history[i].role is Role.ASSISTANT), -1)  # fmt: skip
        last = self.history[at] if at >= 0 else None
        if last is None or not last.tool_calls:
            return
        # Only the results after that answer count: many servers number call ids per
        # answer (call_0 again and again), so an earlier round's result is no answer.
        answered = {m.tool_call_id for m in self.history[at + 1 :] if m.role is Role.TOOL}
        for call in last.tool_calls:
            if call.id not in answered:
                text = f"{call.name}: interrupted, no result was recorded"
                self._append(Message(Role.TOOL, text, tool_call_id=call.id, name=call.name))

    # -- the turn ---------------------------------------------------------------
    def run(self, user_input: str, cancel: Cancel) -> Iterator[Event]:
        """Run one user turn, yielding events; ends with Done or Error."""
        cancel = cancel.child()  # closing the generator cancels only this turn's work
        steps, self._watch, self._stop_blocks = 0, ProgressWatch(), 0
        try:
            self._close_dangling_calls()  # a previous turn closed mid-tools left calls open
            for note in self.turn_notices() if self.turn_notices is not None else ():
                yield Notice("cache_break", note)
            for note in self._start_turn(user_input):
                yield Notice("hook", note)
            recorder = self.tool_ctx.extra.get("checkpoints")
            for note in recorder.take_notices() if recorder is not None else ():
                yield Notice("checkpoint", note)  # the store failed (last turn's end, or now)
            stop_hook_active = False
            last = ""
            while True:
                ask = self.before_request and (steps or self.check_first_request)
                spent = self.before_request() if ask and self.before_request else ""
                if spent:
                    yield Notice("budget", f"the {spent} budget is spent; no further request")
                    raise _Stop("budget", last)
                reply = yield from self._ask(cancel, steps + 1)
                last = reply.content
                reply, refused = self._bound_calls(reply)
                self._append(reply)
                if not reply.tool_calls and self._finish[0] in _ENDS:
                    raise _Stop(_ENDS[self._finish[0]], reply.content)
                if not reply.tool_calls:
                    again = yield from self._stop_hooks(stop_hook_active, reply.content)
                    if again is None or steps + 1 >= self.max_steps:
                        raise _Stop("complete", reply.content)
                    self._append(Message(Role.USER, f"[Stop hook] {again}"))
                    stop_hook_active, steps = True, steps + 1
                    continue
                end = yield from self._run_tools(reply.tool_calls, cancel, refused)
                self.session.sync()
                steps, self._stop_blocks = steps + 1, 0  # work was done: the Stop cap restarts
                if end:  # a host tool ended the turn (plan saved, goal complete …)
                    raise _Stop(end, reply.content)
                if steps >= self.max_steps:
                    yield Notice("max_steps", f"stopped after {steps} tool rounds (--max-steps)")
                    raise _Stop("max_steps", reply.content)
        except _Stop as stop:
            yield Done(stop.result, stop.reason, steps, self.telemetry.total)
        except Cancelled:
            yield Notice("cancelled", "the turn was cancelled")
            yield Done("", "cancelled", steps, self.telemetry.total)
        except InputTooLarge as err:
            self._pending = None  # it never enters the conversation: retry with less
            yield Error(err, str(err))
        except ReasonixError as err:
            self._commit()
            yield Error(err, str(err))
        finally:
            self._commit()  # cancelled or failed: the message stays, as it was typed
            cancel.cancel("turn ended")  # stop any worker still attached to this turn
            self.session.sync()
            recorder = self.tool_ctx.extra.get("checkpoints")
            if recorder is not None:
                recorder.end()

    def _start_turn(self, user_input: str) -> list[str]:
        """Admit the user message (after its hooks) as pending; returns hook notices."""
        user_input = valid_text(user_input)  # undecodable argv/stdin bytes break JSON
        notes, context = self._prompt_hooks(user_input)  # raises HookBlocked: not appended
        text = user_input + (self.recall(user_input) if self.recall else "")  # never in system
        if context:  # hook context joins the user turn, never the system prompt (prefix cache)
            text += "\n\n" + context
        recorder = self.tool_ctx.extra.get("checkpoints")
        if recorder is not None:  # /rewind: where this turn starts, before its message
            recorder.begin(self.session.id, len(self.session.records()), user_input)
        if self.turn_prefix:  # what changed since the model was last told (skills, /mcp)
            text = self.turn_prefix + "\n\n" + text
        if self.instructions and not any(m.role is Role.USER for m in self.history):
            text = self.instructions + "\n\n" + text  # once, in the first user turn
        message = Message(Role.USER, text)
        if self.context is not None:
            self.context.admit(message)  # InputTooLarge before anything is written
        self._pending, self._title = message, user_input
        return notes

    def _prompt_hooks(self, user_input: str) -> tuple[list[str], str]:
        """SessionStart (first turn of this process) and UserPromptSubmit: notices, context."""
        if self.hooks is None:
            return [], ""
        notes: list[str] = []
        context: list[str] = []
        sources = [self.start_source] if self.start_source else []
        if self.start_source is None:
            resumed = any(m.role is Role.USER for m in self.history)
            sources = ["resume" if resumed else "startup"]
        sources += ["compact"] if self.compacted else []
        self.start_source, self.compacted = "", False
        for source in sources:  # hooks whose matcher names another source do not run
            got = self.hooks.run("SessionStart", {"source": source})
            notes += got.notices
            context.append(got.context_text)
        got = self.hooks.run("UserPromptSubmit", {"prompt": user_input})
        if got.blocked:
            raise HookBlocked(f"a UserPromptSubmit hook blocked this prompt: {got.reason}")
        notes += got.notices
        context.append(got.context_text)
        return notes, "\n".join(c for c in context if c)

    def _stop_hooks(self, active: bool, last: str) -> Generator[Event, None, str | None]:
        """Stop: None to end the turn, or the reason a hook gave for going on.

        Bounded as Claude Code bounds it: after ``stop_block_cap()`` blocks in a
        row with no tool call between, the next block is overridden with a notice.
        """
        if self.hooks is None or not self.hooks.has("Stop"):
            return None
        from .hooks import stop_block_cap

        recorder = self.tool_ctx.extra.get("checkpoints")
        if recorder is not None:  # a Stop hook may change files: the turn ends after it
            recorder.outside_change()
        fields = {"stop_hook_active": active, "last_assistant_message": last}
        got = self.hooks.run("Stop", fields)
        for note in got.notices:
            yield Notice("hook", note)
        if not got.blocked:
            return None
        cap = stop_block_cap()
        if cap and self._stop_blocks >= cap:
            text = (
                f"a Stop hook blocked the end of the turn {cap + 1} times in a row with no "
                "tool call between; the turn ends anyway (a Stop hook should let the turn "
                "end while stop_hook_active is true; CLAUDE_CODE_STOP_HOOK_BLOCK_CAP "
                "raises the limit)"
            )
            self.hooks.report(text)
            yield Notice("hook", text)
            return None
        self._stop_blocks += 1
        return got.reason

    def _pending_list(self) -> list[Message]:
        return [self._pending] if self._pending is not None else []

    def _request(self, cancel: Cancel) -> Generator[Event, None, Request]:
        if self.context is not None:  # the projection: checkpoints applied, maybe compacted
            messages = self.context.prepare(cancel, self._pending_list())
            yield from self._compaction_notice()
        else:  # the whole history (built only here: most of a resumed one is still on disk)
            messages = [*self.history, *self._pending_list()]
        yield from self._window_notice()
        max_tokens = self.budget.max_tokens(self._prompt_tokens) if self.budget else None
        return Request(
            self.model, messages, self.system, self.tools, self.temperature, max_tokens, self.effort
        )

    def _prompt_tokens(self) -> int:
        return self.context.estimate(self._pending_list()) if self.context is not None else 0

    def _window_notice(self) -> Iterator[Event]:
        window = getattr(self.context, "window", None)
        for text in window.take_notices() if window is not None else ():
            yield Notice("context_window", text)

    def _compaction_notice(self) -> Iterator[Event]:
        done = getattr(self.context, "last_result", None)
        if done is not None:
            for usage in getattr(done, "usage", ()):  # summary calls are paid for too
                self.telemetry.add_usage(usage)
                self._record_usage(usage)
            text = f"context {done.reason}: {done.tokens_before} -> {done.tokens_after} tokens"
            yield Notice("compaction", f"{text} ({done.status})")
            loss = getattr(done, "loss", None)
            if loss is not None and not loss.empty:  # what the summary dropped (local check)
                yield Notice("compaction_loss", loss.text())

    def _observe(self, usage: Usage) -> None:
        self.telemetry.add_usage(usage)
        self._record_usage(usage)
        if self.context is not None:
            self.context.observe_usage(usage.input_tokens)

    def _record_usage(self, usage: Usage) -> None:
        """One request's usage into the transcript: ``reasonix usage`` reads it offline."""
        self.session.append(usage_record(usage, self.model, self.provider_name))

    def _searched(self, found: WebSearchCall) -> None:
        """A provider-side web search: into the transcript, beside the answer it informs."""
        results = [{"title": r.title, "url": r.url} for r in found.results]
        record = {"type": "web_search", "id": found.id, "query": found.query, "results": results}
        self.session.append({**record, **({"error": found.error} if found.error else {})})

    def _finished(self, reason: str, detail: str) -> None:
        self._finish = (reason, detail)

    def _ask(self, cancel: Cancel, step: int) -> Generator[Event, None, Message]:
        """Stream one answer; an empty one is retried once with the same frozen request.

        An answer that ended other than normally is not retried: a refusal or a
        filter's block is shown and ends the turn, and tool calls the output limit
        cut are dropped unrun (:meth:`_ended`).
        """
        request = yield from self._request(cancel)
        empty = 0
        while True:
            yield StepStart(step)
            self._finish = ("", "")
            try:
                reply = yield from stream_reply(
                    self.provider,
                    request,
                    cancel,
                    step,
                    self._observe,
                    self._commit,
                    searched=self._searched,
                    finished=self._finished,
                )
            except StreamCancelled as err:
                self._commit()
                if err.partial is not None:
                    self._append(err.partial)
                raise
            except ProviderAPIError as err:
                if self.budget is not None and self.budget.learn(err):  # D10: a 400 named the limit
                    request.max_tokens = self.budget.max_tokens(self._prompt_tokens)
                    continue
                if self.context is None or not err.is_context_overflow:
                    raise
                # One summary, one retry; InputTooLarge when the new message alone
                # cannot fit the window the refusal revealed (no summary then).
                request.messages = self.context.on_overflow(cancel, err, self._pending_list())
                yield from self._compaction_notice()
                yield from self._window_notice()
                if self.budget is not None:
                    request.max_tokens = self.budget.max_tokens(self._prompt_tokens)
                continue
            self._commit()
            for note in getattr(self.provider, "take_notices", list)():  # a refused parameter
                yield Notice("provider", note)  # left out and the request sent again (issue 33)
            if self._finish[0] in _ENDS:
                return (yield from self._ended(reply))
            if self._finish[0] == "error":  # the provider ended the response as failed
                detail = f": {self._finish[1]}" if self._finish[1] else ""
                if not (reply.content or reply.tool_calls):
                    raise ProviderStreamError(f"the provider ended the response as failed{detail}")
                yield Notice("provider", f"the provider ended the answer as failed{detail}")
            if reply.content or reply.tool_calls:
                return reply
            empty += 1
            if empty > 1:
                raise ProviderError("the model sent an empty response twice")
            yield Notice("retry_empty", "the model sent an empty response; retrying once")

    def _ended(self, reply: Message) -> Generator[Event, None, Message]:
        """An answer the output limit cut, a refusal or a filter's block: say so, never retry.

        A tool call cut before its arguments were complete is dropped, not run:
        the transcript keeps the rest of the answer exactly as the model produced
        it (no call whose result could not exist), and the model reads why in the
        last result of the calls that did complete.
        """
        reason, detail = self._finish
        cut = [c for c in reply.tool_calls if c.truncated]
        if cut:
            reply = replace(reply, tool_calls=[c for c in reply.tool_calls if not c.truncated])
            names = ", ".join(c.name for c in cut)
            yield Notice(
                "truncated",
                f"the output limit cut a tool call ({names}) before its arguments were "
                "complete; it was not run",
            )
            self._cut_calls = names
        if reason == "length" and not reply.tool_calls:
            yield Notice("truncated", "the answer was cut at the output limit (max_tokens)")
        elif reason in ("refusal", "content_filter") and not reply.content:
            said = _EMPTY_END[reason] + (f": {detail}" if detail else "")
            yield TextDelta(said)
            reply = replace(reply, content=said)
        if reason == "refusal":
            yield Notice("refusal", "the model declined to answer; the request was not retried")
        elif reason == "content_filter":
            yield Notice("content_filter", "the provider's content filter stopped the answer")
        return reply

    def _bound_calls(self, reply: Message) -> tuple[Message, dict[int, str]]:
        """Calls whose arguments could never fit the window: kept short, not run.

        Returns the reply as the transcript keeps it and, per refused call
        index, the tool error the model reads instead of a result.
        """
        window = getattr(self.context, "window", None)
        limit = window.limit if window is not None else 0
        refused: dict[int, str] = {}
        calls = list(reply.tool_calls)
        if all(len(call.arguments) < oversize.SMALL_ARGUMENTS for call in calls):
            return reply, refused  # the common case: the ratio (a walk of the request) can wait
        ratio = getattr(getattr(self.context, "counter", None), "ratio", 1.0)
        for i, call in enumerate(calls):
            tokens = oversize.call_too_large(call, limit, ratio)
            if tokens:
                refused[i] = oversize.call_refusal(call, tokens, limit)
                calls[i] = oversize.omitted_call(call, tokens)
        if not refused:
            return reply, refused
        return replace(reply, tool_calls=calls), refused

    def _run_tools(
        self, calls: list[ToolCall], cancel: Cancel, refused: dict[int, str] | None = None
    ) -> Generator[Event, None, str]:
        """Run the calls (events stream out meanwhile), then append results in call order.

        Returns the reason a host tool asked to end the turn with
        (``metadata["end_turn"]``: exit_plan_mode, update_goal), or "".
        """
        refused = refused or {}
        for i, text in refused.items():
            yield ToolEnd(calls[i].id, calls[i].name, text, True, 0.0)
        runnable = [c for i, c in enumerate(calls) if i not in refused]
        ran: list[ToolResult] = []
        recorder = self.tool_ctx.extra.get("checkpoints")
        if runnable:
            if recorder is not None:  # /rewind: the turn's "before" tree, made meanwhile
                from .snapedit import full_round  # a round that may write unnamed files

                names = [c.name for c in runnable]
                recorder.tools_starting(full_round(names, self.registry, self.tool_ctx.extra))
            ran = yield from run_in_worker(
                runnable, self.registry, self.gate, self.tool_ctx, cancel, self.approver
            )
            if recorder is not None:  # and its "after" tree, while the model is asked
                recorder.tools_done()
        done = iter(ran)
        results = [
            ToolResult.error(refused[i]) if i in refused else next(done) for i in range(len(calls))
        ]
        self.telemetry.count("tool_calls", len(calls))
        nudge = self._watch.after_round(self.tool_ctx.extra.get("todos"))  # LOOP-8
        cut, self._cut_calls = self._cut_calls, ""
        if cut:  # the model must learn that a call it sent was never run
            nudge = (
                f"[your tool call {cut} after this one was cut by the output limit before its "
                "arguments were complete, so it was not run; send it again, in smaller parts "
                "if it was long]" + ("\n\n" + nudge if nudge else "")
            )
        for i, (call, result) in enumerate(zip(calls, results, strict=True)):
            text = result.content + ("\n\n" + nudge if nudge and i == len(calls) - 1 else "")
            raw = result.raw_content if result.raw_content != result.content else ""
            escape = result.metadata.get("sandbox_escape")
            if isinstance(escape, dict):  # §3.7: every escape decision is on the record
                self.session.append({"type": "sandbox_escape", "call_id": call.id, **escape})
            self._append(Message(Role.TOOL, text, tool_call_id=call.id, name=call.name), raw=raw)
        cancel.raise_if_cancelled()
        ends = [str(r.metadata.get("end_turn") or "") for r in results]
        return next((e for e in ends if e), "")
