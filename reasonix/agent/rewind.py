"""Rewinding a session: files back to a checkpoint, the conversation back to a turn.

Code: only files the agent changed in the turns being undone are touched
(what its snapshots show changed), each written back byte for byte, a symlink
as a symlink — or removed when it did not exist then; a file whose bytes and
mode already match is not rewritten, so its mtime stays. A path that changed
type (file, directory, symlink) is put back as what it was; nothing is written
or removed through a symlink, and a path that cannot be put back is named and
the rest still are (:func:`put_back`). Before anything is restored the
workspace is snapshotted again, so every rewind can itself be undone
(:func:`undo`). A file that was changed outside the agent since its last
snapshot is named.

Conversation: transcripts are append-only, so the conversation is "cut" by
continuing in a new session that holds the records before the turn; the
original stays on disk and :func:`undo` makes it the latest again.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from reasonix.agent.checkpoints import CheckpointStore, Turn
from reasonix.agent.session import copy_session, read_records
from reasonix.errors import SessionError, UsageError
from reasonix.lazy import dataclass, field

__all__ = [
    "RewindResult", "agent_changes", "agent_files", "put_back", "rewind", "turn_files", "undo",
    "write_back",
]  # fmt: skip

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


def turn_files(store: CheckpointStore, turn: Turn) -> list[str]:
    """The files ``turn`` changed (none when it wrote nothing or was cut short before its
    end was recorded); SessionError when its checkpoint cannot be read."""
    if turn.before in ("", "-") or not turn.after:
        return []
    return store.changed(turn.before, turn.after)


def agent_files(store: CheckpointStore, turns: list[Turn], now: str) -> dict[str, str]:
    """Files the agent changed in ``turns`` -> the snapshot with its last agent-made state."""
    return agent_changes(store, turns, now)[0]


def agent_changes(store: CheckpointStore, turns: list[Turn], now: str
                  ) -> tuple[dict[str, str], dict[str, str]]:  # fmt: skip
    """Files the agent changed in ``turns`` -> (the snapshot with its last agent-made
    state, the snapshot from before the first of ``turns`` that changed it).

    A turn recorded from its files alone holds the rest of the tree as the snapshot
    it started from had it; each file's own "before" is exact (read before the turn
    first wrote it), so a file goes back to that."""
    last: dict[str, str] = {}
    first: dict[str, str] = {}
    for t in turns:
        if not t.before or t.before == "-":
            continue
        after = t.after or now  # a killed turn: compare with now
        paths = store.changed(t.before, after)
        if not t.after and t.paths is not None:  # its files only: the rest may be stale
            paths = [p for p in paths if p in set(t.paths)]
        for path in paths:
            last[path] = after
            first.setdefault(path, t.before)
    return last, first


LINK, EXECUTABLE = 0o120000, 0o100755  # git modes of a symlink, of an executable file


def write_back(store: CheckpointStore, workspace: Path, path: str, commit: str,
               result: RewindResult) -> None:  # fmt: skip
    """Put ``path`` under ``workspace`` back as it was in ``commit`` (see :func:`put_back`)."""
    put_back(store, workspace, [path], commit, result)


def put_back(store: CheckpointStore, workspace: Path, paths: Iterable[str],
             commit: str | Mapping[str, str], result: RewindResult) -> None:  # fmt: skip
    """Put ``paths`` under ``workspace`` back as they were in ``commit`` (or in the snapshot
    ``commit`` maps each to): bytes and mode, a
    symlink as a symlink (its target, never the target's content), removed where no file
    was. A path whose bytes and mode already match is not rewritten (its mtime stays).

    Removals go first, deepest first, so a directory that now stands where a file or a
    link was is empty by the time that is written back. A path that cannot be put back is
    a warning and the others still are: a rewind that stopped halfway would leave no
    record for undo. Nothing is written or removed through a symlink.
    """
    entries: dict[str, tuple[int, bytes] | None] = {}
    for path in paths:
        try:
            entries[path] = store.entry(commit if isinstance(commit, str) else commit[path], path)
        except SessionError as exc:  # a damaged store: never taken for "it did not exist"
            result.warnings.append(f"{path}: not restored: {exc}")
    gone = sorted((p for p, e in entries.items() if e is None), key=lambda p: (-p.count("/"), p))
    for path in [*gone, *sorted(p for p, e in entries.items() if e is not None)]:
        try:
            _put(workspace, path, entries[path], result)
        except OSError as exc:
            result.warnings.append(f"{path}: not restored: {exc.strerror or exc}")


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _put(workspace: Path, path: str, entry: tuple[int, bytes] | None,
         result: RewindResult) -> None:  # fmt: skip
    target = workspace / path
    blocked = _parents(workspace, path, create=entry is not None)
    if blocked:  # a file or a symlink where the snapshot had a directory: not followed
        if entry is not None:
            result.warnings.append(f"{path}: not restored: {blocked} is no directory now")
        return
    st = _lstat(target)
    if entry is None:
        if st is not None and not stat.S_ISDIR(st.st_mode):  # a directory: its files are paths
            target.unlink()
            result.removed.append(path)
        return
    if st is not None and stat.S_ISDIR(st.st_mode):
        if not _clear(target):  # never throw away what no snapshot holds (ignored files)
            result.warnings.append(f"{path}: not restored: a directory with files that no "
                                   "checkpoint holds is in its place")  # fmt: skip
            return
        st = None
    mode, data = entry
    if mode == LINK:
        link = os.fsdecode(data)
        if st is not None and stat.S_ISLNK(st.st_mode) and os.readlink(target) == link:
            return
        _replace(target, lambda tmp: os.symlink(link, tmp))
    else:
        executable = mode == EXECUTABLE
        if (
            st is not None
            and stat.S_ISREG(st.st_mode)
            and bool(st.st_mode & stat.S_IXUSR) == executable
            and _holds(target, data)
        ):
            return  # already as it was: leave it (and its mtime) alone
        _replace(target, lambda tmp: _write(tmp, data, 0o755 if executable else 0o644))
    result.restored.append(path)


def _parents(workspace: Path, path: str, create: bool) -> str:
    """The directories above ``path``, made where missing with ``create``; returns the
    first that is something else (a file, a symlink), else ""."""
    here = workspace
    for part in path.split("/")[:-1]:
        here = here / part
        st = _lstat(here)
        if st is None:
            if not create:
                return ""  # nothing below it to remove
            here.mkdir()
        elif not stat.S_ISDIR(st.st_mode):
            return str(here.relative_to(workspace))
    return ""


def _clear(folder: Path) -> bool:
    """Remove ``folder`` when it holds nothing but directories; False when it holds more."""
    for _here, dirs, files in os.walk(folder):
        if files or any(os.path.islink(os.path.join(_here, d)) for d in dirs):
            return False
    for here, _dirs, _files in os.walk(folder, topdown=False):
        os.rmdir(here)
    return True


def _holds(target: Path, data: bytes) -> bool:
    try:
        return target.read_bytes() == data
    except OSError:
        return False


def _write(tmp: Path, data: bytes, mode: int) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never someone's file
    with open(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, mode)  # the snapshot's mode, whatever the umask


def _replace(target: Path, make: Callable[[Path], None]) -> None:
    """Make the new ``target`` beside it under a temporary name (``make(tmp)`` creates it,
    failing with FileExistsError when the name is taken), then rename it into place: the
    path is never half-written, and the temporary name never outlives this call."""
    name = target.name if len(os.fsencode(target.name)) <= 200 else target.name[:50]
    for n in range(100):
        tmp = target.with_name(f".{name}.rewind-{os.getpid()}" + (f"-{n}" if n else ""))
        try:
            make(tmp)
        except FileExistsError:
            continue  # left by a killed process, or someone's own file: not ours to touch
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # made, then writing it failed
            raise
        try:
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return
    raise FileExistsError(f"no free temporary name beside {target.name}")


def _restore(store: CheckpointStore, files: dict[str, str], target: str | Mapping[str, str],
             now: str,
             result: RewindResult, compare: bool = True) -> None:  # fmt: skip
    if compare:
        for path, agent_state in sorted(files.items()):
            with contextlib.suppress(SessionError):  # unreadable: put_back names it
                if store.content(agent_state, path) != store.content(now, path):
                    result.warnings.append(
                        f"{path} was changed outside the agent since its snapshot"
                    )
    put_back(store, store.workspace, sorted(files), target, result)


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
    saved, files = "", dict[str, str]()
    if mode in ("both", "code"):
        saved = _current(store)
        files, targets = agent_changes(store, undone, saved)
        _restore(store, files, targets, saved, result)
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
        # no "changed outside" warnings: the files differ from "saved" by design (the rewind)
        _restore(store, files, saved, now, result, compare=False)
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
