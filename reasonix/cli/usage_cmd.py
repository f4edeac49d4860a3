"""``reasonix usage``: tokens and cost of recorded sessions, offline.

Reads the usage records the transcripts already hold (sub-agents' included)
and never sends a request. Text mode prints a table, a bar chart per day
(plain characters), the sub-agent share, the top sessions by cost and the
price basis of every cost; ``--json`` and ``--csv`` print the same figures.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cli.safe_text import printable

if TYPE_CHECKING:
    from reasonix.agent.usage_report import Report, Row

__all__ = ["configure", "execute"]

_BAR = 40  # width of the longest bar in the day chart


def _date(text: str) -> str:
    import time

    try:
        time.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None
    return text


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the usage flags."""
    from reasonix.agent.usage_report import GROUPINGS

    parser.description = "Tokens and cost of recorded sessions (offline; sends no request)."
    parser.add_argument("--dir", metavar="DIR", help="the project (default: the current directory)")
    parser.add_argument("--all-projects", action="store_true", help="every project's sessions")
    parser.add_argument("--since", type=_date, metavar="DATE", help="from this day on")
    parser.add_argument("--until", type=_date, metavar="DATE", help="up to this day")
    parser.add_argument("--by", choices=GROUPINGS, default="day", help="group rows (default: day)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--csv", action="store_true", help="print the rows as CSV")


def execute(args: argparse.Namespace) -> int:
    """Build the report and print it."""
    from reasonix import config as config_mod
    from reasonix.agent.usage_report import build_report, price_lookup, session_files
    from reasonix.config.paths import project_slug, state_dir
    from reasonix.errors import UsageError

    workspace = (Path(args.dir).expanduser() if args.dir else Path.cwd()).resolve()
    since, until = args.since or "", args.until or ""
    if since and until and since > until:
        raise UsageError("usage: --since is after --until")
    cfg = None
    try:  # prices only: a config problem must not hide the token counts
        cfg = config_mod.load(workspace, migrate=False, check_mcp_vars=False)
    except Exception as err:  # noqa: BLE001 - any config error: report tokens, prices from presets
        sys.stderr.write(printable(f"usage: config not read ({err}); preset prices only\n"))
    files = session_files(state_dir() / "sessions", args.all_projects, project_slug(workspace))
    report = build_report(files, price_lookup(cfg), args.by, since, until)
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False))
    elif args.csv:
        _write_csv(report)
    else:
        for line in render_text(report):
            print(printable(line, keep_newlines=False))
    return 0


_CSV_FIELDS = (
    "key", "requests", "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
    "output_tokens", "reasoning_tokens", "cache_hit_ratio", "cost", "unpriced_requests",
    "subagent_requests", "subagent_tokens",
)  # fmt: skip


def _write_csv(report: Report) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(_CSV_FIELDS)
    for row in [*report.rows, report.total]:
        d = row.as_dict()
        cost = " + ".join(f"{a} {c}" for c, a in d["cost"].items())
        writer.writerow([
            d["key"], d["requests"], d["input_tokens"], d["cache_read_input_tokens"],
            d["cache_creation_input_tokens"], d["output_tokens"], d["reasoning_tokens"],
            "" if d["cache_hit_ratio"] is None else d["cache_hit_ratio"], cost,
            d["unpriced"]["requests"], d["subagent"]["requests"], d["subagent"]["tokens"],
        ])  # fmt: skip


def _money(cost: dict[str, float]) -> str:
    parts = [f"{'¥' if c == 'CNY' else '$'}{a:.4f}" for c, a in sorted(cost.items())]
    return " + ".join(parts)


def _cost_text(row: Row) -> str:
    """The row's cost; unpriced requests are named, never counted as 0."""
    money = _money(row.cost)
    if row.unpriced_requests:
        unpriced = f"unpriced: {row.unpriced_requests} req"
        return f"{money} + {unpriced}" if money else unpriced
    return money or "-"


def _k(n: int) -> str:
    return (
        f"{n / 1_000_000:.1f}M" if n >= 1_000_000 else f"{n / 1000:.1f}k" if n >= 1000 else str(n)
    )


def render_text(report: Report) -> list[str]:
    """The text report, line by line."""
    if not report.total.requests:
        return ["no usage recorded in this scope (older sessions predate usage records)"]
    lines = [f"{'':<2}{report.by:<26}{'req':>6}{'prompt':>9}{'cached':>9}{'c.write':>9}"
             f"{'output':>9}{'reason':>9}{'hit':>6}  cost"]  # fmt: skip
    for row in [*report.rows, report.total]:
        t = row.tokens
        hit = f"{t['cache_read'] / t['input']:.0%}" if t["input"] else "n/a"
        lines.append(
            f"{'':<2}{row.key[-26:]:<26}{row.requests:>6}{_k(t['input']):>9}"
            f"{_k(t['cache_read']):>9}{_k(t['cache_write']):>9}{_k(t['output']):>9}"
            f"{_k(t['reasoning']):>9}{hit:>6}  {_cost_text(row)}"
        )
    if report.by == "day" and len(report.rows) > 0:
        lines += ["", "tokens per day (prompt + output):"]
        sizes = [r.tokens["input"] + r.tokens["output"] for r in report.rows]
        top = max(sizes) or 1
        for row, size in zip(report.rows, sizes, strict=True):
            bar = "#" * max(1 if size else 0, round(size / top * _BAR))
            lines.append(f"  {row.key}  {bar} {_k(size)}")
    total = report.total
    share = total.subagent_tokens / max(1, total.tokens["input"] + total.tokens["output"])
    lines += ["", f"sub-agents: {total.subagent_requests} of {total.requests} requests, "
              f"{share:.0%} of tokens, cost {_money(total.subagent_cost) or '-'}"]  # fmt: skip
    if report.top_sessions:
        lines += ["", "top sessions by cost:"]
        lines += [f"  {r.key}  {r.requests} req  {_cost_text(r)}" for r in report.top_sessions]
    lines += ["", "price basis (per million tokens; cached prompt tokens at the cache price):"]
    for b in report.basis:
        if b["price"] is None:
            lines.append(f"  {b['model']}: unpriced (no price in config or presets; not in cost)")
            continue
        p = b["price"]
        discount = "cache discount applied" if b["cache_discount"] else "no cache discount"
        shown = ", ".join(f"{k} {v}" for k, v in p.items())
        lines.append(f"  {b['model']}: {b['source']}: {shown}; {discount}")
    return lines
