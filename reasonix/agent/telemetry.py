"""Token, cache and cost accounting for one run.

Usage follows the provider layer's normalised meaning: ``input_tokens`` is
the whole prompt, cached part included; ``cache_read_tokens`` and
``cache_write_tokens`` are parts of it. Reports use the Anthropic-style
field names of the headless result object, where ``input_tokens`` is the
*uncached* remainder, so the four numbers add up to the prompt size.

Prices are per million tokens, a mapping with ``input``, ``output`` and
optionally ``cache_read``, ``cache_write`` and ``currency`` (USD or CNY).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from reasonix.provider.types import Usage

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DELEGATION_COUNTERS",
    "USAGE_RECORD",
    "Cost",
    "Telemetry",
    "estimate_cost",
    "usage_fields",
    "usage_record",
]

# Spec §3.17 / SUB-27: per-run delegation counters of `reasonix run --json`.
DELEGATION_COUNTERS = (
    "subagent_runs",
    "subagent_nested_runs",
    "tool_calls",
    "subagent_tool_calls",
    "subagent_mutations",
    "duplicate_work_paths",
    "completion_reports",
    "completions_prose_only",
    "false_completions",
    "criterion_downgrades",
    "write_scope_violations",
)


class Cost(NamedTuple):
    """An estimated price of a run in one currency.

    A named tuple, not a dataclass: an immutable record made for every priced report
    (issue 39).
    """

    amount: float
    currency: str

    def __str__(self) -> str:
        sign = "¥" if self.currency == "CNY" else "$"
        return f"{sign}{self.amount:.4f}"


def usage_fields(u: Usage) -> dict[str, Any]:
    """The result object's ``usage`` block (Anthropic-style names).

    Server-side web searches appear as ``server_tool_use.web_search_requests``
    (Anthropic's name) only when there were any, so the common block stays the
    four token counts.
    """
    uncached = max(0, u.input_tokens - u.cache_read_tokens - u.cache_write_tokens)
    out: dict[str, Any] = {
        "input_tokens": uncached,
        "output_tokens": u.output_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
    }
    if u.web_search_requests:
        out["server_tool_use"] = {"web_search_requests": u.web_search_requests}
    return out


USAGE_RECORD = "usage"  # the transcript record of one model request's usage


def usage_record(u: Usage, model: str, provider: str = "") -> dict[str, Any]:
    """The transcript record of one request's usage (``reasonix usage`` sums these).

    Counts keep the provider layer's meaning (``input`` is the whole prompt);
    zero fields are left out so a transcript grows by a short line per request.
    """
    import time

    rec: dict[str, Any] = {"type": USAGE_RECORD, "time": round(time.time(), 3), "model": model}
    if provider:  # the model may change mid-session (-c --model): price by the one that ran
        rec["provider"] = provider
    for key, value in (
        ("input", u.input_tokens),
        ("output", u.output_tokens),
        ("cache_read", u.cache_read_tokens),
        ("cache_write", u.cache_write_tokens),
        ("reasoning", u.reasoning_tokens),
        ("web_search", u.web_search_requests),
    ):
        if value:
            rec[key] = value
    return rec


def _num(price: Mapping[str, Any], key: str, fallback: float) -> float:
    value = price.get(key)
    return float(value) if isinstance(value, (int, float)) else fallback


def estimate_cost(u: Usage, price: Mapping[str, Any] | None) -> Cost | None:
    """The cost of ``u`` at ``price`` (per million tokens), or None without a price."""
    if not price or not isinstance(price.get("input"), (int, float)):
        return None
    p_in = _num(price, "input", 0.0)
    p_out = _num(price, "output", p_in)
    p_read = _num(price, "cache_read", p_in)
    p_write = _num(price, "cache_write", p_in)
    f = usage_fields(u)
    total = (
        f["input_tokens"] * p_in
        + f["cache_read_input_tokens"] * p_read
        + f["cache_creation_input_tokens"] * p_write
        + f["output_tokens"] * p_out
    ) / 1_000_000
    return Cost(round(total, 6), str(price.get("currency") or "USD").upper())


class Telemetry:
    """Per-request usage plus counters, accumulated over one run.

    ``per_request`` starts empty and ``counters`` at zero for each of
    :data:`DELEGATION_COUNTERS` unless given. A plain class, not a dataclass: an
    accumulator every run builds before its first request (issue 39).
    """

    def __init__(
        self, per_request: list[Usage] | None = None, counters: dict[str, int] | None = None
    ) -> None:
        self.per_request: list[Usage] = [] if per_request is None else per_request
        self.counters: dict[str, int] = (
            dict.fromkeys(DELEGATION_COUNTERS, 0) if counters is None else counters
        )

    def add_usage(self, u: Usage) -> None:
        """Record one model request's usage."""
        self.per_request.append(u)

    def count(self, name: str, n: int = 1) -> None:
        """Bump a counter (unknown names are created)."""
        self.counters[name] = self.counters.get(name, 0) + n

    @property
    def total(self) -> Usage:
        """Sum over every request."""
        out = Usage()
        for u in self.per_request:
            out.add(u)
        return out

    @property
    def cache_hit_ratio(self) -> float | None:
        """Cached share of all prompt tokens, or None before any prompt."""
        t = self.total
        return t.cache_read_tokens / t.input_tokens if t.input_tokens else None

    def summary_line(self, price: Mapping[str, Any] | None) -> str:
        """One human line: tokens, cache hit, cost (for the end of a text-mode run)."""
        t = self.total
        ratio = self.cache_hit_ratio
        cost = estimate_cost(t, price)
        parts = [
            f"{len(self.per_request)} requests",
            f"{t.input_tokens} in / {t.output_tokens} out tokens",
            f"cache hit {ratio:.0%}" if ratio is not None else "cache hit n/a",
            f"cost {cost} ({cost.currency})" if cost else "cost unknown",
        ]
        if t.web_search_requests:  # billed per search by the vendor, on top of tokens
            n = t.web_search_requests
            parts.insert(2, f"{n} web search{'es' if n != 1 else ''}")
        return " · ".join(parts)
