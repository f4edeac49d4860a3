"""Simulated prompt cache: how far each request of a lane extends the one before it.

A provider caches the prompt it rendered — tools, then the system prompt, then
the messages, in that order — and serves the longest prefix a new request
shares with one it has seen. :func:`extensions` groups recorded requests into
lanes (one conversation each: the main agent, the planner, a sub-agent) and,
for every two consecutive requests of a lane, measures the longest common
prefix of their prompts as a share of the earlier one: 1.0 means the earlier
prompt is a prefix of the later one, so a real cache would serve all of it.

Anthropic ``cache_control`` markers move with the tail by design; they are
request metadata, not prompt text, so they are left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Extension", "extensions", "lane_key", "prompt_text", "system_text"]


def _strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def _dump(value: Any) -> str:
    return json.dumps(_strip_cache(value), ensure_ascii=False)


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a request body of any of the three wire formats, as text."""
    for key in ("system", "instructions"):  # anthropic, responses
        value = body.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return "".join(str(b.get("text", "")) for b in value if isinstance(b, dict))
    messages = body.get("messages") or []
    if messages and messages[0].get("role") in ("system", "developer"):
        content = messages[0].get("content")
        return content if isinstance(content, str) else _dump(content)
    return ""


def prompt_text(body: dict[str, Any]) -> str:
    """The cache-relevant prompt of one request body, in the order providers cache it."""
    parts = [_dump(t) for t in body.get("tools") or []]
    for key in ("system", "instructions"):
        if key in body:
            parts.append(_dump(body[key]))
    parts += [_dump(m) for m in body.get("messages") or body.get("input") or []]
    return "".join(p + "\n" for p in parts)


def lane_key(body: dict[str, Any]) -> str:
    """Which conversation a request belongs to: its model and how its system prompt opens.

    Only the opening words: a lane whose system prompt changed further on must
    still be compared with its own earlier requests (and then fail to extend).
    """
    return f"{body.get('model')}|{system_text(body)[:40]}"


def _common(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (a binary search of slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class Extension:
    """Request ``cur`` after request ``prev`` (0-based numbers) of one lane."""

    lane: str
    prev: int
    cur: int
    common: int  # characters of the longest common prefix of the two prompts
    prev_len: int

    @property
    def ratio(self) -> float:
        """The share of the earlier prompt a prefix cache would serve (1.0: all of it)."""
        return self.common / self.prev_len if self.prev_len else 1.0


def extensions(
    bodies: Iterable[dict[str, Any]],
    lane: Callable[[dict[str, Any]], str] = lane_key,
    skip: Callable[[dict[str, Any]], bool] | None = None,
) -> list[Extension]:
    """Every consecutive pair of requests of each lane, in request order.

    ``skip`` leaves requests out (e.g. compaction's summary requests, which
    share a prefix with the lane but are not part of it).
    """
    last: dict[str, tuple[int, str]] = {}
    out = []
    for i, body in enumerate(bodies):
        if skip is not None and skip(body):
            continue
        key, text = lane(body), prompt_text(body)
        if key in last:
            n, before = last[key]
            common = _common(before, text)
            out.append(Extension(key, n, i, common, len(before)))
        last[key] = (i, text)
    return out
