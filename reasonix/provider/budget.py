"""Output-token budgets: what goes into ``max_tokens`` (PROV-11…15, D10).

Everything here is pure. The agent calls :func:`resolve_max_tokens` once per
model call, passes the result as ``Request.max_tokens`` (None = omit the
optional wire field), asks :func:`needs_compaction` whether the output
budget still fits, and feeds HTTP 400 bodies to :func:`learned_output_limit`
and :func:`is_context_overflow` to learn from the server.

Terms:

* *setting* — the effective ``max_output_tokens`` for the model: ``0`` =
  provider automatic, ``> 0`` = a user cost cap (may be lowered to the room
  left, never raised), ``< 0`` = omit the optional field on purpose.
* *shared window* — the server counts prompt + output against one context
  window, so the physical room left is ``context_window - prompt_tokens``.
  Official DeepSeek (host ``api.deepseek.com``) is known to share; any other
  endpoint is assumed to only after a context-overflow 400 that counted the
  output (``shared_window_trusted``, see :func:`overflow_counts_output`).
* *automatic budget* — a limit learned from a 400 for this model, else 384K
  on official DeepSeek, else unknown.
"""

from __future__ import annotations

import functools
import re

from reasonix.errors import ProviderAPIError

__all__ = [
    "ANTHROPIC_FALLBACK",
    "DEEPSEEK_AUTO_BUDGET",
    "DEEPSEEK_HOST",
    "MIN_USEFUL_OUTPUT",
    "automatic_budget",
    "is_context_overflow",
    "learned_output_limit",
    "needs_compaction",
    "overflow_counts_output",
    "physical_remaining",
    "resolve_max_tokens",
]

DEEPSEEK_HOST = "api.deepseek.com"
DEEPSEEK_AUTO_BUDGET = 384 * 1024  # "384K": the official endpoint's automatic output budget
# The Messages API makes max_tokens mandatory; with nothing known about a
# third-party endpoint this is sent, and a 400 naming the real limit teaches us.
ANTHROPIC_FALLBACK = 32000
MIN_USEFUL_OUTPUT = 1024  # less room than this for an answer means: compact first


def automatic_budget(*, host: str, learned_limit: int | None = None) -> int | None:
    """The provider's own output capability, when known (PROV-12, D10)."""
    if learned_limit:
        return learned_limit
    if host == DEEPSEEK_HOST:
        return DEEPSEEK_AUTO_BUDGET
    return None


def physical_remaining(
    *, host: str, context_window: int, prompt_tokens: int, shared_window_trusted: bool = False
) -> int | None:
    """Room left for output in a shared window, or None when it is not known to be shared."""
    if context_window <= 0 or not (host == DEEPSEEK_HOST or shared_window_trusted):
        return None
    return max(1, context_window - prompt_tokens)


def resolve_max_tokens(
    setting: int,
    *,
    kind: str,
    host: str,
    context_window: int,
    prompt_tokens: int,
    learned_limit: int | None = None,
    shared_window_trusted: bool = False,
) -> int | None:
    """The wire value for ``max_tokens`` / ``max_output_tokens``; None = omit the field.

    ``kind = "anthropic"`` never returns None: the field is mandatory there (PROV-13).
    """
    room = physical_remaining(
        host=host,
        context_window=context_window,
        prompt_tokens=prompt_tokens,
        shared_window_trusted=shared_window_trusted,
    )
    auto = automatic_budget(host=host, learned_limit=learned_limit)

    def clip(value: int) -> int:
        return value if room is None else min(value, room)

    if setting > 0:  # a cost cap: lowered to the room and to a learned limit, never raised
        return clip(min(setting, learned_limit) if learned_limit else setting)
    if setting < 0:  # omit on purpose; compaction, not clipping, makes room (needs_compaction)
        return (auto or ANTHROPIC_FALLBACK) if kind == "anthropic" else None
    # Automatic.
    if kind == "anthropic":
        return clip(auto or ANTHROPIC_FALLBACK)
    if learned_limit:
        return clip(learned_limit)
    if auto is not None:
        # Official DeepSeek: the server's own budget applies while it fits;
        # a value is injected only when the window is tight.
        return None if room is None or room >= auto else room
    if room is not None:  # third party, after a trusted overflow: never ask past the window
        return room
    return None


def needs_compaction(
    setting: int,
    *,
    host: str,
    context_window: int,
    prompt_tokens: int,
    learned_limit: int | None = None,
    shared_window_trusted: bool = False,
) -> bool:
    """True when the output budget cannot fit without compacting the conversation.

    A negative setting forbids clipping, so the known automatic budget must fit
    whole (PROV-15); otherwise clipping is fine down to :data:`MIN_USEFUL_OUTPUT`.
    """
    room = physical_remaining(
        host=host,
        context_window=context_window,
        prompt_tokens=prompt_tokens,
        shared_window_trusted=shared_window_trusted,
    )
    if room is None:
        return False
    if room < MIN_USEFUL_OUTPUT:
        return True
    auto = automatic_budget(host=host, learned_limit=learned_limit)
    return setting < 0 and auto is not None and room < auto


# -- learning from 400 bodies ------------------------------------------------------


@functools.cache
def _limit_patterns() -> tuple[re.Pattern[str], list[re.Pattern[str]]]:
    """The output-field test and the limit patterns, compiled on first use (not at import)."""
    output_field = re.compile(
        r"max_tokens|max_output_tokens|max_completion_tokens|output tokens|completion tokens",
        re.IGNORECASE,
    )
    limits = [
        # OpenAI: "This model supports at most 16384 completion tokens"
        re.compile(r"supports at most (\d+) (?:completion|output) tokens", re.IGNORECASE),
        # DeepSeek: "the valid range of max_tokens is [1, 8192]"
        re.compile(r"valid range of \w+ is \[\s*\d+\s*,\s*(\d+)\s*\]", re.IGNORECASE),
        # Anthropic: "max_tokens: 100000 > 64000, which is the maximum allowed"
        re.compile(r"max_tokens:\s*\d+\s*>\s*(\d+)", re.IGNORECASE),
        # Generic: "max_tokens must be at most 4096", "… less than or equal to `8192`"
        re.compile(
            r"(?:max_tokens|max_output_tokens|max_completion_tokens)\b[^\d]{0,60}?"
            r"(?:at most|less than or equal to|<=|maximum(?: value)?(?: is| of)?)\D{0,3}(\d+)",
            re.IGNORECASE,
        ),
        # "maximum output tokens is 32768" / "max output tokens: 8192"
        re.compile(r"max(?:imum)? (?:output|completion) tokens(?: is|:)?\s*(\d+)", re.IGNORECASE),
    ]
    return output_field, limits


def learned_output_limit(body: str) -> int | None:
    """The output-token limit a 400 body names, or None when it names none (D10)."""
    output_field, limits = _limit_patterns()
    if not output_field.search(body):
        return None
    for pattern in limits:
        m = pattern.search(body)
        if m:
            value = int(m.group(1))
            return value if value > 0 else None
    return None


def is_context_overflow(status: int, body: str) -> bool:
    """True when a 400/413 body says the prompt does not fit the context window."""
    # One marker list for the whole program: the typed error's own classifier.
    return ProviderAPIError(status, "", body=body).is_context_overflow


def overflow_counts_output(body: str) -> bool:
    """An overflow message that adds the requested output to the prompt proves a
    shared window ("… in the messages, … in the completion"): trust it from then on."""
    low = body.lower()
    return is_context_overflow(400, body) and any(
        w in low for w in ("completion", "max_tokens", "output")
    )
