"""Usage records as runs leave them, on chosen days (the `reasonix usage` and serve tests)."""

from __future__ import annotations

import time
from pathlib import Path

from reasonix.agent.session import Session
from reasonix.agent.telemetry import usage_record
from reasonix.config.paths import sessions_dir
from reasonix.provider.types import Usage

DAY1, DAY2 = "2026-03-01", "2026-03-02"


def stamp(day: str) -> float:
    """Noon of ``day`` (YYYY-MM-DD), local time, as a record's ``time``."""
    return time.mktime(time.strptime(f"{day} 12:00", "%Y-%m-%d %H:%M"))


def usage_session(ws: Path, ref: str, uses: list[tuple[str, Usage]], **meta: object) -> str:
    """A session of ``ws`` on model ``ref`` holding one usage record per (day, usage);
    ``subagent=...`` in ``meta`` puts it where sub-agent transcripts live. Its id."""
    root = sessions_dir(ws) / "subagents" if "subagent" in meta else None
    s = Session.create(ws, {"system": "s", "model": ref, **meta}, root=root)
    for day, u in uses:
        s.append({**usage_record(u, ref.partition("/")[2]), "time": stamp(day)})
    s.close()
    return s.id
