"""Run budgets: cost, tokens and wall time for a whole run or chat (issue 36).

A :class:`RunBudget` is asked before every model request (the agent's
``before_request``, its sub-agents' too) and names the limit that is spent,
counted from the provider's reported usage. :func:`combine` lets a goal's
budget and a run budget apply together: the first spent one wins.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from reasonix.agent.telemetry import estimate_cost
from reasonix.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from reasonix.provider.types import Usage

__all__ = ["RunBudget", "combine", "parse_duration"]

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``10m``, ``1h`` or a bare number of seconds (UsageError)."""
    raw = text.strip().lower()
    unit = _UNITS.get(raw[-1:], 0.0) if raw else 0.0
    number = raw[:-1] if unit else raw
    try:
        seconds = float(number) * (unit or 1.0)
    except ValueError:
        raise UsageError(f"bad duration {text!r}: expected e.g. 90s, 10m or 1h") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"bad duration {text!r}: it must be a finite time more than zero")
    return seconds


def combine(*checks: Callable[..., str] | None) -> Callable[..., str] | None:
    """One ``before_request`` check asking each given one in turn (None when none is given)."""
    present = [c for c in checks if c is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]

    def spent(extra_tokens: int = 0) -> str:
        for check in present:
            name = check(extra_tokens=extra_tokens)
            if name:
                return name
        return ""

    return spent


class RunBudget:
    """The limits of one run or chat session; 0 means no limit on that measure.

    ``usage`` gives the run's usage so far (the parent's requests and every
    finished sub-agent's); ``price`` the model's price (None: unpriced).
    ``started`` is a ``time.monotonic()`` reading (None: now). ``base`` holds the
    amounts first set: a grant adds these again, however many grants came before.
    A plain class, not a dataclass: one per run, mutated by grants (issue 39).
    """

    def __init__(
        self,
        max_cost: float = 0.0,
        max_tokens: int = 0,
        max_seconds: float = 0.0,
        started: float | None = None,
        base: tuple[float, int, float] | None = None,
    ) -> None:
        self.max_cost = max_cost
        self.max_tokens = max_tokens
        self.max_seconds = max_seconds
        self.started = time.monotonic() if started is None else started
        self.base = base

    @property
    def active(self) -> bool:
        """True when any limit is set."""
        return self.max_cost > 0 or self.max_tokens > 0 or self.max_seconds > 0

    def used(
        self, usage: Usage, price: Mapping[str, Any] | None, extra_tokens: int = 0
    ) -> dict[str, float]:
        """The spend so far by measure. A running sub-agent's ``extra_tokens`` are
        priced as output tokens (the dearer side) until its usage is recorded."""
        tokens = usage.input_tokens + usage.output_tokens + extra_tokens
        cost = estimate_cost(usage, price)
        amount = cost.amount if cost is not None else 0.0
        if extra_tokens and price is not None:
            amount += extra_tokens * float(price.get("output") or 0) / 1_000_000
        return {"cost": amount, "tokens": tokens, "time": time.monotonic() - self.started}

    def spent(self, usage: Usage, price: Mapping[str, Any] | None, extra_tokens: int = 0) -> str:
        """The name of the first spent limit ("cost", "tokens", "time"), or ""."""
        used = self.used(usage, price, extra_tokens)
        if self.max_cost > 0 and used["cost"] >= self.max_cost:
            return "cost"
        if self.max_tokens > 0 and used["tokens"] >= self.max_tokens:
            return "tokens"
        if self.max_seconds > 0 and used["time"] >= self.max_seconds:
            return "time"
        return ""

    def remaining(self, usage: Usage, price: Mapping[str, Any] | None) -> str:
        """A short line of what is left, e.g. ``budget $0.42 · 12k tok · 8m left`` ("" if none)."""
        if not self.active:
            return ""
        used = self.used(usage, price)
        parts = []
        if self.max_cost > 0:
            currency = str((price or {}).get("currency") or "USD").upper()
            left = max(0.0, self.max_cost - used["cost"])
            parts.append(f"${left:.2f}" if currency == "USD" else f"{left:.2f} {currency}")
        if self.max_tokens > 0:
            left_tokens = max(0, self.max_tokens - int(used["tokens"]))
            shown = f"{left_tokens / 1000:.1f}k" if left_tokens >= 1000 else str(left_tokens)
            parts.append(f"{shown} tok")
        if self.max_seconds > 0:
            left_s = max(0.0, self.max_seconds - used["time"])
            parts.append(f"{left_s / 60:.0f}m" if left_s >= 120 else f"{left_s:.0f}s")
        return "budget " + " · ".join(parts) + " left"

    def left(
        self, usage: Usage, price: Mapping[str, Any] | None
    ) -> tuple[float | None, float | None, float | None]:
        """Tokens and cost left and the deadline (``time.monotonic``), None where unlimited.

        What sub-agents reserve their budgets from (agent/subagent/allowance.py).
        """
        used = self.used(usage, price)
        return (
            self.max_tokens - used["tokens"] if self.max_tokens > 0 else None,
            self.max_cost - used["cost"] if self.max_cost > 0 else None,
            self.started + self.max_seconds if self.max_seconds > 0 else None,
        )

    def grant(self, usage: Usage, price: Mapping[str, Any] | None) -> None:
        """Grant the same amount again, from what is used now (the chat's "y")."""
        used = self.used(usage, price)
        if self.base is None:
            self.base = (self.max_cost, self.max_tokens, self.max_seconds)
        cost, tokens, seconds = self.base
        if cost > 0:
            self.max_cost = used["cost"] + cost
        if tokens > 0:
            self.max_tokens = int(used["tokens"]) + tokens
        if seconds > 0:
            self.max_seconds = used["time"] + seconds

    def check(
        self, usage: Callable[[], Usage], price: Callable[[], Mapping[str, Any] | None]
    ) -> Callable[..., str]:
        """A ``before_request`` check over the live usage and price."""

        def spent(extra_tokens: int = 0) -> str:
            return self.spent(usage(), price(), extra_tokens)

        return spent
