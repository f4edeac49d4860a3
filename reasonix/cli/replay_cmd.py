"""``reasonix replay SESSION [--json]``: re-run a recorded session, report divergences.

Exit 0 when the new run matches the recording, 1 when it diverges (a call now
denied or allowed, a hook that now blocks, another tool result, compaction at
another point), 2 for a bad session argument. Each divergence says what
differs: the refusal and the rule behind it, or a short diff of the results.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from reasonix.cli.safe_text import printable

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the replay flags."""
    parser.description = "Re-run a recorded session against today's build and config."
    parser.add_argument("session", metavar="SESSION", help="a session id, path or title")
    parser.add_argument("--dir", metavar="DIR", help="the project (default: the current directory)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def execute(args: argparse.Namespace) -> int:
    """Replay and report; 1 when the run diverged."""
    from reasonix.agent.session import find_session
    from reasonix.boot.replay import replay_session
    from reasonix.errors import SessionError, UsageError

    workspace = (Path(args.dir).expanduser() if args.dir else Path.cwd()).resolve()
    try:
        path = find_session(workspace, args.session)
    except SessionError as err:
        raise UsageError(f"replay: {err}") from err
    report = replay_session(workspace, path)
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False))
        return 1 if report.divergences else 0
    for note in report.notes:
        print(printable(f"note: {note}"))
    head = f"replayed {report.turns} turn(s), {report.tool_calls} tool call(s)"
    if not report.divergences:
        print(f"{head}: no divergence")
        return 0
    print(f"{head}: {len(report.divergences)} divergence(s)")
    for d in report.divergences:
        tool = f" {d.tool}" if d.tool else ""
        print(printable(f"  turn {d.turn}{tool}: {d.kind}: {d.detail}", keep_newlines=False))
        for line in d.diff:  # what differs: "-" the recorded result, "+" today's
            print(printable(f"      {line}", keep_newlines=False))
    return 1
