"""A new session's first turn number, read from a long checkpoint log.

The first turn of every session asks the project's checkpoint log for its
number before the first request is sent. The log holds every session of the
project. Measured: ``CheckpointStore.turns`` (which parses only the lines
naming the session and the sessions it was copied from) against the plain
approach of parsing every record and filtering, on a log of 10,000 turns over
500 sessions, for a new session and for one with 20 turns. Median of 9.
Target: ≥ 10× for a new session, never slower for an old one. Prints::

    turnlog: new session ours=… ms full=… ms ratio=…x target>=10x ok
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reasonix.agent.checklog import parse_records, turns_of
from reasonix.agent.checkpoints import CheckpointStore


def _write_log(store: CheckpointStore, sessions: int = 500, turns: int = 20) -> None:
    store.root.mkdir(parents=True, exist_ok=True)
    with open(store.log_path, "w", encoding="utf-8") as fh:
        for s in range(sessions):
            sid = f"20261201-{s:06d}-5e55"
            for t in range(1, turns + 1):
                for rec in (
                    {"type": "turn", "session": sid, "turn": t, "records": 7 * t,
                     "title": "fix the failing test in the parser module", "time": 1.0},
                    {"type": "before", "session": sid, "turn": t, "commit": "a" * 40,
                     "too_big": []},
                    {"type": "after", "session": sid, "turn": t, "commit": "b" * 40},
                ):  # fmt: skip
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _full(store: CheckpointStore, session: str) -> int:
    return len(turns_of(parse_records(store.log_path.read_text(encoding="utf-8")), session))


def _median_ms(fn: Callable[[str], int], session: str) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(9):
        start = time.perf_counter()
        n = fn(session)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), n


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="reasonix-bench-turnlog-"))
    try:
        (scratch / "ws").mkdir()
        store = CheckpointStore(scratch / "ws", root=scratch / "root")
        _write_log(store)
        ok = True
        for label, session, target in (
            ("new session", "20261202-000000-0000", 10.0),
            ("20-turn session", "20261201-000250-5e55", 1.0),
        ):
            ours, n_ours = _median_ms(lambda s: len(store.turns(s)), session)
            full, n_full = _median_ms(lambda s: _full(store, s), session)
            assert n_ours == n_full, (n_ours, n_full)
            ratio = full / ours
            verdict = "ok" if ratio >= target else "UNDER"
            ok = ok and ratio >= target
            print(f"turnlog: {label} ours={ours:.1f} ms full={full:.1f} ms "
                  f"ratio={ratio:.1f}x target>={target:g}x {verdict}")  # fmt: skip
        return 0 if ok else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
