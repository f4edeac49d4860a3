"""``reasonix rewind``: list a session's turns, go back to one, or undo the last rewind.

``reasonix rewind --list`` shows the turns of the latest session (or ``--session
QUERY``) with the files each changed; ``--to TURN`` restores the code and the
conversation as they were before that turn (``--code-only``,
``--conversation-only``); ``--undo`` brings back what the newest rewind undid.
``reasonix -c`` then continues where the rewind left the conversation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from reasonix.agent.checkpoints import CheckpointStore
from reasonix.cli.safe_text import printable
from reasonix.errors import SessionError, UsageError

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the rewind flags."""
    parser.description = "Go back to before a turn: files the agent changed, the conversation."
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--list", action="store_true", help="list the session's turns")
    what.add_argument("--to", type=int, metavar="TURN", help="rewind to before turn TURN")
    what.add_argument("--undo", action="store_true", help="undo the newest rewind")
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--code-only", action="store_true", help="restore files only")
    part.add_argument("--conversation-only", action="store_true", help="cut the conversation only")
    parser.add_argument("--session", metavar="QUERY", help="a session id, path or title")
    parser.add_argument("--dir", metavar="DIR", help="the project (default: the current directory)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _session_path(workspace: Path, query: str | None) -> Path:
    from reasonix.agent.session import find_session, latest_session

    if query:
        return find_session(workspace, query)
    info = latest_session(workspace)
    if info is None:
        raise UsageError("this project has no sessions yet")
    return info.path


def execute(args: argparse.Namespace) -> int:
    """Run the chosen rewind action; return the exit code."""
    from reasonix.agent.rewind import rewind, undo

    workspace = (Path(args.dir).expanduser() if args.dir else Path.cwd()).resolve()
    if not workspace.is_dir():
        raise UsageError(f"--dir {args.dir}: not a directory")
    store = CheckpointStore(workspace)
    if args.undo:
        result = undo(store)
    else:
        path = _session_path(workspace, args.session)
        if args.list:
            return _list(store, path, args.json)
        mode = "code" if args.code_only else "conversation" if args.conversation_only else "both"
        result = rewind(store, path, args.to, mode)
    if args.json:
        print(json.dumps({"restored": result.restored, "removed": result.removed,
                          "warnings": result.warnings, "session": result.session}))  # fmt: skip
    else:
        print(printable(result.summary()))
    return 0


def _list(store: CheckpointStore, path: Path, as_json: bool) -> int:
    """The turns, each with the files it changed; a turn whose checkpoint cannot be read
    is listed as unavailable, and the others still are."""
    from reasonix.agent.rewind import turn_files

    turns = store.turns(path.stem)
    changed: dict[int, list[str]] = {}
    broken: dict[int, str] = {}
    for t in turns:
        try:
            changed[t.number] = turn_files(store, t)
        except SessionError as exc:
            changed[t.number], broken[t.number] = [], str(exc)
    if as_json:
        rows = []
        for t in turns:
            row = {"turn": t.number, "time": t.time, "title": t.title,
                   "files": changed[t.number], "too_big": t.too_big,
                   "available": t.number not in broken}  # fmt: skip
            if t.number in broken:
                row["error"] = broken[t.number]
            rows.append(row)
        print(json.dumps({"session": path.stem, "turns": rows}, ensure_ascii=False))
        return 0
    if not turns:
        print(f"session {path.stem} has no recorded turns")
        return 0
    print(f"session {path.stem}")
    for t in turns:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(t.time))
        files = changed[t.number]
        what = f"{len(files)} file(s) changed" if files else "no file changes"
        if t.number in broken:
            what = "checkpoint unavailable"
        line = f"  {t.number:>3}  {when}  {what:<22}  {t.title}"
        print(printable(line, keep_newlines=False))
    for number, why in broken.items():
        print(printable(f"turn {number}: {why}", keep_newlines=False), file=sys.stderr)
    return 0
