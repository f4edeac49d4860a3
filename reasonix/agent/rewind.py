"""Rewinding a session: files back to a checkpoint, the conversation back to a turn.

Code: only files the agent changed in the turns being undone are touched
(what its snapshots show changed), each written back byte for byte — or
removed when it did not exist then; a file whose bytes already match is not
rewritten, so its mtime stays. Before anything is restored the workspace is
snapshotted again, so every rewind can itself be undone (:func:`undo`).
A file that was changed outside the agent since its last snapshot is named.

Conversation: transcripts are append-only, so the conversation is "cut" by
continuing in a new session that holds the records before the turn; the
original stays on disk and :func:`undo` makes it the latest again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from reasonix.agent.checkpoints import CheckpointStore, Turn
from reasonix.agent.session import copy_session, read_records
from reasonix.errors import SessionError, UsageError
from reasonix.lazy import dataclass, field

__all__ = ["RewindResult", "agent_files", "rewind", "undo", "write_back"]

MODES = ("both", "code", "conversation", "fork")


@dataclass
class RewindResult:
    """What a rewind did."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    session: str = ""  # the session to continue in ("" = unchanged)
    session_path: Path | None = None

    def summary(self) -> str:
        """One paragraph for the user."""
        parts = []
        if self.restored or self.removed:
            parts.append(f"restored {len(self.restored)} file(s), removed {len(self.removed)}")
        elif not self.session:
            parts.append("no file needed restoring")
        if self.session:
            parts.append(f"conversation continues in session {self.session}")
        return "; ".join(parts) + "".join(f"\nwarning: {w}" for w in self.warnings)


def _current(store: CheckpointStore) -> str:
    """A snapshot of now (taken when something needs comparing or saving)."""
    commit, _ = store.snapshot("before rewind")
    return commit


def agent_files(store: CheckpointStore, turns: list[Turn], now: str) -> dict[str, str]:
    """Files the agent changed in ``turns`` -> the snapshot with its last agent-made state."""
    last: dict[str, str] = {}
    for t in turns:
        if not t.before or t.before == "-":
            continue
        after = t.after or now  # a killed turn: compare with now
        for path in store.changed(t.before, after):
            last[path] = after
    return last


def write_back(store: CheckpointStore, workspace: Path, path: str, commit: str,
               result: RewindResult) -> None:  # fmt: skip
    """Put ``path`` under ``workspace`` back to its bytes in ``commit`` (or remove it)."""
    target = workspace / path
    data = store.content(commit, path)
    if data is None:
        if target.is_file() or target.is_symlink():
            target.unlink()
            result.removed.append(path)
        return
    try:
        if target.is_file() and target.read_bytes() == data:
            return  # already as it was: leave it (and its mtime) alone
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.rewind-{os.getpid()}")
    tmp.write_bytes(data)
    mode = store.mode(commit, path)
    os.chmod(tmp, 0o755 if mode == 0o100755 else 0o644)
    os.replace(tmp, target)
    result.restored.append(path)


def _restore(store: CheckpointStore, files: dict[str, str], target: str, now: str,
             result: RewindResult) -> None:  # fmt: skip
    for path, agent_state in sorted(files.items()):
        mine, theirs = store.content(agent_state, path), store.content(now, path)
        if mine != theirs:
            result.warnings.append(f"{path} was changed outside the agent since its snapshot")
        write_back(store, store.workspace, path, target, result)


def rewind(
    store: CheckpointStore,
    session_path: Path,
    to_turn: int,
    mode: str = "both",
) -> RewindResult:
    """Go back to before turn ``to_turn`` (1-based) of the session at ``session_path``."""
    if mode not in MODES:
        raise UsageError(f"unknown rewind mode {mode!r}; choose one of {', '.join(MODES)}")
    session = Path(session_path).stem
    turns = store.turns(session)
    if not 1 <= to_turn <= len(turns):
        raise UsageError(f"no turn {to_turn}: this session has turns 1–{len(turns)}")
    result = RewindResult()
    undone = [t for t in turns if t.number >= to_turn]
    saved, files = "", {}
    if mode in ("both", "code"):
        saved = _current(store)
        files = agent_files(store, undone, saved)
        target = next((t.before for t in undone if t.before and t.before != "-"), "")
        if target:
            _restore(store, files, target, saved, result)
    if mode in ("both", "conversation", "fork"):
        records = read_records(session_path)
        cut = turns[to_turn - 1].records
        workspace = store.workspace
        meta = {"rewound_from": session, "rewound_turn": to_turn}
        copy = copy_session(records[:cut], workspace, meta)
        try:
            result.session, result.session_path = copy.id, copy.path
        finally:
            copy.close()
        store.append({"type": "fork", "session": copy.id, "from": session, "turn": to_turn})
    if mode != "fork":
        store.append({"type": "rewind", "session": session, "to": to_turn, "saved": saved,
                      "files": sorted(files), "new_session": result.session,
                      "time": time.time()})  # fmt: skip
    return result


def undo(store: CheckpointStore) -> RewindResult:
    """Undo the newest rewind of this workspace: files back, the old session the latest again."""
    recs = [r for r in store.records() if r.get("type") == "rewind" and not r.get("undone")]
    done = {r.get("undo_of") for r in store.records() if r.get("type") == "undo"}
    pending = [r for r in recs if r.get("time") not in done]
    if not pending:
        raise UsageError("there is no rewind to undo")
    last = pending[-1]
    result = RewindResult()
    saved = str(last.get("saved") or "")
    if saved:
        now, _ = store.snapshot("before undo")
        files = {str(p): saved for p in last.get("files", [])}
        _restore(store, files, saved, now, result)
        result.warnings = []  # the files differ from "saved" by design: that is the rewind
    original = str(last.get("session", ""))
    if last.get("new_session"):
        from reasonix.config.paths import sessions_dir

        path = sessions_dir(store.workspace) / f"{original}.jsonl"
        if not path.is_file():
            raise SessionError(f"the session {original} is gone; only the files were restored")
        now_t = time.time() + 1  # newer than the rewound copy: `reasonix -c` takes it again
        os.utime(path, (now_t, now_t))
        result.session, result.session_path = original, path
    store.append({"type": "undo", "undo_of": last.get("time"), "session": original})
    return result
