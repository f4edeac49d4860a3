"""`reasonix usage --json` over 10,000 sessions against a bare ``json.loads`` loop.

Writes 10,000 synthetic transcripts (a meta line, a title, six messages and
three usage records each; one in ten with a sub-agent transcript) under a
throwaway state directory. Measured, the best of 7 alternating rounds: ``reasonix usage --json
--all-projects`` run in process (argument parsing, config load, scan, pricing,
JSON out) against the floor: opening the same files and ``json.loads`` on every
usage line, nothing else. Target: ≤ 2×. Prints::

    usage: 10000 sessions ours=… ms bare=… ms ratio=…x target<=2x ok
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SESSIONS = 10_000
_PREFIX = b'{"type":"usage"'


def _line(rec: dict[str, object]) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"


def _write(state: Path) -> list[Path]:
    folder = state / "sessions" / "home-ann-src-app-1a2b3c4d"
    (folder / "subagents").mkdir(parents=True)
    files, stamp = [], 1_764_000_000.0
    for n in range(SESSIONS):
        sid = f"20261201-{n:06d}-5e55"
        lines = [
            _line({"type": "meta", "version": 1, "id": sid, "workspace": "/home/ann/src/app",
                   "created": stamp, "system": "You are a coding agent. " * 40,
                   "model": "deepseek/deepseek-chat"}),
            _line({"type": "title", "title": "fix the failing test in the parser module"}),
        ]  # fmt: skip
        for i in range(3):
            lines.append(_line({"type": "message", "message": {"role": "user", "content":
                                "please look at parser.py " * 20}}))  # fmt: skip
            lines.append(_line({"type": "message", "message": {"role": "assistant", "content":
                                "I read the file and changed line 12. " * 30}}))  # fmt: skip
            lines.append(_line({"type": "usage", "time": stamp + n * 60 + i, "model":
                                "deepseek-chat", "input": 9000 + i, "cache_read": 8000,
                                "output": 400}))  # fmt: skip
        path = folder / f"{sid}.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        files.append(path)
        if n % 10 == 0:
            sub = folder / "subagents" / f"{sid}-sub.jsonl"
            sub.write_text(
                _line({"type": "meta", "version": 1, "id": f"{sid}-sub", "workspace": "/w",
                       "system": "s", "model": "deepseek/deepseek-chat",
                       "subagent": {"profile": "explore", "parent_session": sid}})
                + _line({"type": "usage", "time": stamp, "model": "deepseek-chat",
                         "input": 3000, "output": 100}),
                encoding="utf-8",
            )  # fmt: skip
            files.append(sub)
    return files


def _bare(files: list[Path]) -> int:
    n = 0
    for path in files:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(_PREFIX):
                    json.loads(line)
                    n += 1
    return n


def _ours() -> int:
    from reasonix.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["usage", "--json", "--all-projects"])
    return int(json.loads(out.getvalue())["total"]["requests"])


def _best_ms(fns: list[Callable[[], int]]) -> list[tuple[float, int]]:
    """The fastest of 7 rounds of each; the rounds alternate, so both see the same load."""
    times: list[list[float]] = [[] for _ in fns]
    counts = [0] * len(fns)
    for _ in range(7):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            counts[i] = fn()
            times[i].append((time.perf_counter() - start) * 1000)
    return [(min(t), n) for t, n in zip(times, counts, strict=True)]


def main() -> int:
    """Write the sessions, time both, print the ratio; 1 when over the target."""
    tmp = Path(tempfile.mkdtemp(prefix="reasonix-bench-usage-"))
    try:
        os.environ["REASONIX_STATE_HOME"] = str(tmp / "state")
        os.environ["REASONIX_HOME"] = str(tmp / "home")
        files = _write(tmp / "state")
        _bare(files)  # warm the page cache for both
        (bare, want), (ours, got) = _best_ms([lambda: _bare(files), _ours])
        if got != want:
            print(f"usage: counted {got} requests, the records hold {want}")
            return 1
        ratio = ours / bare
        verdict = "ok" if ratio <= 2 else "SLOW"
        print(f"usage: {SESSIONS} sessions ours={ours:.0f} ms bare={bare:.0f} ms "
              f"ratio={ratio:.2f}x target<=2x {verdict}")  # fmt: skip
        return 0 if ratio <= 2 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
