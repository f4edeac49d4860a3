"""Cache-break forecasts: what an action costs in lost prompt cache, before it is taken.

Switching the model or the effort, or starting over with ``/clear``, means the
next request finds none of the provider's cached prefix: every token that was
read from cache is billed at the full input price again. :func:`forecast`
names how many tokens that is (the last request's prompt, or the context's
estimate before any request) and the extra cost at the model's prices
(input − cached input, per million); "unknown" when the model has no price.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.lazy import dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CacheBreak", "cached_prompt_tokens", "forecast"]

REASONS = {
    "model": "switching the model",
    "effort": "changing the effort",
    "clear": "starting over",
    "instructions": "reloading the changed instructions",
    "mcp": "changing the MCP servers",
}


@dataclass(frozen=True)
class CacheBreak:
    """One forecast: ``tokens`` lose their cache; ``cost`` is None when unpriced."""

    reason: str
    tokens: int
    cost: float | None
    currency: str = "USD"

    def text(self) -> str:
        """One sentence for a confirmation or a notice."""
        what = REASONS.get(self.reason, self.reason)
        money = "an unknown amount (no price for this model)"
        if self.cost is not None:
            sign = "$" if self.currency == "USD" else f"{self.currency} "
            money = f"about {sign}{self.cost:.4f} more"
        return (
            f"{what} drops the provider's cache for about {self.tokens:,} prompt tokens; "
            f"the next request pays {money} to rebuild it"
        )

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``cache_breaks`` in ``run --json``)."""
        return {"reason": self.reason, "tokens": self.tokens, "cost": self.cost,
                "currency": self.currency}  # fmt: skip


def cached_prompt_tokens(per_request: list[Any], estimate: int = 0) -> int:
    """The prompt the next request would have read from cache: the last request's."""
    if per_request:
        return int(getattr(per_request[-1], "input_tokens", 0) or 0)
    return int(estimate)


def forecast(reason: str, tokens: int, price: dict[str, Any] | None) -> CacheBreak:
    """The forecast for ``tokens`` at ``price`` (per million: input, cache_read)."""
    if not price or price.get("input") is None:
        return CacheBreak(reason, tokens, None)
    extra = float(price["input"]) - float(price.get("cache_read") or 0.0)
    currency = str(price.get("currency") or "USD")
    return CacheBreak(reason, tokens, max(0.0, extra) * tokens / 1_000_000, currency)
