"""Token estimation without a tokenizer (D18).

Reasonix must decide *before* sending whether a request crosses the
compaction trigger, and the runtime is stdlib-only, so it cannot ship a BPE
vocabulary. :func:`estimate_text` approximates a GPT-style byte-pair encoder
by splitting text the way those encoders pre-split it (letter runs, digit
groups, punctuation runs, whitespace, CJK characters) and charging each piece
a calibrated cost. The constants were fitted against ``cl100k_base`` on a
mixed corpus of code, English, Chinese and JSON (``bench/tokens.py`` prints
the per-corpus error; the target is ±15 %).

No estimate is exact for every vendor's tokenizer, so :class:`TokenCounter`
corrects it with the truth the provider reports: after each request the
reported prompt tokens replace the estimate of the prefix that was sent, and
their ratio to the raw estimate scales whatever is new since.
"""

from __future__ import annotations

import functools
import json
import math
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from reasonix.provider.types import Message, ToolSchema

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MESSAGE_OVERHEAD",
    "TokenCounter",
    "estimate_large",
    "estimate_message",
    "estimate_messages",
    "estimate_request",
    "estimate_text",
    "estimate_tools",
    "message_bound",
    "message_size",
]

# Per-message framing (role markers, separators) that chat templates add.
MESSAGE_OVERHEAD = 4


# One pre-tokenizer piece per match, mirroring the cl100k split: an optional
# leading symbol glued to a letter run, digit groups of up to three, symbol
# runs with their trailing newlines, and whitespace. ``[^\W\d_]`` is
# Python's spelling of "a Unicode letter".
@functools.cache
def _piece_re() -> re.Pattern[str]:
    """The piece splitter, compiled on first use (not at import)."""
    return re.compile(
        r"'(?:[sdmtSDMT]|ll|ve|re|LL|VE|RE)"
        r"|(?P<word>(?:[^\r\n\w]|_)?[^\W\d_]+)"
        r"|(?P<digits>\d{1,3})"
        r"|(?P<symbols> ?(?:[^\s\w]|_)+[\r\n]*)"
        r"|\s*[\r\n]|\s+(?!\S)|\s"
    )


@functools.cache
def _cjk_re() -> re.Pattern[str]:
    """CJK characters, compiled on first use (only non-ASCII words need it)."""
    return re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


# Fitted constants (see module docstring). A CJK character costs a bit more
# than one token in cl100k because rarer ideographs take two byte-level
# tokens; an ASCII word of up to _WORD_ONE letters is nearly always one token.
_CJK_COST = 1.1
_WORD_ONE = 7
_WORD_CHARS_PER_TOKEN = 4.0
_SYMBOL_CHARS_PER_TOKEN = 2.0
_NON_ASCII_CHAR_COST = 0.5


def _word_cost(word: str) -> float:
    if word.isascii():  # the common case, without a per-character scan
        ascii_letters, cjk = len(word), 0
    else:
        ascii_letters = sum(1 for c in word if c < "\x80")
        cjk = len(_cjk_re().findall(word))
    other = len(word) - ascii_letters - cjk
    cost = cjk * _CJK_COST + other * _NON_ASCII_CHAR_COST
    if ascii_letters:
        # Up to _WORD_ONE letters is nearly always one token; longer runs
        # (identifiers glued together, rare words) add a token per few letters.
        extra = max(0, ascii_letters - _WORD_ONE)
        cost += 1.0 + math.ceil(extra / _WORD_CHARS_PER_TOKEN)
    return cost


@functools.lru_cache(maxsize=8192)
def estimate_text(text: str) -> int:
    """Estimated token count of ``text`` (0 for the empty string).

    Cached: every request re-estimates the whole (append-only) history and the
    fixed tool schemas, and a str caches its own hash, so repeats cost a lookup.
    """
    if not text:
        return 0
    total = 0.0
    for m in _piece_re().finditer(text):
        kind = m.lastgroup
        if kind == "word":
            word = m.group()
            if not word[0].isalpha():
                word = word[1:]
            total += _word_cost(word)
        elif kind == "symbols":
            body = m.group().strip(" \r\n")
            total += max(1.0, len(body) / _SYMBOL_CHARS_PER_TOKEN)
        else:  # digit groups, contractions and whitespace runs: one token each
            total += 1.0
    return max(1, round(total))


_LARGE = 262144  # code points; above this a text is estimated from samples
_SAMPLES = 16
_SAMPLE = 8192


def estimate_large(text: str) -> int:
    """Like :func:`estimate_text`, but fast for huge texts (a 5 MB prompt, a 20 MB argument).

    Above 256 Ki code points the cost per character of evenly spaced samples
    is extrapolated to the whole text: the exact pass would take seconds, and
    the number only has to tell "fits" from "can never fit".
    """
    if len(text) <= _LARGE:
        return estimate_text(text)
    step = (len(text) - _SAMPLE) // (_SAMPLES - 1)
    sampled = sum(estimate_text(text[i * step : i * step + _SAMPLE]) for i in range(_SAMPLES))
    return math.ceil(sampled / (_SAMPLES * _SAMPLE) * len(text))


# No piece of text costs more than this per code point (a CJK character's
# 1.1; a word costs at most one per letter, symbols one per two), so
# ``estimate_text(t) <= ceil(len(t) * _MAX_PER_CHAR) + 1`` for every ``t``.
_MAX_PER_CHAR = 1.1


def upper_bound_text(text: str) -> int:
    """A cheap bound that :func:`estimate_text` never exceeds (no scan of the text)."""
    return math.ceil(len(text) * _MAX_PER_CHAR) + 1 if text else 0


def estimate_message(msg: Message) -> int:
    """Estimated tokens of one message including its framing."""
    n = MESSAGE_OVERHEAD + estimate_text(msg.content)
    for tc in msg.tool_calls:
        n += MESSAGE_OVERHEAD + estimate_text(tc.name) + estimate_text(tc.arguments)
    if msg.reasoning:
        n += estimate_text(msg.reasoning)
    if msg.tool_call_id:
        n += 2
    return n


def estimate_messages(messages: Sequence[Message]) -> int:
    """Sum of :func:`estimate_message` over ``messages``."""
    return sum(estimate_message(m) for m in messages)


def estimate_tools(tools: Sequence[ToolSchema] | Sequence[dict[str, Any]]) -> int:
    """Estimated tokens of a tools schema list (as the JSON the wire carries)."""
    if not tools:
        return 0
    items: list[Any] = []
    for t in tools:
        if isinstance(t, ToolSchema):
            items.append({"name": t.name, "description": t.description, "parameters": t.parameters})
        else:
            items.append(t)
    return estimate_text(json.dumps(items, separators=(",", ":"), ensure_ascii=False))


def upper_bound_message(msg: Message) -> int:
    """A bound that :func:`estimate_message` never exceeds (no text walk)."""
    n = MESSAGE_OVERHEAD + upper_bound_text(msg.content)
    for tc in msg.tool_calls:
        n += MESSAGE_OVERHEAD + upper_bound_text(tc.name) + upper_bound_text(tc.arguments)
    if msg.reasoning:
        n += upper_bound_text(msg.reasoning)
    if msg.tool_call_id:
        n += 2
    return n


def message_size(message: Message) -> int:
    """Raw token estimate of one message; huge texts are sampled, not walked."""
    if len(message.content) <= 65536 and not message.tool_calls:
        return estimate_message(message)
    extra = sum(estimate_large(c.arguments) for c in message.tool_calls)
    return estimate_message(Message(message.role, "")) + estimate_large(message.content) + extra


def message_bound(message: Message) -> int:
    """A bound :func:`message_size` never exceeds, without a text walk.

    A sampled estimate of a huge text may pass the exact bound by at most
    ``len / 4096`` (two tokens per 8 KiB sample): that much is added.
    """
    texts = [message.content, *(c.arguments for c in message.tool_calls)]
    return upper_bound_message(message) + sum(len(t) // 4096 + 1 for t in texts)


def upper_bound_request(system: str, tools: Sequence[ToolSchema] = ()) -> int:
    """A bound that ``estimate_request(system, [], tools)`` never exceeds (no text walk)."""
    bound = upper_bound_text(system) + MESSAGE_OVERHEAD if system else 0
    if tools:
        items = [{"name": t.name, "description": t.description, "parameters": t.parameters}
                 for t in tools]  # fmt: skip
        bound += upper_bound_text(json.dumps(items, separators=(",", ":"), ensure_ascii=False))
    return bound


def estimate_request(
    system: str, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()
) -> int:
    """Raw (uncalibrated) estimate of a whole request."""
    return (
        (estimate_text(system) + MESSAGE_OVERHEAD if system else 0)
        + estimate_tools(tools)
        + estimate_messages(messages)
    )


class _Anchor(NamedTuple):
    """What the provider told us about the last request that was sent.

    A named tuple, not a dataclass: replaced whole after every request (issue 39).
    """

    messages: tuple[Message, ...]  # the sent message objects, in order (kept alive)
    reported: int  # provider's prompt tokens for the whole request


_MAX_RATIO = 4.0  # the correction factor is clamped to [1/4, 4]
_MIN_RATIO = 0.25


class TokenCounter:
    """Request-size estimator corrected by provider-reported prompt tokens.

    ``note_sent`` remembers which message objects a request carried;
    ``observe`` then records the provider's prompt-token count for it. A
    later request whose messages begin with those same objects is estimated
    as ``reported + ratio × raw(new messages)`` where ``ratio`` is the
    reported/raw ratio of the anchor; any other request as ``ratio × raw``.
    The prefix test is by identity first and equality second: a projection
    rewrite builds new objects with new content, so a stale anchor can never
    be mistaken for the prefix of a rewritten request, while the user message
    a request carried and the same message read back from the transcript
    (equal, not identical) still count as the prefix they are.

    The raw estimate behind a report (a walk of the whole request, tool
    schemas included) is made only when the ratio is first needed: while
    :meth:`upper_bound` shows a request is far from any limit, nobody is.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # the last request noted: its messages and what the raw estimate is made of
        self._pending: tuple[tuple[Message, ...], str, tuple[ToolSchema, ...]] | None = None
        self._anchor: _Anchor | None = None
        # a report whose raw estimate (and so the ratio) is not made yet
        self._unsettled: tuple[tuple[Message, ...], str, tuple[ToolSchema, ...], int] | None
        self._unsettled = None
        self._ratio = 1.0
        # the last raw estimate made, and of what: the next report's request usually
        # extends it, and only its new messages are walked (a turn costs the same late
        # in a long session as early in a short one)
        self._raw: tuple[tuple[Message, ...], str, tuple[ToolSchema, ...], int] | None = None

    @property
    def ratio(self) -> float:
        """Current reported/raw correction factor (1.0 until a report arrives)."""
        self._settle()
        return self._ratio

    def note_sent(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> None:
        """Remember the request about to be sent so a later report can anchor it.

        Its raw estimate is not made here: the request leaves without waiting
        for a count only the reply needs (and perhaps nobody, see the class).
        """
        with self._lock:
            self._pending = (tuple(messages), system, tuple(tools))

    def observe(self, prompt_tokens: int) -> None:
        """Record the provider's prompt-token count for the last noted request."""
        with self._lock:
            if self._pending is None or prompt_tokens <= 0:
                return
            sent, system, tools = self._pending
            self._anchor = _Anchor(sent, prompt_tokens)
            self._unsettled = (sent, system, tools, prompt_tokens)

    def _settle(self) -> None:
        """Make the raw estimate of the last report and update the ratio from it."""
        with self._lock:
            job = self._unsettled
        if job is None:
            return
        sent, system, tools, reported = job
        raw = self._raw_estimate(sent, system, tools)  # outside the lock: it may take a while
        with self._lock:
            if self._unsettled is not job:
                return  # a newer report (settled by whoever asks next) or a bump came first
            self._unsettled = None
            if raw > 0:
                # Clamp: one odd report (e.g. a vendor counting cached tokens
                # separately) must not make the estimator absurd.
                self._ratio = min(_MAX_RATIO, max(_MIN_RATIO, reported / raw))

    def _raw_estimate(
        self, sent: tuple[Message, ...], system: str, tools: tuple[ToolSchema, ...]
    ) -> int:
        """``estimate_request(system, sent, tools)``, walking only what the last one did not.

        The estimate is a sum over messages, so a request that extends the
        last one estimated costs that one's figure plus its new messages'.
        """
        last = self._raw
        if last is not None and last[1] == system and last[2] == tools and _extends(sent, last[0]):
            raw = last[3] + estimate_messages(sent[len(last[0]) :])
        else:
            raw = estimate_request(system, sent, tools)
        self._raw = (sent, system, tools, raw)
        return raw

    @property
    def anchored(self) -> bool:
        """True once a usage report anchors the estimate (it is then no longer ratio × raw)."""
        with self._lock:
            return self._anchor is not None

    def bump_ratio(self, minimum: float) -> None:
        """Raise the ratio to at least ``minimum`` (after an overflow the estimate was too low)."""
        self._settle()
        with self._lock:
            self._ratio = min(_MAX_RATIO, max(self._ratio, minimum))
            self._anchor = None
            self._unsettled = None

    def upper_bound(self, messages: Sequence[Message]) -> int | None:
        """A bound :meth:`estimate` never exceeds for ``messages``, without a text walk.

        Only for a request that extends the anchored one (else None): the
        reported count plus the new messages' bound at the largest ratio.
        """
        with self._lock:
            anchor = self._anchor
        if anchor is None or not _extends(messages, anchor.messages):
            return None
        tail = messages[len(anchor.messages) :]
        return anchor.reported + math.ceil(_MAX_RATIO * sum(upper_bound_message(m) for m in tail))

    def estimate(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> int:
        """Calibrated token estimate of a request."""
        self._settle()
        with self._lock:
            anchor, ratio = self._anchor, self._ratio
        if anchor is not None and _extends(messages, anchor.messages):
            tail = messages[len(anchor.messages) :]
            return anchor.reported + math.ceil(ratio * estimate_messages(tail))
        return math.ceil(ratio * estimate_request(system, messages, tools))


def _extends(messages: Sequence[Message], prefix: tuple[Message, ...]) -> bool:
    """True when ``messages`` begins with ``prefix`` (the same objects, or equal ones)."""
    n = len(prefix)
    if len(messages) < n:
        return False
    # Tuple equality tests each pair by identity first, then ==: the test above, in C
    # (a walk in Python here grew every turn's cost with the length of the request).
    head = messages[:n]
    return prefix == (head if isinstance(head, tuple) else tuple(head))
