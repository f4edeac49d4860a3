"""Context maintenance: the thin executor around :mod:`reasonix.agent.compaction`.

The loop talks to one :class:`ContextManager` per session::

    ctx = ContextManager(provider, model, context_window, compact_ratio,
                         system, tools, store)
    ...
    ctx.admit(user_message)                        # InputTooLarge: it can never fit
    messages = ctx.prepare(cancel, [user_message]) # may prune / summarise first
    request = Request(model=model, system=system, tools=tools, messages=messages, ...)
    try:
        stream = provider.stream(request, cancel)  # consume it …
    except ProviderAPIError as err:
        if not err.is_context_overflow:
            raise
        messages = ctx.on_overflow(cancel, err, [user_message])  # one summary, ONE retry
        ...                                        # resend with the new messages
    store.append(user_record)                      # canonical once the model took it
    ctx.observe_usage(usage.input_tokens)          # normalised: the whole prompt

A *pending* message (the new user message) is part of every estimate and is
sent last, but it is never summarised and is not yet in the store: when an
overflow shows that it alone cannot fit, :meth:`on_overflow` raises
:class:`~reasonix.errors.InputTooLarge` and the transcript stays as it was.

``prepare`` raises :class:`~reasonix.errors.CompactionRequired` when the
request is over the hard limit (the context window) and no automatic remedy
is left; ``/compact`` and ``reasonix run -c --compact`` call :meth:`compact`.
The window itself is a shared :class:`~reasonix.agent.window.ContextWindow`
(configured, and served as learned from the server), read on every call.
After ``prepare``/``on_overflow``/``compact``, :attr:`ContextManager.last_result`
describes what maintenance did (None when nothing), for the loop's
compaction event.

What happens (spec §3.6): below ``floor(window × ratio)`` nothing is
rewritten. At or above it one single-flight transaction runs: first a durable
prune of long tool results (a checkpoint record, no model call); if the
request is still at or over the trigger, the older prefix is summarised with
a request that is the previous request's prefix plus one instruction message
(same system prompt, same tools) so the provider's prefix cache is hit. A
candidate must be strictly smaller than what it replaces; a failed summary
never becomes a made-up digest and blocks further automatic summaries in
that generation. The summary request itself must fit the window with room
for the summary (:func:`~reasonix.agent.oversize.plan_prefix`: the whole old
prefix, else a shorter cache-aligned one, else cut and marked); one the
server refuses as too long is planned again smaller, not given up.

The store is anything with ``append(record: dict) -> None`` and
``records() -> Sequence[dict]`` (the session transcript); record formats are
described in :mod:`reasonix.agent.compaction`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from reasonix.agent import compaction as cp
from reasonix.agent import oversize
from reasonix.agent.tokens import (
    TokenCounter,
    estimate_message,
    estimate_request,
    message_bound,
    message_size,
    upper_bound_message,
    upper_bound_request,
)
from reasonix.agent.window import ContextWindow
from reasonix.cancel import Cancel
from reasonix.errors import CompactionRequired, InputTooLarge, ProviderAPIError
from reasonix.lazy import dataclass, field
from reasonix.provider import Provider
from reasonix.provider.types import Message, Request, Role, ToolSchema, Usage

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.loss import LossReport  # read with the first summary

__all__ = [
    "ContextManager",
    "MaintenanceResult",
    "TranscriptStore",
    "project",
]

project = cp.project

SUMMARY_TIMEOUT = 300.0  # seconds; a summary of a full window can take minutes
SUMMARY_FIT_TRIES = 3  # summary requests per summary: a refused one is planned smaller
SUMMARY_SHRINK = 0.75  # each retry plans for this share of the window the last one used
_NOTHING_OLDER = "nothing older than the kept window to summarise"


class TranscriptStore(Protocol):
    """The part of the session store the context manager needs."""

    def append(self, record: dict[str, Any]) -> None:
        """Append one record durably (one JSONL line)."""
        ...

    def records(self) -> Sequence[Mapping[str, Any]]:
        """Every complete record, in file order (a torn last line dropped)."""
        ...


@dataclass
class MaintenanceResult:
    """What one maintenance transaction did (for events, ``/compact`` and tests)."""

    reason: str  # "pressure" | "overflow" | "manual"
    tokens_before: int
    tokens_after: int = 0
    pruned: int = 0  # tool results newly pruned
    summaries: int = 0  # successful summary calls
    generation: int = 0  # digest generation in force afterwards
    status: str = "ok"  # "ok" | "failed" | "blocked"
    detail: str = ""
    over_limit: bool = False  # still at/over the hard limit afterwards
    summary_requests: list[Request] = field(default_factory=list, repr=False)
    loss: LossReport | None = None  # what the (last) summary no longer mentions
    usage: list[Usage] = field(default_factory=list, repr=False)  # of the summary calls (paid)


class ContextManager:
    """Plans and runs context maintenance for one session (see module docstring)."""

    def __init__(
        self,
        provider: Provider,
        model: str,
        context_window: int | ContextWindow,
        compact_ratio: float,
        system: str,
        tools: Sequence[ToolSchema],
        store: TranscriptStore,
        *,
        counter: TokenCounter | None = None,
        summary_timeout: float = SUMMARY_TIMEOUT,
    ) -> None:
        self.provider = provider
        self.model = model
        if not isinstance(context_window, ContextWindow):
            context_window = ContextWindow(int(context_window))
        self.window = context_window
        self.compact_ratio = compact_ratio
        self.system = system
        self.tools = list(tools)
        self.store = store
        self.counter = counter or TokenCounter()
        self._fixed_bound: int | None = None  # upper_bound_request(system, tools), once
        self.summary_timeout = summary_timeout
        self.last_result: MaintenanceResult | None = None
        self._lock = threading.Lock()  # single flight: one transaction at a time
        self._view = cp.load_projection(store.records())
        self._retried = False  # overflow retry used for the current request
        # Told before each summary request: "manual" (/compact) or "auto" (PreCompact hooks).
        self.before_summary: Callable[[str, str], None] | None = None  # (trigger, focus)
        self._pending: list[Message] = []  # sent last, never summarised, not stored yet
        self.pins: Callable[[], list[str]] | None = None  # /pin items, kept in every summary
        self.loss_reports: list[LossReport] = []  # one per summary checkpoint

    # -- read-only views -------------------------------------------------

    @property
    def context_window(self) -> int:
        """The window compaction works with (configured, or smaller when served so)."""
        return self.window.tokens

    @property
    def trigger(self) -> int:
        """``floor(context_window × compact_ratio)``; 0 = automatic maintenance off."""
        return cp.trigger_tokens(self.context_window, self.compact_ratio)

    @property
    def generation(self) -> int:
        """Digest generation in force."""
        return self._view.generation

    @property
    def blocked(self) -> bool:
        """True when the current generation recorded a failure (no automatic summary)."""
        return self._view.blocked

    def messages(self) -> list[Message]:
        """The current projection, without running maintenance."""
        with self._lock:
            self._sync()
            return self._view.messages

    def estimate(self, pending: Sequence[Message] = ()) -> int:
        """Calibrated token estimate of the request the current projection makes."""
        with self._lock:
            self._sync()
            return self._estimate([*self._view.messages, *pending])

    def admit(self, message: Message) -> None:
        """Refuse a new message that can never fit the window (before it is added).

        Waits briefly for a start-up window probe still running, so a window
        the server names is known before the first request.
        """
        self.window.settle()
        with self._lock:
            self._check_fits(message, sent=False)

    def _check_fits(self, message: Message, *, sent: bool) -> None:
        limit = self.window.limit
        ratio = self.counter.ratio
        if self._fixed_bound is None:  # the system prompt and tools never change in a session
            self._fixed_bound = upper_bound_request(self.system, self.tools)
        bound = math.ceil(ratio * self._fixed_bound) + math.ceil(ratio * message_bound(message))
        if bound < oversize.admission_limit(limit):
            return  # fits even at the bound: the exact estimates (a walk of every text) can wait
        size = math.ceil(ratio * message_size(message))
        fixed = math.ceil(ratio * estimate_request(self.system, [], self.tools))
        if fixed + size >= oversize.admission_limit(limit):
            self._sync()
            history = self._view.messages  # what takes the room, told in the error
            held = estimate_request(self.system, history, self.tools) if history else 0
            text = oversize.room_text(
                message.content, size, fixed, limit, sent=sent, tools=len(self.tools),
                history_tokens=max(0, math.ceil(ratio * held) - fixed) if held else 0,
                ratio=ratio,
            )  # fmt: skip
            raise InputTooLarge(f"context: {text}", tokens=size, window=limit)

    # -- the three entry points -------------------------------------------

    def prepare(self, cancel: Cancel, pending: Sequence[Message] = ()) -> list[Message]:
        """The messages to send for the next request, after any needed maintenance.

        ``pending`` (the new user message, not in the store yet) is counted
        and sent last but never summarised. Raises CompactionRequired when the
        request is over the hard limit (the context window) and no automatic
        remedy is left.
        """
        with self._lock:
            self.last_result = None
            self._retried = False
            self._pending = list(pending)
            self._sync()
            messages = self._current()
            if self.trigger <= 0 or self._surely_below(messages, self.trigger):
                return self._sending(messages)
            tokens = self._estimate(messages)
            if tokens < self.trigger:
                return self._sending(messages)
            result = self._transaction(
                cancel,
                reason="pressure",
                tokens=tokens,
                target=self.trigger,
                max_summaries=cp.MAX_PRESSURE_SUMMARIES,
                force=False,
            )
            # Only report transactions that did or found something, so a blocked
            # generation does not announce "maintenance" on every request.
            if result.pruned or result.summaries or result.status != "ok" or result.over_limit:
                self.last_result = result
            if result.over_limit:
                raise CompactionRequired(_required_text(result))
            return self._sending(self._current())

    def on_overflow(
        self,
        cancel: Cancel,
        error: ProviderAPIError | None = None,
        pending: Sequence[Message] = (),
    ) -> list[Message]:
        """Recover from a provider context-overflow error: prune, one summary, one retry.

        ``error`` (the refusal) teaches the window when it names one; when it
        names none and the refused request was well under the configured
        window, the window is taken to be below that request. Raises
        InputTooLarge when ``pending`` alone cannot fit the window then known
        (no summary is attempted), CompactionRequired when nothing helps or
        the retry was already used (D4). Returns the messages for the retry.
        """
        with self._lock:
            if self._retried:
                raise CompactionRequired(
                    "context: the provider still reports a context overflow after compaction"
                )
            self._retried = True
            self._pending = list(pending)
            self._sync()
            messages = self._current()
            before, tools = self.window.limit, len(self.tools)
            raw = estimate_request(self.system, messages, self.tools)  # as refused
            facts = self.window.learn_from_error(error) if error is not None else None
            window = self.window.limit
            now = self._estimate(messages)
            if facts is not None and facts.prompt and raw > 0:
                self.counter.bump_ratio(facts.prompt / raw)  # the server counted it
            elif window > 0 and raw > 0 and (facts is None or facts.window or now >= 0.75 * window):
                # The provider says this did not fit: make the estimate agree.
                self.counter.bump_ratio(window / raw * 1.02)
            elif facts is not None:
                # Nothing named and far below the configured window: that window
                # is wrong (a local server started smaller), not the estimate.
                self.window.bound_from_refusal(now)
            tokens = self._estimate(messages)
            if len(self.tools) < tools and tokens < oversize.admission_limit(self.window.limit):
                return self._sending(messages)  # the small prompt (boot, issue 37) fits now
            if self._pending:
                self._check_fits(self._pending[-1], sent=True)
            limit = self.context_window
            learned = 0 < self.window.limit < before or (before == 0 < self.window.limit)
            # Whatever the estimate says, this request did not fit: the target
            # is "smaller than now" even when the (clamped) estimate is under
            # the window, so prune or summarise always runs. A window just
            # learned is compacted to its trigger, so one summary is enough.
            hard = min(limit, tokens) if limit > 0 else tokens
            target = min(self.trigger, hard) if learned and self.trigger else hard
            result = self._transaction(
                cancel,
                reason="overflow",
                tokens=tokens,
                target=target,
                max_summaries=cp.MAX_OVERFLOW_SUMMARIES,
                force=False,
                hard_limit=limit if learned and limit > 0 else hard,
            )
            self.last_result = result
            if result.over_limit or (result.pruned == 0 and result.summaries == 0):
                raise CompactionRequired(_required_text(result))
            return self._sending(self._current())

    def compact(self, cancel: Cancel, *, force: bool = True, focus: str = "") -> MaintenanceResult:
        """Manual maintenance (``/compact``, ``run --compact``): prune, then one summary.

        Runs even below the trigger and even when the generation is blocked;
        a failure is recorded and returned, not raised. ``focus`` (``/compact
        FOCUS``) tells the summary what to keep in most detail.
        """
        with self._lock:
            self._pending = []
            self._sync()
            messages = self._view.messages
            tokens = self._estimate(messages)
            result = self._transaction(
                cancel,
                reason="manual",
                tokens=tokens,
                target=0 if force else self.trigger,
                max_summaries=1,
                force=force,
                focus=focus,
            )
            self.last_result = result
            return result

    def observe_usage(self, prompt_tokens: int, sent: Sequence[Message] | None = None) -> None:
        """Feed the provider's reported prompt size (input incl. cached tokens) back.

        ``sent`` may name the messages of that request when they differ from
        the last ``prepare``/``on_overflow`` result.
        """
        if sent is not None:
            self.counter.note_sent(self.system, sent, self.tools)
        self.counter.observe(prompt_tokens)
        if prompt_tokens > 0:
            self.window.observed(prompt_tokens)

    # -- internals ------------------------------------------------------------

    def _sync(self) -> None:
        records = self.store.records()
        if len(records) < self._view.seen or not self._view.extend(records):
            self._view = cp.load_projection(records)

    def _current(self) -> list[Message]:
        """The projection plus the pending message(s): what the next request carries."""
        return [*self._view.messages, *self._pending]

    def _sending(self, messages: list[Message]) -> list[Message]:
        self.counter.note_sent(self.system, messages, self.tools)
        return messages

    def _surely_below(self, messages: Sequence[Message], limit: int) -> bool:
        """True when even the cheap upper bound of the estimate is under ``limit``.

        Before the first usage report the estimate is ``ratio × raw``, which
        the bound covers; after it, the counter bounds a request that extends
        the reported one (and the ratio, a walk of the whole request, can wait).
        """
        if self.counter.anchored:
            bound = self.counter.upper_bound(messages)
            return bound is not None and bound < limit
        if self._fixed_bound is None:
            self._fixed_bound = upper_bound_request(self.system, self.tools)
        bound = self._fixed_bound + sum(upper_bound_message(m) for m in messages)
        return math.ceil(self.counter.ratio * bound) < limit

    def _estimate(self, messages: Sequence[Message]) -> int:
        return self.counter.estimate(self.system, messages, self.tools)

    def _transaction(
        self,
        cancel: Cancel,
        *,
        reason: str,
        tokens: int,
        target: int,
        max_summaries: int,
        force: bool,
        hard_limit: int | None = None,
        focus: str = "",
    ) -> MaintenanceResult:
        # Only a transaction can ask for a summary: its module loads here, not at start.
        from reasonix.agent.summary_call import SummaryFailed

        result = MaintenanceResult(reason=reason, tokens_before=tokens)
        limit = self.context_window if hard_limit is None else hard_limit
        result.pruned = self._prune()
        tokens = self._estimate(self._current())
        while True:
            action = cp.next_action(
                tokens,
                target=target,
                hard_limit=limit,
                summaries_done=result.summaries,
                max_summaries=max_summaries,
                blocked=self._view.blocked and not force,
            )
            if action is not cp.Action.SUMMARISE:
                break
            try:
                self._summarise_once(cancel, result, focus)
            except SummaryFailed as err:
                status, text, paid = err.args
                if paid:  # only an attempt the server answered blocks the generation
                    self.store.append(cp.failure_record(self._view.generation, status, text))
                    self._sync()
                result.status, result.detail = status, text
                break
            tokens = self._estimate(self._current())
        result.tokens_after = tokens
        result.generation = self._view.generation
        if hard_limit is None:  # a refused summary request may have taught a smaller window
            limit = self.context_window
        result.over_limit = limit > 0 and tokens >= limit
        failed = self._view.failures.get(self._view.generation)
        if failed is not None and not result.detail and not force:  # say why none was tried
            result.detail = f"no automatic summary after an earlier one failed: {failed[1]}"
        return result

    def _prune(self) -> int:
        view = self._view
        new = cp.prune_candidates(view.entries, view.checkpoint.pruned)
        if not new:
            return 0
        old = view.checkpoint
        self._install(
            cp.Checkpoint(old.generation, old.covers_through, old.summary, old.pruned | set(new))
        )
        return len(new)

    def _install(self, checkpoint: cp.Checkpoint) -> None:
        # One line, one append: a kill leaves the old or the new checkpoint.
        self.store.append(cp.checkpoint_record(checkpoint))
        self._view = cp.load_projection(self.store.records())

    def _summarise_once(self, cancel: Cancel, result: MaintenanceResult, focus: str = "") -> None:
        from reasonix.agent.summary_call import SummaryFailed, SummaryRefused, call_summary

        view = self._view
        entries = view.entries
        ratio = self.counter.ratio
        sizes = [max(1, round(estimate_message(e.message) * ratio)) for e in entries]
        window = self.window.limit or self._estimate(view.messages)
        pending = sum(math.ceil(message_size(m) * ratio) for m in self._pending)
        keep = max(0, cp.keep_budget(window) - pending)  # the pending message is kept too
        cut = cp.select_cut([e.message.role for e in entries], sizes, keep)
        if cut == 0:
            raise SummaryFailed("blocked", _NOTHING_OLDER, False)
        pins = self.pins() if self.pins is not None else []
        instruction = Message(role=Role.USER, content=cp.summary_instruction(focus, pins))
        prefix = [e.message for e in entries[:cut]]
        pinned = int(entries[0].digest)
        # A shorter (cache-aligned) prefix is only worth it when it covers what
        # takes the request under the trigger plus room for the summary itself;
        # /compact summarises all of it.
        needed = oversize.UNBOUNDED_TOKENS
        if result.reason != "manual" and self.trigger > 0:
            over = self._estimate(self._current()) - self.trigger
            needed = max(0, over) + oversize.summary_reserve(window) // 2
        if self.before_summary is not None:
            self.before_summary("manual" if result.reason == "manual" else "auto", focus)
        room = window  # the window this attempt plans for; smaller after each refusal
        bounded = self.window.limit > 0
        for _ in range(SUMMARY_FIT_TRIES):
            ratio = self.counter.ratio
            sizes = [max(1, round(estimate_message(m) * ratio)) for m in prefix]
            fixed = math.ceil(ratio * estimate_request(self.system, [instruction], self.tools))
            # The summary request must fit the window itself, with room for the
            # summary and a margin for the server's own token count; where the
            # system prompt and tools leave little, the margin comes out of the
            # summary's room (its max_tokens) rather than out of the conversation.
            budget = oversize.UNBOUNDED_TOKENS
            if bounded:
                budget = room - fixed - oversize.summary_reserve(room)
            if budget < oversize.MIN_SUMMARY_INPUT:
                # After a refusal this is recorded, so the next request does not pay again.
                refused = " (the server refused a larger summary request)" if room < window else ""
                why = "the system prompt and tools leave no room for a summary in a window of "
                raise SummaryFailed("blocked", f"{why}{room} tokens{refused}", room < window)
            if bounded:
                budget = max(oversize.MIN_SUMMARY_INPUT, budget - oversize.summary_margin(room))
            fitted = oversize.plan_prefix(prefix, sizes, budget, pinned=pinned, needed=needed)
            cap = oversize.summary_output_cap(room if bounded else 0, fixed + fitted.tokens)
            messages = [*fitted.messages, instruction]
            request = Request(self.model, messages, self.system, list(self.tools), max_tokens=cap)
            result.summary_requests.append(request)
            try:
                summary = call_summary(
                    self.provider, request, cancel, timeout=self.summary_timeout, spent=result.usage
                )
                break
            except SummaryRefused as refusal:
                room, bounded = self._room_after_refusal(refusal.error, request, room), True
        else:
            raise SummaryFailed(
                "failed",
                f"the server refused the summary request as too long {SUMMARY_FIT_TRIES} times",
                True,
            )
        self._install_summary(result, entries, cut=fitted.covers, summary=summary, pins=pins)

    def _room_after_refusal(self, error: ProviderAPIError, request: Request, room: int) -> int:
        """The window the next summary attempt plans for after ``request`` was refused."""
        facts = self.window.learn_from_error(error)
        raw = estimate_request(request.system, request.messages, request.tools)
        if facts.prompt and raw > 0:
            self.counter.bump_ratio(facts.prompt / raw)  # the server counted it
        smaller = math.floor(room * SUMMARY_SHRINK)
        return min(self.window.limit, smaller) if self.window.limit > 0 else smaller

    def _install_summary(
        self,
        result: MaintenanceResult,
        entries: Sequence[cp.Entry],
        *,
        cut: int,
        summary: str,
        pins: Sequence[str],
    ) -> None:
        """Install ``summary`` for ``entries[:cut]`` when it is strictly smaller (CTX-11)."""
        from reasonix.agent.loss import loss_report
        from reasonix.agent.summary_call import SummaryFailed

        view = self._view
        summary = cp.with_pins(summary.strip(), pins)
        generation = view.generation + 1
        tail = [e.message for e in entries[cut:]]
        candidate = [cp.digest_message(generation, summary), *tail]
        before = estimate_request(self.system, view.messages, self.tools)
        after = estimate_request(self.system, candidate, self.tools)
        if after >= before:
            raise SummaryFailed(
                "blocked", f"summary candidate is not smaller ({after} >= {before} tokens)", True
            )
        covers = max(entries[cut - 1].index, view.checkpoint.covers_through)
        pruned = frozenset(i for i in view.checkpoint.pruned if i > covers)
        self._install(cp.Checkpoint(generation, covers, summary.strip(), pruned))
        result.summaries += 1
        result.loss = loss_report([e.message for e in entries[:cut]], summary, pins)  # local
        self.loss_reports.append(result.loss)


def _required_text(result: MaintenanceResult) -> str:
    if result.detail == _NOTHING_OLDER and not result.summaries:  # /compact cannot help either
        return (
            f"context: about {result.tokens_after} tokens exceed the limit, and the system "
            "prompt, tools and newest messages alone are too large to summarise away; "
            "shorten the request or use a larger context_window"
        )
    why = f" ({result.detail})" if result.detail else ""
    return (
        f"context: about {result.tokens_after} tokens still exceed the limit after "
        f"maintenance{why}; run /compact (or `reasonix run -c --compact`) to summarise"
    )
