"""Input that cannot fit the context window: the rules, as pure functions.

Every way a large text enters a session is bounded here, so a session can
never reach a state that no compaction can repair:

- a **new user message** is checked before it is added
  (:func:`admission_limit`): one that alone, with the system prompt and the
  tools, does not fit the window is refused with
  :class:`~reasonix.errors.InputTooLarge` and never enters the transcript;
- a **tool call** whose arguments take more than half the window
  (:func:`call_too_large`) is not run: the transcript keeps a short marked
  placeholder (:func:`omitted_call`) and the model gets a tool error it can
  react to (:func:`call_refusal`);
- a **summary request** fits the window with room for the summary
  (:func:`plan_prefix`): the old prefix as it was sent when it fits (the
  provider's prefix cache then serves it), else a shorter prefix ending on a
  whole tool-call group, else the prefix with each message larger than its
  share of the budget cut to a marked head and tail and, when still too
  large, its oldest messages left out with a marker saying so
  (:func:`fit_prefix`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from reasonix.agent.tokens import estimate_large
from reasonix.lazy import dataclass, replace
from reasonix.provider.budget import MIN_USEFUL_OUTPUT
from reasonix.provider.types import Message, Role, ToolCall

__all__ = [
    "CUT_MARKER",
    "MIN_SUMMARY_INPUT",
    "SMALL_ARGUMENTS",
    "UNBOUNDED_TOKENS",
    "Fitted",
    "admission_limit",
    "call_refusal",
    "call_too_large",
    "first_turn_preamble",
    "fit_prefix",
    "omitted_call",
    "plan_prefix",
    "room_text",
    "summary_margin",
    "summary_output_cap",
    "summary_reserve",
    "too_large_text",
]

# With no window known at all (context_window = 0 and nothing served), a message
# of more tokens than the largest windows offered anywhere is still refused.
UNBOUNDED_TOKENS = 2 * 1024 * 1024
SUMMARY_OUTPUT_CAP = 8192  # D9: the summary's own output cap (compaction.SUMMARY_MAX_TOKENS)
MIN_SUMMARY_INPUT = 256  # tokens of conversation a summary request must have room for
CUT_MARKER = "[... {n} characters cut: this message is too large for the summary request ...]"
_OMITTED_INTRO = "[{n} earlier messages (about {t} tokens) are left out of this summary: "
_OMITTED = (
    _OMITTED_INTRO + "they do not fit the model's context window. The full transcript is "
    "still stored locally; the `history` tool searches it.]"
)


def admission_limit(window: int) -> int:
    """Tokens a request may take and still leave the model room to answer."""
    if window <= 0:
        return UNBOUNDED_TOKENS
    return window - min(MIN_USEFUL_OUTPUT, window // 8)


def first_turn_preamble(text: str) -> int:
    """Where the user's own words start in a first user turn: the ``<instructions>``
    and ``<skills>`` blocks before them belong to the fixed prompt (0 when none)."""
    pos = 0
    for tag in ("instructions", "skills"):
        if text.startswith(f"<{tag}>", pos):
            end = text.find(f"</{tag}>", pos)
            if end < 0:
                return pos
            pos = end + len(tag) + 3
            while text.startswith("\n", pos):
                pos += 1
    return pos


def too_large_text(
    *,
    message_tokens: int,
    fixed_tokens: int,
    window: int,
    sent: bool,
    tools: int = 0,
    instruction_tokens: int = 0,
    history_tokens: int = 0,
) -> str:
    """The words of an :class:`~reasonix.errors.InputTooLarge` (what, how big, what to do).

    It says what takes the room, in tokens (issue 37): the fixed prompt (system
    prompt, ``tools`` tool definitions, ``instruction_tokens`` of instruction
    files), the history (compacted when needed, so it never blocks a message)
    and the message itself.
    """
    where = f"the model's window is {window} tokens" if window > 0 else "no model takes that much"
    parts = f"{tools} tool definitions" if tools else "tool definitions"
    if instruction_tokens:
        parts += f" and instructions (about {instruction_tokens})"
    fixed_all = fixed_tokens + instruction_tokens
    if fixed_all >= admission_limit(window):
        return (
            f"the fixed prompt alone (system prompt, {parts}) is about {fixed_all} tokens; "
            f"{where} — use a larger window or fewer tools (MCP servers)"
        )
    room = f"; the fixed prompt (system prompt, {parts}) takes about {fixed_all}"
    if history_tokens:
        room += f" and the history about {history_tokens} (compacted when needed)"
    refused = "the server refused it; " if sent else ""
    return (
        f"your message is about {message_tokens} tokens; {where}{room} — {refused}it was not "
        "added to the session: send a shorter message (or point to a file instead of pasting it)"
    )


def room_text(
    content: str,
    size: int,
    fixed: int,
    window: int,
    *,
    sent: bool,
    tools: int,
    history_tokens: int,
    ratio: float = 1.0,
) -> str:
    """:func:`too_large_text` for a refused user message of ``size`` tokens whose
    first-turn instruction preamble (if any) is counted with the fixed prompt."""
    cut = first_turn_preamble(content)
    preamble = math.ceil(ratio * estimate_large(content[:cut])) if cut else 0
    return too_large_text(
        message_tokens=max(0, size - preamble), fixed_tokens=fixed, window=window, sent=sent,
        tools=tools, instruction_tokens=preamble, history_tokens=history_tokens,
    )  # fmt: skip


SMALL_ARGUMENTS = 1024  # characters; arguments shorter than this are never refused


def call_too_large(call: ToolCall, window: int, ratio: float) -> int:
    """The argument size in tokens when it takes more than half the window, else 0."""
    if len(call.arguments) < SMALL_ARGUMENTS:  # the common case, without estimating
        return 0
    tokens = math.ceil(ratio * estimate_large(call.arguments))
    limit = window // 2 if window > 0 else UNBOUNDED_TOKENS
    return tokens if tokens > limit else 0


def omitted_call(call: ToolCall, tokens: int) -> ToolCall:
    """The call as the transcript keeps it: valid JSON that says what was dropped."""
    note = f"{len(call.arguments)} characters (about {tokens} tokens) of arguments omitted"
    return replace(call, arguments=json.dumps({"omitted": note}))


def call_refusal(call: ToolCall, tokens: int, window: int) -> str:
    """The tool error the model reads instead of a result."""
    what = f"half of the model's {window}-token context window" if window > 0 else "any model takes"
    return (
        f"{call.name}: not run: its arguments are about {tokens} tokens, more than {what}, "
        "so they were not kept. Do the same work in smaller calls (for example write a large "
        "file in several parts)."
    )


def summary_reserve(window: int) -> int:
    """Output room a summary request keeps free in ``window``: 1/8 of it, 1024…8192."""
    return min(SUMMARY_OUTPUT_CAP, max(MIN_USEFUL_OUTPUT, window // 8))


def summary_margin(window: int) -> int:
    """Tokens a summary request leaves unused in ``window`` (1/20 of it): the server's
    tokenizer is not our estimate, and some servers count ``max_tokens`` in the window."""
    return max(0, window) // 20


def summary_output_cap(window: int, prompt_tokens: int) -> int:
    """The summary's ``max_tokens``: 8192 (D9), or the room the window has left
    after the prompt and :func:`summary_margin`."""
    if window <= 0:
        return SUMMARY_OUTPUT_CAP
    return max(1, min(SUMMARY_OUTPUT_CAP, window - prompt_tokens - summary_margin(window)))


@dataclass
class Fitted:
    """A summary prefix made to fit: the messages plus what was changed on the way."""

    messages: list[Message]
    tokens: int = 0  # their calibrated size
    cut: int = 0  # messages shortened to a marked head and tail
    dropped: int = 0  # oldest messages left out (a marker message says so)
    covers: int = 0  # how many of the given messages the summary stands for

    @property
    def changed(self) -> bool:
        """True when the prefix differs from the messages it was built from."""
        return bool(self.cut or self.dropped)


def _cut(text: str, keep: int) -> str:
    if len(text) <= keep:
        return text
    head = keep * 3 // 4
    tail = keep - head
    marker = CUT_MARKER.format(n=len(text) - keep)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"


def _shrink(msg: Message, size: int, target: int) -> Message:
    """``msg`` cut to about ``target`` tokens (content, reasoning and call arguments alike)."""
    share = max(0.0, min(1.0, target / max(1, size)))

    def keep(text: str) -> int:
        return max(256, int(len(text) * share))

    calls = [
        replace(tc, arguments=json.dumps({"cut_arguments": _cut(tc.arguments, keep(tc.arguments))}))
        if len(tc.arguments) > keep(tc.arguments)
        else tc
        for tc in msg.tool_calls
    ]
    return replace(
        msg,
        content=_cut(msg.content, keep(msg.content)),
        reasoning=_cut(msg.reasoning, keep(msg.reasoning)),
        tool_calls=calls,
    )


def fit_prefix(
    messages: Sequence[Message], sizes: Sequence[int], budget: int, *, pinned: int = 0
) -> Fitted:
    """The prefix of a summary request, made to fit ``budget`` tokens.

    ``sizes`` are the messages' calibrated token sizes; the first ``pinned``
    messages (an earlier digest) are never left out. A message larger than a
    third of the budget is cut first; then the oldest unpinned messages are
    left out until the rest fits (never leaving a tool result without its
    call), and a marker message takes their place.
    """
    out = list(messages)
    sized = list(sizes)
    fitted = Fitted(out, covers=len(out))
    cap = max(1, budget // 3)
    for i, size in enumerate(sized):
        if size > cap:
            out[i] = _shrink(out[i], size, cap // 2)
            sized[i] = max(1, math.ceil(size * _ratio(messages[i], out[i])))
            fitted.cut += 1
    start = pinned
    total = sum(sized)
    while total > budget and start < len(out):
        total -= sized[start]
        start += 1
        while start < len(out) and out[start].role is Role.TOOL:  # results go with their call
            total -= sized[start]
            start += 1
    dropped = start - pinned
    if dropped:
        omitted = sum(sizes[pinned:start])
        marker = Message(Role.USER, _OMITTED.format(n=dropped, t=omitted))
        out = [*out[:pinned], marker, *out[start:]]
        fitted.dropped = dropped
        total += 64  # the marker itself
    fitted.messages, fitted.tokens = out, total
    return fitted


def plan_prefix(
    messages: Sequence[Message],
    sizes: Sequence[int],
    budget: int,
    *,
    pinned: int = 0,
    needed: int = 0,
) -> Fitted:
    """The messages a summary request carries, chosen to keep the prefix cache.

    ``messages`` (calibrated ``sizes``) are the old prefix to summarise; the
    first ``pinned`` are an earlier digest. In order of preference:

    1. all of them, unchanged, when they fit ``budget``;
    2. the longest unchanged prefix that fits, ends on a whole tool-call group
       and stands for at least ``needed`` tokens beyond the pinned digest (what
       the summary must relieve, plus room for the summary itself) — the rest
       stays verbatim after the new digest (:attr:`Fitted.covers` says where);
    3. all of them through :func:`fit_prefix` (oversized messages cut, the
       oldest left out, both marked).

    The first two send exactly what the provider has cached.
    """
    total = sum(sizes)
    if total <= budget:
        return Fitted(list(messages), tokens=total, covers=len(messages))
    acc, best = 0, 0
    for k, size in enumerate(sizes):
        if acc > budget:
            break
        if k > pinned and messages[k].role is not Role.TOOL:  # a group boundary
            best = k
        acc += size
    if best > pinned and sum(sizes[pinned:best]) >= max(1, needed):
        return Fitted(list(messages[:best]), tokens=sum(sizes[:best]), covers=best)
    return fit_prefix(messages, sizes, budget, pinned=pinned)


def _ratio(before: Message, after: Message) -> float:
    """How much of a message's text is left after cutting (characters)."""

    def length(m: Message) -> int:
        return len(m.content) + len(m.reasoning) + sum(len(c.arguments) for c in m.tool_calls)

    return length(after) / max(1, length(before))
