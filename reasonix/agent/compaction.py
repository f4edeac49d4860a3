"""Compaction planning: pure functions over records, messages and numbers.

Nothing here performs I/O (STYLE h11): :mod:`reasonix.agent.context` reads the
transcript, calls the provider and appends records; this module only decides.

Vocabulary (spec §3.6, D9, D18, D19):

- *canonical records* — the append-only session transcript (dicts). They are
  never rewritten.
- *checkpoint record* — ``{"type": "checkpoint", "generation": g,
  "covers_through": i, "summary": s, "pruned": {"records": [j, ...]}}``.
  Canonical messages with record index ``<= i`` are replaced by one digest
  message carrying ``s``; tool results at the listed indices are shown
  pruned. Each checkpoint is self-contained, so the projection only needs the
  last valid one. It is written as one JSONL line, so a kill leaves either
  the old or the new checkpoint in force.
- *compaction record* — ``{"type": "compaction", "generation": g,
  "status": "failed" | "blocked", "reason": r}``: maintenance could not
  relieve pressure in generation ``g``; automatic summaries stop until a new
  digest generation exists (a manual compact may create one).
- *projection* — the message list actually sent: digest + uncovered
  canonical messages, pruned where the checkpoint says so.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from reasonix.provider.types import Message, Role

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CHECKPOINT",
    "COMPACTION",
    "DIGEST_HEADER",
    "KEEP_FRACTION",
    "MAX_PRESSURE_SUMMARIES",
    "PRUNE_HEAD",
    "PRUNE_MARKER",
    "PRUNE_TAIL",
    "PRUNE_THRESHOLD",
    "SUMMARY_INSTRUCTION",
    "SUMMARY_MAX_TOKENS",
    "Action",
    "Checkpoint",
    "Entry",
    "Projection",
    "checkpoint_record",
    "digest_message",
    "failure_record",
    "keep_budget",
    "load_projection",
    "message_from_record",
    "next_action",
    "parse_checkpoint",
    "pinned_block",
    "project",
    "prune_candidates",
    "prune_text",
    "select_cut",
    "summary_instruction",
    "trigger_tokens",
    "with_pins",
]

CHECKPOINT = "checkpoint"
COMPACTION = "compaction"

PRUNE_THRESHOLD = 8192  # code points; longer tool results get pruned (D19)
PRUNE_HEAD = 4096
PRUNE_TAIL = 1024
PRUNE_MARKER = "[... tool result middle pruned ...]"
KEEP_FRACTION = 0.16  # newest share of the window kept verbatim (D9, D18)
SUMMARY_MAX_TOKENS = 8192
MAX_PRESSURE_SUMMARIES = 2  # D4
MAX_OVERFLOW_SUMMARIES = 1  # D4

DIGEST_HEADER = (
    "[Context checkpoint {generation}: the earlier part of this conversation was "
    "summarised below. The full transcript is still stored locally; the `history` "
    "tool searches it.]\n\n"
)

SUMMARY_INSTRUCTION = (
    "Context maintenance: the conversation above will be replaced by your summary, "
    "so write the summary that lets the work continue from it alone. If the "
    "conversation starts with an earlier context checkpoint, merge it in and produce "
    "a single summary. Keep: the user's goals, requests and constraints (quote "
    "exact wording where it matters); decisions and their reasons; files, symbols, "
    "commands and URLs touched, with their outcomes; errors still open; what is "
    "done and the exact next step. Drop pleasantries and content that is no longer "
    "relevant. Do not call tools. Reply with the summary text only."
)


def summary_instruction(focus: str = "", pins: Sequence[str] = ()) -> str:
    """The summary request's last user message; ``/compact FOCUS`` adds what to favour,
    ``/pin`` the items the user asked to keep word for word."""
    focus = " ".join(focus.split())
    text = SUMMARY_INSTRUCTION
    if focus:
        text += f"\n\nThe user asked the summary to focus on: {focus}"
    if pins:
        text += "\n\n" + pinned_block(pins)
    return text


def pinned_block(pins: Sequence[str]) -> str:
    """The pinned items, verbatim, as every summary carries them."""
    return "Pinned by the user (keep verbatim):\n" + "\n".join(f"- {p}" for p in pins)


def with_pins(summary: str, pins: Sequence[str]) -> str:
    """``summary`` plus the pinned items it does not already quote, word for word."""
    missing = [p for p in pins if p not in summary]
    return f"{summary}\n\n{pinned_block(missing)}" if missing else summary


def trigger_tokens(context_window: int, compact_ratio: float) -> int:
    """``floor(context_window × compact_ratio)``; 0 when the window is unknown (disabled)."""
    if context_window <= 0:
        return 0
    # round() first so 1_000_000 × 0.80 does not become 799_999 through binary fractions.
    return math.floor(round(context_window * compact_ratio, 6))


def keep_budget(context_window: int) -> int:
    """Tokens of the newest history kept verbatim: 16 % of the window."""
    return math.floor(max(0, context_window) * KEEP_FRACTION)


def prune_text(text: str) -> str | None:
    """The pruned form of a tool result, or None when it is short enough.

    Python strings index by code point, so slicing never splits a character
    (astral characters included).
    """
    if len(text) <= PRUNE_THRESHOLD:
        return None
    return f"{text[:PRUNE_HEAD]}\n{PRUNE_MARKER}\n{text[-PRUNE_TAIL:]}"


def digest_message(generation: int, summary: str) -> Message:
    """The single provider-visible message that stands for a summarised prefix."""
    return Message(role=Role.USER, content=DIGEST_HEADER.format(generation=generation) + summary)


def message_from_record(record: Mapping[str, Any]) -> Message | None:
    """The provider-visible message of a ``message`` record, or None for other records.

    Accepts ``{"type": "message", "message": {...}}`` and the flat form
    ``{"type": "message", "role": ..., ...}``. ``raw_content`` is ignored on
    purpose: only the bounded ``content`` may reach a provider (CTX-4).
    """
    if record.get("type") != "message":
        return None
    body = record.get("message")
    data = body if isinstance(body, Mapping) else record
    try:
        return Message.from_dict(dict(data))
    except (KeyError, ValueError, TypeError):
        return None


class Checkpoint(NamedTuple):
    """The parsed content of a checkpoint record.

    A named tuple, not a dataclass: an immutable record every session loads (issue 39).
    """

    generation: int
    covers_through: int  # last canonical record index replaced by the digest (-1: none)
    summary: str  # "" for a prune-only checkpoint before any summary
    pruned: frozenset[int] = frozenset()


def parse_checkpoint(record: Mapping[str, Any]) -> Checkpoint | None:
    """A :class:`Checkpoint` from a record, or None when it is not a valid one."""
    if record.get("type") != CHECKPOINT:
        return None
    gen, covers, summary = (
        record.get("generation"),
        record.get("covers_through"),
        record.get("summary"),
    )
    pruned = record.get("pruned", {})
    indexes = pruned.get("records", []) if isinstance(pruned, Mapping) else None
    if (
        not isinstance(gen, int)
        or not isinstance(covers, int)
        or isinstance(gen, bool)
        or isinstance(covers, bool)
        or not isinstance(summary, str)
        or not isinstance(indexes, list)
        or not all(_is_int(i) for i in indexes)
    ):
        return None
    return Checkpoint(gen, covers, summary, frozenset(indexes))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def checkpoint_record(cp: Checkpoint) -> dict[str, Any]:
    """The record to append for ``cp`` (inverse of :func:`parse_checkpoint`)."""
    return {
        "type": CHECKPOINT,
        "generation": cp.generation,
        "covers_through": cp.covers_through,
        "summary": cp.summary,
        "pruned": {
            "records": sorted(cp.pruned),
            "threshold": PRUNE_THRESHOLD,
            "head": PRUNE_HEAD,
            "tail": PRUNE_TAIL,
        },
    }


def failure_record(generation: int, status: str, reason: str) -> dict[str, Any]:
    """The record noting that maintenance failed (``failed``) or could not run (``blocked``)."""
    return {"type": COMPACTION, "generation": generation, "status": status, "reason": reason}


class Entry(NamedTuple):
    """One projected message and the canonical record index it comes from.

    The digest entry carries the checkpoint's ``covers_through`` index. A named tuple,
    not a dataclass: an immutable record made for every message (issue 39).
    """

    # The field shadows tuple.index (mypy says so); nothing looks an entry's items up.
    index: int  # type: ignore[assignment]
    message: Message
    digest: bool = False


_NO_CHECKPOINT = Checkpoint(0, -1, "")  # before any: nothing covered, nothing pruned


class Projection:
    """The current provider-visible view of a transcript.

    ``failures`` maps a generation to its (status, reason); ``seen`` counts the
    canonical records folded in. A plain class, not a dataclass: it grows in place as
    records come (issue 39).
    """

    def __init__(
        self,
        entries: list[Entry] | None = None,
        checkpoint: Checkpoint = _NO_CHECKPOINT,
        failures: dict[int, tuple[str, str]] | None = None,
        seen: int = 0,
    ) -> None:
        self.entries: list[Entry] = [] if entries is None else entries
        self.checkpoint = checkpoint
        self.failures: dict[int, tuple[str, str]] = {} if failures is None else failures
        self.seen = seen

    @property
    def messages(self) -> list[Message]:
        """The messages to send, in order."""
        return [e.message for e in self.entries]

    @property
    def generation(self) -> int:
        """Digest generation in force (0 before the first summary)."""
        return self.checkpoint.generation

    @property
    def blocked(self) -> bool:
        """True when automatic summaries are off for the current generation."""
        return self.generation in self.failures

    def extend(self, records: Sequence[Mapping[str, Any]]) -> bool:
        """Fold canonical records from index ``seen`` on; False if a full reload is needed.

        A new checkpoint record changes earlier entries, so it asks for a reload
        (via :func:`load_projection`); plain messages and failure notes are
        appended in place, keeping existing Message objects (and thereby the
        token counter's anchor) intact.
        """
        for i in range(self.seen, len(records)):
            rec = records[i]
            kind = rec.get("type")
            if kind == CHECKPOINT and parse_checkpoint(rec) is not None:
                return False
            if kind == COMPACTION:
                _note_failure(self.failures, rec)
            else:
                self._add(i, rec)
            self.seen = i + 1
        return True

    def _add(self, index: int, record: Mapping[str, Any]) -> None:
        if index <= self.checkpoint.covers_through:
            return
        msg = message_from_record(record)
        if msg is None:
            return
        if index in self.checkpoint.pruned and msg.role == Role.TOOL:
            short = prune_text(msg.content)
            if short is not None:
                msg = Message.from_dict({**msg.to_dict(), "content": short})
        self.entries.append(Entry(index, msg))


def _note_failure(failures: dict[int, tuple[str, str]], rec: Mapping[str, Any]) -> None:
    gen, status = rec.get("generation"), rec.get("status")
    if isinstance(gen, int) and not isinstance(gen, bool) and status in ("failed", "blocked"):
        failures[gen] = (str(status), str(rec.get("reason", "")))


def load_projection(records: Sequence[Mapping[str, Any]]) -> Projection:
    """Build the projection of a whole transcript: the last valid checkpoint applies."""
    checkpoint = _NO_CHECKPOINT
    failures: dict[int, tuple[str, str]] = {}
    # A session's records know where their checkpoints and failure notes are
    # (RecordView.positions): a long session is not walked for the few there are.
    find = getattr(records, "positions", None)
    for i in find((CHECKPOINT, COMPACTION)) if find is not None else range(len(records)):
        rec = records[i]
        cp = parse_checkpoint(rec)
        if cp is not None:
            checkpoint = cp
        elif rec.get("type") == COMPACTION:
            _note_failure(failures, rec)
    view = Projection(checkpoint=checkpoint, failures=failures)
    if checkpoint.summary:
        view.entries.append(
            Entry(
                checkpoint.covers_through,
                digest_message(checkpoint.generation, checkpoint.summary),
                digest=True,
            )
        )
    # Records the checkpoint covers add nothing (``_add``): only those after it are visited,
    # so a resumed long session reads back none of what its digest replaced.
    for i in range(max(0, checkpoint.covers_through + 1), len(records)):
        rec = records[i]
        if rec.get("type") not in (CHECKPOINT, COMPACTION):
            view._add(i, rec)
    view.seen = len(records)
    return view


def project(records: Sequence[Mapping[str, Any]]) -> list[Message]:
    """The provider-visible messages of a transcript (restart restores the checkpoint)."""
    return load_projection(records).messages


def prune_candidates(entries: Iterable[Entry], already: frozenset[int]) -> list[int]:
    """Record indexes of tool results that the prune step would shorten now."""
    return [
        e.index
        for e in entries
        if not e.digest
        and e.message.role == Role.TOOL
        and e.index not in already
        and len(e.message.content) > PRUNE_THRESHOLD
    ]


def select_cut(roles: Sequence[Role], sizes: Sequence[int], budget: int) -> int:
    """Index where the verbatim tail starts; everything before it is summarised.

    The tail is the longest suffix whose sizes sum to at most ``budget``;
    when that would start inside a tool-call group (on a tool result) the cut
    moves later, so the assistant call and all its results are summarised
    together and the tail never begins with an orphaned result.
    """
    n = len(sizes)
    cut, acc = n, 0
    for i in range(n - 1, -1, -1):
        if acc + sizes[i] > budget:
            break
        acc += sizes[i]
        cut = i
    while cut < n and roles[cut] == Role.TOOL:
        cut += 1
    return cut


class Action(str, enum.Enum):
    """What the maintenance transaction should do next."""

    SEND = "send"  # under the target: nothing (more) to do
    SUMMARISE = "summarise"
    SEND_OVER = "send_over"  # over the trigger but under the hard limit; no remedy left
    REQUIRED = "required"  # over the hard limit and no remedy left: CompactionRequired


def next_action(
    tokens: int,
    *,
    target: int,
    hard_limit: int,
    summaries_done: int,
    max_summaries: int,
    blocked: bool,
) -> Action:
    """Decide the next step of a maintenance transaction from the numbers alone.

    ``hard_limit`` <= 0 means unknown (never REQUIRED from the estimate).
    """
    if tokens < target:
        return Action.SEND
    if not blocked and summaries_done < max_summaries:
        return Action.SUMMARISE
    if hard_limit > 0 and tokens >= hard_limit:
        return Action.REQUIRED
    return Action.SEND_OVER
