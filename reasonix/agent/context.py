"""Context maintenance: the thin executor around :mod:`reasonix.agent.compaction`.

The loop talks to one :class:`ContextManager` per session::

    ctx = ContextManager(provider, model, context_window, compact_ratio,
                         system, tools, store)
    ...
    store.append(user_record)                      # canonical, append-only
    messages = ctx.prepare(cancel)                 # may prune / summarise first
    request = Request(model=model, system=system, tools=tools, messages=messages, ...)
    try:
        stream = provider.stream(request, cancel)  # consume it …
    except ProviderAPIError as err:
        if not err.is_context_overflow:
            raise
        messages = ctx.on_overflow(cancel)         # one summary, then ONE retry
        ...                                        # resend with the new messages
    ctx.observe_usage(usage.input_tokens)          # normalised: the whole prompt

``prepare`` raises :class:`~reasonix.errors.CompactionRequired` when the
request is over the hard limit (the context window) and no automatic remedy
is left; ``/compact`` and ``reasonix run -c --compact`` call :meth:`compact`.
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
that generation.

The store is anything with ``append(record: dict) -> None`` and
``records() -> Sequence[dict]`` (the session transcript); record formats are
described in :mod:`reasonix.agent.compaction`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reasonix.agent import compaction as cp
from reasonix.agent.tokens import TokenCounter, estimate_message, estimate_request
from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, CompactionRequired, ProviderError
from reasonix.provider import Provider
from reasonix.provider.types import ChunkKind, Message, Request, Role, ToolSchema, Usage

__all__ = [
    "ContextManager",
    "MaintenanceResult",
    "TranscriptStore",
    "project",
]

project = cp.project

SUMMARY_TIMEOUT = 300.0  # seconds; a summary of a full window can take minutes
_CAP_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length"})
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
    usage: list[Usage] = field(default_factory=list, repr=False)  # of the summary calls (paid)


class _SummaryFailed(Exception):
    """A summary call gave nothing usable (never turned into a digest)."""


class ContextManager:
    """Plans and runs context maintenance for one session (see module docstring)."""

    def __init__(
        self,
        provider: Provider,
        model: str,
        context_window: int,
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
        self.context_window = max(0, int(context_window))
        self.compact_ratio = compact_ratio
        self.system = system
        self.tools = list(tools)
        self.store = store
        self.counter = counter or TokenCounter()
        self.summary_timeout = summary_timeout
        self.last_result: MaintenanceResult | None = None
        self._lock = threading.Lock()  # single flight: one transaction at a time
        self._view = cp.load_projection(store.records())
        self._retried = False  # overflow retry used for the current request
        # Told before each summary request: "manual" (/compact) or "auto" (PreCompact hooks).
        self.before_summary: Callable[[str, str], None] | None = None  # (trigger, focus)

    # -- read-only views -------------------------------------------------

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

    def estimate(self) -> int:
        """Calibrated token estimate of the request the current projection makes."""
        with self._lock:
            self._sync()
            return self._estimate(self._view.messages)

    # -- the three entry points -------------------------------------------

    def prepare(self, cancel: Cancel) -> list[Message]:
        """The messages to send for the next request, after any needed maintenance.

        Raises CompactionRequired when the request is over the hard limit
        (the context window) and no automatic remedy is left.
        """
        with self._lock:
            self.last_result = None
            self._retried = False
            self._sync()
            messages = self._view.messages
            tokens = self._estimate(messages)
            if self.trigger <= 0 or tokens < self.trigger:
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
            return self._sending(self._view.messages)

    def on_overflow(self, cancel: Cancel) -> list[Message]:
        """Recover from a provider context-overflow error: prune, one summary, one retry.

        Returns the messages for the single retry; raises CompactionRequired
        when nothing helps or the retry was already used (D4).
        """
        with self._lock:
            if self._retried:
                raise CompactionRequired(
                    "context: the provider still reports a context overflow after compaction"
                )
            self._retried = True
            self._sync()
            messages = self._view.messages
            raw = estimate_request(self.system, messages, self.tools)
            # The provider says this did not fit: make the estimate agree.
            if self.context_window > 0 and raw > 0:
                self.counter.bump_ratio(self.context_window / raw * 1.02)
            tokens = self._estimate(messages)
            # Whatever the estimate says, this request did not fit: the target
            # is "smaller than now" even when the (clamped) estimate is under
            # the window, so prune or summarise always runs.
            target = min(self.context_window, tokens) if self.context_window > 0 else tokens
            result = self._transaction(
                cancel,
                reason="overflow",
                tokens=tokens,
                target=target,
                max_summaries=cp.MAX_OVERFLOW_SUMMARIES,
                force=False,
                hard_limit=target,
            )
            self.last_result = result
            if result.over_limit or (result.pruned == 0 and result.summaries == 0):
                raise CompactionRequired(_required_text(result))
            return self._sending(self._view.messages)

    def compact(self, cancel: Cancel, *, force: bool = True, focus: str = "") -> MaintenanceResult:
        """Manual maintenance (``/compact``, ``run --compact``): prune, then one summary.

        Runs even below the trigger and even when the generation is blocked;
        a failure is recorded and returned, not raised. ``focus`` (``/compact
        FOCUS``) tells the summary what to keep in most detail.
        """
        with self._lock:
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

    # -- internals ------------------------------------------------------------

    def _sync(self) -> None:
        records = self.store.records()
        if len(records) < self._view.seen or not self._view.extend(records):
            self._view = cp.load_projection(records)

    def _sending(self, messages: list[Message]) -> list[Message]:
        self.counter.note_sent(self.system, messages, self.tools)
        return messages

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
        result = MaintenanceResult(reason=reason, tokens_before=tokens)
        limit = self.context_window if hard_limit is None else hard_limit
        result.pruned = self._prune()
        tokens = self._estimate(self._view.messages)
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
            except _SummaryFailed as err:
                status, text, paid = err.args
                if paid:  # only a paid-for attempt blocks the generation
                    self.store.append(cp.failure_record(self._view.generation, status, text))
                    self._sync()
                result.status, result.detail = status, text
                break
            tokens = self._estimate(self._view.messages)
        result.tokens_after = tokens
        result.generation = self._view.generation
        result.over_limit = limit > 0 and tokens >= limit
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
        view = self._view
        entries = view.entries
        ratio = self.counter.ratio
        sizes = [max(1, round(estimate_message(e.message) * ratio)) for e in entries]
        window = self.context_window or self._estimate(view.messages)
        cut = cp.select_cut([e.message.role for e in entries], sizes, cp.keep_budget(window))
        if cut == 0:
            raise _SummaryFailed("blocked", _NOTHING_OLDER, False)
        prefix = [e.message for e in entries[:cut]]
        if self.before_summary is not None:
            self.before_summary("manual" if result.reason == "manual" else "auto", focus)
        request = Request(
            model=self.model,
            system=self.system,
            tools=list(self.tools),
            messages=[*prefix, Message(role=Role.USER, content=cp.summary_instruction(focus))],
            max_tokens=cp.SUMMARY_MAX_TOKENS,
        )
        result.summary_requests.append(request)
        summary = self._call_summary(request, cancel, result.usage)
        generation = view.generation + 1
        tail = [e.message for e in entries[cut:]]
        candidate = [cp.digest_message(generation, summary), *tail]
        before = estimate_request(self.system, view.messages, self.tools)
        after = estimate_request(self.system, candidate, self.tools)
        if after >= before:
            raise _SummaryFailed(
                "blocked", f"summary candidate is not smaller ({after} >= {before} tokens)", True
            )
        covers = max(entries[cut - 1].index, view.checkpoint.covers_through)
        pruned = frozenset(i for i in view.checkpoint.pruned if i > covers)
        self._install(cp.Checkpoint(generation, covers, summary.strip(), pruned))
        result.summaries += 1

    def _call_summary(self, request: Request, cancel: Cancel, spent: list[Usage]) -> str:
        child = cancel.child(timeout=self.summary_timeout)
        parts: list[str] = []
        finish = ""
        stream = None
        try:
            stream = self.provider.stream(request, child)
            for chunk in stream:
                if chunk.kind is ChunkKind.TEXT:
                    parts.append(chunk.text)
                elif chunk.kind is ChunkKind.DONE:
                    finish = chunk.finish_reason
                elif chunk.kind is ChunkKind.USAGE and chunk.usage is not None:
                    spent.append(chunk.usage)
                elif chunk.kind is ChunkKind.ERROR:
                    raise _SummaryFailed("failed", f"summary stream error: {chunk.error}", True)
                if child.cancelled:
                    break
        except Cancelled as err:
            if cancel.cancelled:
                raise
            raise _SummaryFailed("failed", "summary timed out", True) from err
        except ProviderError as err:
            raise _SummaryFailed("failed", f"summary request failed: {err}", True) from err
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        if cancel.cancelled:
            raise Cancelled(cancel.reason or "cancelled")
        if child.cancelled:
            raise _SummaryFailed("failed", "summary timed out", True)
        if finish in _CAP_REASONS:
            raise _SummaryFailed("failed", "summary hit the output token cap", True)
        text = "".join(parts).strip()
        if not text:
            raise _SummaryFailed("failed", "summary was empty", True)
        return text


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
