"""Offline usage report over recorded sessions (``reasonix usage``).

Every model request leaves one ``{"type":"usage", …}`` record in its
session's transcript (:func:`reasonix.agent.telemetry.usage_record`);
sub-agents write theirs into ``<sessions>/<slug>/subagents/``. This module
reads those records (never the network), sums them by day, model, session
or project, and prices each model's sum with the same rule as
``run --json``: the provider's own ``prices`` table first, then the preset.
A model without a price is reported as unpriced, never as 0.

Speed: only the lines that start with the usage or meta prefix are parsed,
so a report costs little more than a bare ``json.loads`` loop over the
usage records themselves (``bench/usage.py`` measures the ratio).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.telemetry import estimate_cost
from reasonix.lazy import dataclass, field
from reasonix.provider.types import Usage

if TYPE_CHECKING:
    from typing import Any

    from reasonix.config.model import Config

__all__ = [
    "GROUPINGS", "PriceLookup", "Report", "Row", "build_report", "price_lookup", "session_files",
]  # fmt: skip

GROUPINGS = ("day", "model", "session", "project")
_USAGE_PREFIX = b'{"type":"usage"'
_META_PREFIX = b'{"type":"meta"'
_DECODER = json.JSONDecoder()
_FIELD_MAX = 4096  # ids, model refs and paths are short; a longer value is not read
_TOKEN_KEYS = ("input", "output", "cache_read", "cache_write", "reasoning", "web_search")
_INDEX = {k: i for i, k in enumerate(_TOKEN_KEYS)}

# (provider, model) -> (price per million tokens or None, where it came from)
PriceLookup = Callable[[str, str], "tuple[dict[str, Any] | None, str]"]


def price_lookup(cfg: Config | None) -> PriceLookup:
    """The price of a model as ``reasonix usage`` and serve's usage page state it: the
    provider's ``prices`` table in the user's config first, then the presets, else
    "unpriced" (never guessed)."""
    from dataclasses import asdict

    from reasonix.config.presets import price_for

    def lookup(provider: str, model: str) -> tuple[dict[str, Any] | None, str]:
        for p in cfg.providers if cfg is not None else ():
            if p.name == provider and p.prices.get(model):
                return dict(p.prices[model]), f"prices of provider {provider!r} (config)"
        preset = price_for(provider, model)
        if preset is not None:
            return asdict(preset), f"preset {provider!r}"
        return None, "unpriced"

    return lookup


@dataclass
class Row:
    """Summed usage of one group (a day, a model, a session or a project)."""

    key: str
    requests: int = 0
    subagent_requests: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_TOKEN_KEYS, 0))
    subagent_tokens: int = 0  # prompt + output tokens spent by sub-agents
    cost: dict[str, float] = field(default_factory=dict)  # currency -> amount
    subagent_cost: dict[str, float] = field(default_factory=dict)
    unpriced_requests: int = 0
    unpriced_models: set[str] = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of one row (token names as in DESIGN §4's usage block)."""
        t = self.tokens
        prompt = t["input"]
        return {
            "key": self.key,
            "requests": self.requests,
            "input_tokens": max(0, prompt - t["cache_read"] - t["cache_write"]),
            "cache_read_input_tokens": t["cache_read"],
            "cache_creation_input_tokens": t["cache_write"],
            "output_tokens": t["output"],
            "reasoning_tokens": t["reasoning"],
            "web_search_requests": t["web_search"],
            "prompt_tokens": prompt,
            "cache_hit_ratio": round(t["cache_read"] / prompt, 4) if prompt else None,
            "cost": {c: round(a, 6) for c, a in sorted(self.cost.items())},
            "unpriced": {
                "requests": self.unpriced_requests,
                "models": sorted(self.unpriced_models),
            },
            "subagent": {
                "requests": self.subagent_requests,
                "tokens": self.subagent_tokens,
                "cost": {c: round(a, 6) for c, a in sorted(self.subagent_cost.items())},
            },
        }


@dataclass
class Report:
    """The whole report: the grouped rows, the total, the top sessions and the price basis."""

    by: str
    rows: list[Row]
    total: Row
    top_sessions: list[Row]
    basis: list[dict[str, Any]]
    sessions: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "by": self.by,
            "sessions": self.sessions,
            "total": self.total.as_dict(),
            "rows": [r.as_dict() for r in self.rows],
            "top_sessions": [r.as_dict() for r in self.top_sessions],
            "price_basis": self.basis,
        }


# per (group, session, provider, model, sub-agent): the six counts of _TOKEN_KEYS, then requests
_Bucket = list


def session_files(sessions_root: Path, all_projects: bool, slug: str) -> Iterator[tuple[str, Path]]:
    """``(project slug, transcript)`` for every parent and sub-agent transcript in scope."""
    if all_projects:
        try:
            slugs = sorted(e.name for e in os.scandir(sessions_root) if e.is_dir())
        except OSError:
            return
    else:
        slugs = [slug]
    for name in slugs:
        for folder in (sessions_root / name, sessions_root / name / "subagents"):
            try:
                entries = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".jsonl"))
            except OSError:
                continue
            for entry in entries:
                yield name, folder / entry


_DAYS: dict[int, str] = {}  # quarter-hour -> local day: every UTC offset is a multiple of 15 min


def _day(stamp: float) -> str:
    quarter = int(stamp // 900)
    day = _DAYS.get(quarter)
    if day is None:
        day = _DAYS[quarter] = time.strftime("%Y-%m-%d", time.localtime(quarter * 900))
    return day


def _meta_field(line: bytes, key: str) -> str:
    """A top-level text field of a meta line without parsing the whole line.

    Meta lines carry the whole system prompt (kilobytes); the report needs
    four short fields. Inside a JSON string every quote is escaped, so
    ``,"key":"`` occurs only as a key of the object itself.
    """
    for lead in (b",", b"{"):
        at = line.find(b'%s"%s":"' % (lead, key.encode()))
        if at >= 0:
            start = at + len(key) + 4  # the opening quote
            window = line[start : start + _FIELD_MAX].decode("utf-8", "replace")
            try:
                value = _DECODER.raw_decode(window)[0]
            except ValueError:  # longer than the window, or damaged
                return ""
            return value if isinstance(value, str) else ""
    return ""


def _scan(path: Path) -> tuple[bytes, list[dict[str, Any]]]:
    """The meta line and the usage records of one transcript (other lines are skipped)."""
    meta = b""
    found: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(_USAGE_PREFIX):
                    try:
                        rec = json.loads(line)
                    except ValueError:  # a torn last line: the request is not counted
                        continue
                    if isinstance(rec, dict):
                        found.append(rec)
                elif not meta and line.startswith(_META_PREFIX):
                    meta = line
    except OSError:
        return b"", []
    return meta, found


def build_report(
    files: Iterable[tuple[str, Path]],
    prices: PriceLookup,
    by: str = "day",
    since: str = "",
    until: str = "",
    top: int = 10,
) -> Report:
    """Sum the usage records of ``files`` grouped ``by`` (days ``since``..``until``, inclusive).

    Costs are computed per (group, model) on the summed tokens with
    :func:`estimate_cost`, the function ``run --json`` uses, so a session's
    total equals the sum of its runs' reported costs.
    """
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {', '.join(GROUPINGS)}")
    buckets: dict[tuple[str, str, str, str, bool], list[int]] = {}
    session_keys: set[str] = set()
    for slug, path in files:
        meta, records = _scan(path)
        if not records:
            continue
        sub = path.parent.name == "subagents" and b',"subagent":{' in meta
        parent = _meta_field(meta, "parent_session") if sub else ""
        session_key = parent or path.stem  # a transcript is named by its session id
        session_keys.add(session_key)
        provider, _, meta_model = _meta_field(meta, "model").partition("/")
        workspace = (_meta_field(meta, "workspace") or slug) if by == "project" else slug
        seen: tuple[Any, Any, Any] = (None, None, None)  # quarter-hour, model, provider in hand
        bucket: list[int] | None = None
        for rec in records:
            stamp, model, vendor = rec.get("time"), rec.get("model"), rec.get("provider")
            quarter = stamp // 900 if isinstance(stamp, (int, float)) else None
            if (quarter, model, vendor) != seen:  # a file's records mostly share all three
                seen = (quarter, model, vendor)
                vendor = vendor if isinstance(vendor, str) and vendor else provider
                bucket = _bucket(buckets, by, since, until, stamp, model, meta_model,
                                 (session_key, vendor, sub, workspace))  # fmt: skip
            if bucket is None:  # outside the dates
                continue
            for name, value in rec.items():
                at = _INDEX.get(name)
                # a hand-edited or damaged count that is not a whole number counts as 0
                if at is not None and type(value) is int and value > 0:
                    bucket[at] += value
            bucket[6] += 1
    return _assemble(buckets, prices, by, top, len(session_keys))


def _bucket(
    buckets: dict[tuple[str, str, str, str, bool], list[int]],
    by: str,
    since: str,
    until: str,
    stamp: Any,
    model: Any,
    meta_model: str,
    where: tuple[str, str, bool, str],
) -> list[int] | None:
    """The counts one record adds to, or None when its day is outside the dates."""
    session_key, provider, sub, workspace = where
    day = _day(stamp) if isinstance(stamp, (int, float)) else "unknown"
    if (since and day < since) or (until and day > until):
        return None
    model = model if isinstance(model, str) and model else meta_model
    group = (
        day if by == "day" else f"{provider}/{model}" if by == "model"
        else session_key if by == "session" else workspace
    )  # fmt: skip
    key = (group, session_key, provider, model, sub)
    found = buckets.get(key)
    if found is None:
        found = buckets[key] = [0] * 7
    return found


def _usage(bucket: list[int]) -> Usage:
    return Usage(bucket[0], bucket[1], bucket[2], bucket[3], bucket[4], bucket[5])


def _add(row: Row, bucket: list[int], sub: bool, model: str, cost: Any) -> None:
    t = row.tokens
    for i, k in enumerate(_TOKEN_KEYS):
        t[k] += bucket[i]
    requests = bucket[6]
    row.requests += requests
    if sub:
        row.subagent_requests += requests
        row.subagent_tokens += bucket[0] + bucket[1]
    if cost is None:
        row.unpriced_requests += requests
        row.unpriced_models.add(model)
        return
    row.cost[cost.currency] = row.cost.get(cost.currency, 0.0) + cost.amount
    if sub:
        row.subagent_cost[cost.currency] = row.subagent_cost.get(cost.currency, 0.0) + cost.amount


def _rates(price: dict[str, Any] | None) -> tuple[float, float, float, float]:
    """Per-million prices of uncached prompt, output, cache-read and cache-write tokens,
    read back through :func:`estimate_cost` itself (used to rank sessions only)."""
    million = 1_000_000
    shapes = (Usage(million), Usage(0, million), Usage(million, 0, million),
              Usage(million, 0, 0, million))  # fmt: skip
    got = [c.amount for c in (estimate_cost(u, price) for u in shapes) if c is not None]
    return (got[0], got[1], got[2], got[3]) if len(got) == 4 else (0.0, 0.0, 0.0, 0.0)


def _assemble(
    buckets: dict[tuple[str, str, str, str, bool], list[int]],
    prices: PriceLookup,
    by: str,
    top: int,
    sessions: int,
) -> Report:
    looked: dict[tuple[str, str], tuple[dict[str, Any] | None, str]] = {}
    rates: dict[tuple[str, str], tuple[float, float, float, float]] = {}
    sums: dict[tuple[str, str, str, bool], list[int]] = {}  # (group, provider, model, sub)
    # session -> its buckets; Rows are built for the top ones only (10,000 sessions)
    per_session: dict[str, list[tuple[str, str, bool, list[int]]]] = {}
    spent: dict[str, float] = {}
    for (group, session_key, provider, model, sub), bucket in buckets.items():
        pm = (provider, model)
        if pm not in looked:
            looked[pm] = prices(provider, model)
            rates[pm] = _rates(looked[pm][0])
        acc = sums.get((group, provider, model, sub))
        if acc is None:
            sums[(group, provider, model, sub)] = list(bucket)
        else:
            for i, v in enumerate(bucket):
                acc[i] += v
        per_session.setdefault(session_key, []).append((provider, model, sub, bucket))
        p_in, p_out, p_read, p_write = rates[pm]
        uncached = max(0, bucket[0] - bucket[2] - bucket[3])
        spent[session_key] = spent.get(session_key, 0.0) + (
            uncached * p_in + bucket[1] * p_out + bucket[2] * p_read + bucket[3] * p_write
        )
    rows: dict[str, Row] = {}
    total = Row("total")
    # one price per (group, model) sum: the same function and rounding as run --json
    for (group, provider, model, sub), acc in sums.items():
        cost = estimate_cost(_usage(acc), looked[(provider, model)][0])
        row = rows.get(group)
        if row is None:
            row = rows[group] = Row(group)
        _add(row, acc, sub, f"{provider}/{model}", cost)
        _add(total, acc, sub, f"{provider}/{model}", cost)
    top_rows = []
    for key in sorted(spent, key=lambda k: (-spent[k], k))[:top]:
        row = Row(key)
        for provider, model, sub, bucket in per_session[key]:
            cost = estimate_cost(_usage(bucket), looked[(provider, model)][0])
            _add(row, bucket, sub, f"{provider}/{model}", cost)
        top_rows.append(row)
    basis = [_basis(p, m, price, source) for (p, m), (price, source) in sorted(looked.items())]
    return Report(by, [rows[k] for k in sorted(rows)], total, top_rows, basis, sessions)


def _basis(provider: str, model: str, price: dict[str, Any] | None, source: str) -> dict[str, Any]:
    """What one model's cost was computed from (DESIGN: every cost states its basis)."""
    if price is None:
        return {"model": f"{provider}/{model}", "source": "unpriced", "price": None}
    p_in = price.get("input")
    read = price.get("cache_read", p_in)
    shown = {k: v for k, v in price.items() if k in ("input", "output", "cache_read",
                                                     "cache_write", "currency")}  # fmt: skip
    return {
        "model": f"{provider}/{model}",
        "source": source,
        "price": shown,
        "per": "million tokens",
        "cache_discount": isinstance(read, (int, float))
        and isinstance(p_in, (int, float))
        and read < p_in,
    }
