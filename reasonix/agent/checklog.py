"""Reading the per-project checkpoint log: its records and the turns of one session.

The log (``log.jsonl``, written by :class:`reasonix.agent.checkpoints.CheckpointStore`)
holds every session of the project, one JSON record per line: ``turn``,
``before``, ``after``, and ``fork`` (a session copied from another by a
rewind, which inherits the turns before the fork point).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = ["FORK_DEPTH", "Turn", "parse_record", "parse_records", "records_of", "turns_of"]

FORK_DEPTH = 20  # copies of copies followed back (a cycle of fork records ends here)


@dataclass
class Turn:
    """One user turn as the log knows it (``before``/``after`` are "" without writes)."""

    session: str
    number: int
    records: int  # transcript records before this turn's user message
    title: str
    time: float
    before: str = ""
    after: str = ""
    too_big: list[str] = field(default_factory=list)
    paths: list[str] | None = None  # recorded from these files alone (None: the whole tree)


def parse_record(line: str) -> dict[str, Any] | None:
    """A log line's record, or None for a torn or foreign line."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("type"), str) else None


def parse_records(text: str) -> list[dict[str, Any]]:
    """Every well-formed record of the log ``text`` (a torn or foreign line is skipped)."""
    return [rec for rec in map(parse_record, text.splitlines()) if rec is not None]


def records_of(text: str, session: str) -> list[dict[str, Any]]:
    """The records of the log ``text`` that :func:`turns_of` reads for ``session``:
    those of the session and of every session it was copied from, in log order,
    without parsing the rest.

    A new session's first turn asks for its number; parsing the whole log for it
    took 170 ms before the first request with 10,000 turns logged. A record
    names its session as ``json.dumps`` writes it, so a line without that text
    holds none of its records and is not parsed; a line with it is parsed and
    kept whatever it is (:func:`turns_of` filters by session). Keeping more
    records than needed never changes the turns, so every ancestor is followed
    (a cycle ends with the sessions already seen).
    """
    lines: list[str] | None = None
    found: dict[int, dict[str, Any]] = {}
    todo, seen = [session], set()
    while todo:
        sid = todo.pop()
        if sid in seen:
            continue
        seen.add(sid)
        needle = json.dumps(sid, ensure_ascii=False)
        if needle not in text:
            continue  # one scan of the text: a session without records costs no parse
        if lines is None:
            lines = text.splitlines()
        for i, line in enumerate(lines):
            if needle not in line:
                continue
            rec = found.get(i) or parse_record(line)
            if rec is None:
                continue
            found[i] = rec
            if rec["type"] == "fork" and rec.get("session") == sid:
                todo.append(str(rec.get("from", "")))
    return [found[i] for i in sorted(found)]


def turns_of(recs: list[dict[str, Any]], session: str, depth: int = 0) -> list[Turn]:
    """The turns of ``session`` in ``recs`` (log order), inherited ones first."""
    own: dict[int, Turn] = {}
    inherited: list[Turn] = []
    for rec in recs:
        if rec.get("session") != session:
            continue
        kind, n = rec["type"], rec.get("turn")
        if kind == "fork" and depth < FORK_DEPTH:
            parent = turns_of(recs, str(rec.get("from", "")), depth + 1)
            inherited = [t for t in parent if t.number < int(rec.get("turn", 0))]
        elif kind == "turn" and isinstance(n, int):
            own[n] = Turn(session, n, int(rec.get("records", 0)), str(rec.get("title", "")),
                          float(rec.get("time", 0.0)))  # fmt: skip
        elif kind == "before" and n in own:
            own[n].before = str(rec.get("commit", ""))
            own[n].too_big = list(rec.get("too_big", []))
            paths = rec.get("paths")
            own[n].paths = [str(p) for p in paths] if isinstance(paths, list) else None
        elif kind == "after" and n in own:
            own[n].after = str(rec.get("commit", ""))
    return inherited + [own[k] for k in sorted(own)]
