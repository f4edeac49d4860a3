"""When a rate limit resets, from the vendors' headers (a 429 without ``Retry-After``).

Imported only when a 429 arrives: :mod:`reasonix.provider.http` uses the result
as the wait before its retry (capped like ``Retry-After``).
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["rate_limit_reset"]

# OpenAI's reset headers are durations ("1s", "6m0s", "20ms"); Anthropic's are RFC 3339
# times. Per limit: (remaining header, reset header).
_RESETS = (
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"),
    ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"),
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"),
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"),
)
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _reset_seconds(value: str, now: float) -> float | None:
    value = value.strip()
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value)
    if parts and "".join(n + u for n, u in parts) == value:
        return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def rate_limit_reset(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds until a 429's exhausted limit resets, from the vendors' reset headers.

    The limit whose ``remaining`` is 0 decides; when none says so, the soonest reset.
    None when no reset header is readable.
    """
    current = time.time() if now is None else now
    exhausted: list[float] = []
    every: list[float] = []
    for remaining, reset in _RESETS:
        raw = headers.get(reset)
        seconds = _reset_seconds(str(raw), current) if raw else None
        if seconds is None:
            continue
        every.append(seconds)
        if str(headers.get(remaining, "")).strip() == "0":
            exhausted.append(seconds)
    if exhausted:
        return max(exhausted)
    return min(every) if every else None
