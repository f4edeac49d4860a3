"""Checkpoints of what the agent changes, kept in a shadow git repository.

Before the first file-changing tool of a user turn (an edit tool or ``bash``)
the workspace is snapshotted into a git repository under the state dir
(``<state>/checkpoints/<project>/git``, never the project's own ``.git``);
when the turn ends it is snapshotted again. ``.gitignore`` is honoured, files
over :data:`FILE_LIMIT` are left out and named, and git runs with no user or
system config and with ``info/attributes`` unsetting every content-changing
attribute, so no hook, filter, ``.gitattributes`` or line-ending rule touches
the content: a snapshot holds the bytes as they were.
A per-project log (``log.jsonl``, append-only) records, per session and turn,
where the turn's messages start in the transcript and its snapshots.

A turn that only talks costs nothing. Git works off the critical path: from
a turn's first tool call its "before" tree is prepared on a background
thread (no tool of the turn has written yet, so it is the state the turn
started from) and is recorded only when a write comes; after each round of
tools of a turn that wrote, the "after" tree is prepared the same way while
the model is asked what next, and used when that answer ends the turn; the
turn's end is recorded on a thread too, which reading the log and the
process's exit wait for. A snapshot runs as few git processes as it can:
in a small workspace one ``ls-files`` (what is there), the blobs and trees
written by us (:mod:`reasonix.agent.snaptree`), and no git process at all
where no ignore rule exists (:mod:`reasonix.agent.snaplist` lists); in a
large one ``ls-files``
(what changed), ``add`` + ``write-tree`` only when something did. The
repository skeleton, the commit object and its ref are always written
directly (the same bytes ``init`` and ``commit-tree`` write).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.checklog import Turn, parse_records, records_of, turns_of
from reasonix.config.paths import project_slug, state_dir
from reasonix.config.safe_read import TRANSCRIPT_LIMIT, read_text
from reasonix.errors import SessionError
from reasonix.slices import short_slices
from reasonix.which import which

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.snapedit import TrackedTurn
    from reasonix.agent.snaptree import Entries, StatCache

__all__ = ["FILE_LIMIT", "CheckpointStore", "StaleTree", "Turn", "TurnRecorder"]

FILE_LIMIT = 10 * 1024 * 1024  # a file larger than this is not kept (named in the log)
_GIT_TIMEOUT = 120.0
_IDENT = "reasonix <checkpoints@reasonix.invalid>"  # author and committer of every snapshot


class CheckpointStore:
    """The shadow repository and the log of one workspace."""

    def __init__(self, workspace: Path, root: Path | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        self.root = root or state_dir() / "checkpoints" / project_slug(self.workspace)
        self.git_dir = self.root / "git"
        self.log_path = self.root / "log.jsonl"
        self._lock = threading.Lock()
        # The tree our last `add` + `write-tree` left in the index, keyed by the index
        # file's identity: while neither changes, an unchanged workspace needs no new tree.
        self._tree: tuple[tuple[object, ...], str] | None = None
        self._plain: bool | None = None  # a SHA-1 repository with loose refs (see _commit)
        self._finishing: list[threading.Thread] = []  # turn ends still being recorded
        self._attributed = False  # info/attributes checked (see _ensure)
        self._git: str | None = None  # the git program, once looked up
        self.native = True  # small workspaces: trees written by us (reasonix.agent.snaptree)
        self._stats: StatCache = {}
        self._rules: list[str] | None = None  # see _own_rules
        self._rules_known = False
        self._entries: Entries = {}  # the last tree we wrote, by file

    def finish_later(self, target: Callable[[], None], name: str) -> None:
        """Run ``target`` on a thread that :meth:`settle` (so every reader of the log)
        and the process's exit wait for: a turn's end, recorded off the answer's path."""
        done = threading.Thread(target=target, name=name)  # not a daemon: exit waits
        self._finishing.append(done)
        done.start()

    def settle(self) -> None:
        """Wait for every turn end still being recorded (see :meth:`TurnRecorder.end`)."""
        while True:
            try:
                pending = self._finishing.pop()
            except IndexError:
                return
            pending.join()

    @staticmethod
    def available() -> bool:
        """True when a ``git`` program exists (checkpoints need it)."""
        return which("git") is not None

    # -- git ------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.workspace),
            GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
            GIT_AUTHOR_NAME="reasonix", GIT_AUTHOR_EMAIL="checkpoints@reasonix.invalid",
            GIT_COMMITTER_NAME="reasonix", GIT_COMMITTER_EMAIL="checkpoints@reasonix.invalid",
        )  # fmt: skip
        return env

    def git(self, *args: str, data: bytes | None = None, work_tree: bool = True,
            codes: tuple[int, ...] = (0,)) -> bytes:  # fmt: skip
        """Run git on the shadow repository; a failure (an exit code not in ``codes``)
        is a SessionError."""
        env = self._env()
        if not work_tree:
            env.pop("GIT_WORK_TREE")
        if self._git is None:  # found once: each call would search PATH again
            self._git = which("git", path=env.get("PATH")) or "git"
        import subprocess  # (with selectors and locale) not before a run's first request

        try:
            done = subprocess.run(
                [self._git, "-c", "core.autocrlf=false", "-c", "core.quotepath=false", *args],
                cwd=self.workspace, env=env, input=data, capture_output=True,
                timeout=_GIT_TIMEOUT, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SessionError(f"checkpoint: git {args[0]} failed: {exc}") from None
        if done.returncode not in codes:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SessionError(f"checkpoint: git {args[0]}: {why[-1] if why else done.returncode}")
        return done.stdout

    def _ensure(self) -> None:
        if (self.git_dir / "HEAD").is_file():
            if not self._attributed:  # a repository made before info/attributes was
                attributes = self.git_dir / "info" / "attributes"
                with contextlib.suppress(OSError):
                    if not attributes.is_file():
                        attributes.parent.mkdir(parents=True, exist_ok=True)
                        from reasonix.agent.snaptree import ATTRIBUTES

                        attributes.write_text(ATTRIBUTES)
                self._attributed = True
            return
        from reasonix.agent.snaptree import init_repository

        self.root.mkdir(parents=True, exist_ok=True)
        try:
            init_repository(self.git_dir, "\n".join(self._excludes()) + "\n")
        except OSError as exc:
            raise SessionError(f"checkpoint: could not create the repository: {exc}") from None

    def _excludes(self) -> list[str]:
        """``info/exclude``: the agent's own state is never snapshotted, even when it
        lives in the project."""
        excludes = [".git/", ".reasonix-checkpoints/"]
        with contextlib.suppress(ValueError):
            excludes.append("/" + str(state_dir().resolve().relative_to(self.workspace)) + "/")
        return excludes

    def _own_rules(self) -> list[str] | None:
        """The root-anchored excludes when ``info/exclude`` is the one :meth:`_ensure`
        writes and the config names no excludes file (so no ignore rule of git's is
        unknown to :func:`~reasonix.agent.snaplist.list_plain`); else None."""
        if not self._rules_known:
            excludes = self._excludes()
            try:
                written = (self.git_dir / "info" / "exclude").read_text(errors="replace")
                config = (self.git_dir / "config").read_text(errors="replace").lower()
            except OSError:
                written, config = "", "excludesfile"
            own = written == "\n".join(excludes) + "\n" and "excludesfile" not in config
            self._rules = [e for e in excludes if e.startswith("/")] if own else None
            self._rules_known = True
        return self._rules

    def snapshot(self, message: str) -> tuple[str, list[str]]:
        """Commit the workspace as it is now; returns (commit id, files left out as too big)."""
        tree, too_big = self.tree()
        return self.commit(tree, message), too_big

    def commit(self, tree: str, message: str) -> str:
        """Record ``tree`` (from :meth:`tree`) as the latest snapshot; returns the commit id."""
        with self._lock:
            return self._commit(tree, message)

    def tree(self, wanted: Callable[[], bool] | None = None) -> tuple[str, list[str]]:
        """The workspace as it is now, stored as a tree; returns (tree id, files too big).

        ``wanted`` is asked once git has listed the files: False stops there with
        :class:`StaleTree` (a tree prepared ahead that a write has made useless).
        """
        with self._lock:
            self._ensure()
            indexed = (self.git_dir / "index").exists()
            listed = None
            native = not indexed and self.native and self._is_plain()
            rules = self._own_rules() if native else None
            if rules is not None:  # no ignore rule anywhere: the files, without a git process
                from reasonix.agent.snaplist import list_plain
                from reasonix.agent.snaptree import NATIVE_FILES

                listed = list_plain(self.workspace, rules, NATIVE_FILES)
            if listed is None:
                # Without an index every file is "other" and none can be "modified".
                what = ("--others", "--modified") if indexed else ("--others",)
                listed = self.git("ls-files", "-z", *what, "--exclude-standard")
            if wanted is not None and not wanted():
                raise StaleTree
            if native:
                # git lists (its ignore rules decide), we write the objects; once git has
                # built a tree here, its index is the record and git keeps doing so.
                from reasonix.agent.snaptree import Unwanted, native_tree

                try:
                    made = native_tree(self.workspace, self.git_dir, listed, FILE_LIMIT,
                                       self._stats, self._kept, wanted)  # fmt: skip
                except Unwanted:
                    raise StaleTree from None
                if made is not None:
                    tree, too_big, self._entries = made
                    return tree, too_big
            names = sorted({n for n in listed.decode("utf-8", "replace").split("\0") if n})
            too_big = []
            for name in names:
                with contextlib.suppress(OSError):
                    if (self.workspace / name).stat().st_size > FILE_LIMIT:
                        too_big.append(name)
            cached = self._tree
            if len(too_big) == len(names) and cached is not None and cached[0] == self._index_id():
                # Nothing `add` would take differs from the index our last write-tree read:
                # the same tree, without two more git processes.
                tree = cached[1]
            else:
                self._tree = None
                self.git("add", "-A", "--", ".", *(f":(exclude,literal){n}" for n in too_big))
                tree = self.git("write-tree").decode().strip()
                index = self._index_id()
                self._tree = (index, tree) if index else None
            return tree, too_big

    def latest_tree(self) -> str | None:
        """The tree of the latest snapshot, None when there is none (or refs git keeps)."""
        with self._lock:
            self._ensure()
        if not self._is_plain():
            return None
        try:
            commit = (self.git_dir / "refs" / "reasonix" / "latest").read_text().strip()
        except OSError:
            return None
        from reasonix.agent.snapedit import tree_of

        return tree_of(self.git_dir, commit, self._cat) if commit else None

    def read_tree(self, oid: str) -> bytes:
        """A tree object's body (see :mod:`reasonix.agent.snapedit`)."""
        from reasonix.agent.snapedit import read_object

        return read_object(self.git_dir, "tree", oid, self._cat)

    def _cat(self, kind: str, oid: str) -> bytes:
        return self.git("cat-file", kind, oid, work_tree=False)

    def _index_id(self) -> tuple[object, ...]:
        """The index file's identity: git replaces the file whenever it writes it, and its
        last 20 bytes are the SHA-1 of everything before (coarse timestamps cannot fool it)."""
        try:
            with open(self.git_dir / "index", "rb") as fh:
                st = os.fstat(fh.fileno())
                if st.st_size < 32:
                    return ()
                fh.seek(-20, os.SEEK_END)
                checksum = fh.read(20)
        except OSError:
            return ()
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, checksum)

    def _kept(self, names: list[bytes]) -> Entries:
        """The entries ``names`` had in the last tree (this process's, else the latest
        snapshot's): what a file grown too big keeps."""
        found = {n: self._entries[n] for n in names if n in self._entries}
        missing = {n for n in names if n not in found}
        if missing and (self.git_dir / "refs" / "reasonix" / "latest").is_file():
            specs = [f":(literal){os.fsdecode(n)}" for n in sorted(missing)]  # no globbing
            out = self.git("ls-tree", "-z", "refs/reasonix/latest", "--", *specs)
            for row in out.split(b"\0"):
                meta, _, name = row.partition(b"\t")
                parts = meta.split()
                if name in missing and len(parts) == 3 and parts[1] == b"blob":
                    found[name] = (parts[0], bytes.fromhex(parts[2].decode()))
        return found

    def _is_plain(self) -> bool:
        """A SHA-1 repository with loose refs, as ``init`` made it (objects we may write)."""
        if self._plain is None:
            try:
                config = (self.git_dir / "config").read_text(errors="replace")
            except OSError:
                config = "[extensions]"  # unknown: let git decide
            self._plain = "[extensions]" not in config.replace(" ", "").lower()
        return self._plain

    def _commit(self, tree: str, message: str) -> str:
        """A commit of ``tree`` made the latest; written directly where the repository is
        the SHA-1, loose-ref kind ``init`` made (two git processes saved), else by git."""
        if not self._is_plain():
            commit = self.git("commit-tree", tree, "-m", message).decode().strip()
            self.git("update-ref", "refs/reasonix/latest", commit)
            return commit
        from reasonix.agent.snaptree import set_ref, stamp, write_object

        who = f"{_IDENT} {stamp(time.time())}"
        body = f"tree {tree}\nauthor {who}\ncommitter {who}\n\n{message}\n".encode()
        try:
            commit = write_object(self.git_dir, b"commit", body)
            set_ref(self.git_dir, "refs/reasonix/latest", commit)
        except OSError as exc:
            raise SessionError(f"checkpoint: could not record the snapshot: {exc}") from None
        return commit

    def changed(self, a: str, b: str) -> list[str]:
        """Paths that differ between two snapshots."""
        out = self.git("diff", "--name-only", "-z", "--no-renames", a, b)
        return [n for n in out.decode("utf-8", "replace").split("\0") if n]

    def content(self, commit: str, path: str) -> bytes | None:
        """A file's bytes in a snapshot, or None when it was absent there."""
        try:
            return self.git("cat-file", "blob", f"{commit}:{path}")
        except SessionError:
            return None

    def mode(self, commit: str, path: str) -> int | None:
        """A file's git mode in a snapshot (0o100755 for executables)."""
        out = self.git("ls-tree", "-z", commit, "--", path).decode("utf-8", "replace")
        return int(out.split(" ", 1)[0], 8) if out else None

    def entry(self, commit: str, path: str) -> tuple[int, bytes] | None:
        """``path`` in a snapshot as (git mode, bytes): a symlink (0o120000) holds its
        target; None when no file was there (absent, or a directory). A snapshot that
        cannot be read raises SessionError, unlike :meth:`content`: a restore must not
        take a damaged store for "the file did not exist" and remove it."""
        out = self.git("ls-tree", "-z", commit, "--", path)
        parts = out.partition(b"\t")[0].split()
        if len(parts) != 3 or parts[1] != b"blob":
            return None
        return int(parts[0], 8), self.git("cat-file", "blob", parts[2].decode())

    # -- the log ----------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> None:
        """Add one record to the log (one line, flushed)."""
        with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _log_text(self) -> str:
        self.settle()  # a turn end of this process is in the log before anyone reads it
        try:
            return read_text(self.log_path, TRANSCRIPT_LIMIT, errors="replace", error=SessionError)
        except FileNotFoundError:
            return ""

    def records(self) -> list[dict[str, Any]]:
        """Every well-formed log record (a torn or foreign line is skipped)."""
        return parse_records(self._log_text())

    def turns(self, session: str) -> list[Turn]:
        """The turns of ``session`` in order, including those inherited from the session a
        rewind copied it from (its ``fork`` record)."""
        return turns_of(records_of(self._log_text(), session), session)


class StaleTree(SessionError):
    """A tree prepared ahead was given up before it was written (see CheckpointStore.tree)."""


class _Ahead:
    """A tree prepared on a background thread (:meth:`CheckpointStore.tree`)."""

    def __init__(self, store: CheckpointStore) -> None:
        self.result: tuple[str, list[str]] | None = None
        self.error: Exception | None = None
        self.dropped = False  # nobody will take it: stop before writing objects
        self.thread = threading.Thread(
            target=self._run, args=(store,), name="reasonix-checkpoint", daemon=True
        )
        self.thread.start()

    def _run(self, store: CheckpointStore) -> None:
        try:
            with short_slices():  # each git process's end needs the GIL back at once
                self.result = store.tree(wanted=lambda: not self.dropped)
        except (SessionError, OSError) as exc:
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - a thread's surprise is no traceback on screen
            self.error = SessionError(f"checkpoint: {type(exc).__name__}: {exc}")

    def drop(self) -> None:
        """Nobody will take this tree (a write made it stale): let it stop early."""
        self.dropped = True

    def take(self) -> tuple[str, list[str]]:
        """Wait for the tree; raises what preparing it raised."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class TurnRecorder:
    """The agent's side: mark each turn, snapshot before its first write and at its end.

    The trees are prepared ahead on a background thread (see the module
    docstring): :meth:`tools_starting` before each round of tool calls,
    :meth:`tools_done` after it. A write (:meth:`before_write`) waits for the
    "before" tree and throws away an "after" tree prepared before it.

    A store that fails (a damaged repository or log, a full disk) switches
    checkpoints off for the rest of the session, with one notice saying so
    (:meth:`take_notices`), at the turn it fails in: the end of a turn that
    wrote asks git to read both of its snapshots back, so a repository that
    cannot serve a rewind is found then, not at the rewind.
    """

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._turn: Turn | None = None
        self._last: tuple[str, int] = ("", 0)  # (session, number) of the turn begun last
        self._before: _Ahead | None = None  # the state the turn started from, being stored
        self._after: _Ahead | None = None  # the state after the last round of tools
        self._tracked: TrackedTurn | None = None  # a turn recorded from its files alone
        self._committed = ""  # the "before" tree of that turn last committed
        self.notices: list[str] = []
        self.off = ""  # why checkpoints are off for the rest of the session ("": on)

    def take_notices(self) -> list[str]:
        """The notices gathered so far (the frontends show them), cleared. A turn's end
        is recorded on a thread: its notice comes with the next turn's (or :meth:`settle`)."""
        taken, self.notices = self.notices, []
        return taken

    def settle(self) -> list[str]:
        """Wait for the last turn's end to be recorded; returns :meth:`take_notices`."""
        self.store.settle()
        return self.take_notices()

    def _switch_off(self, exc: BaseException) -> None:
        """The store failed: no more snapshots this session (each would fail again)."""
        if self.off:
            return
        self.off = str(exc) or type(exc).__name__
        self._turn = None
        self.notices.append(
            f"checkpoints are off for the rest of this session: {self.off} — changes from "
            f"here on cannot be rewound (move {self.store.root} away for a fresh store)"
        )

    def begin(self, session: str, records: int, title: str) -> None:
        """A user turn starts; ``records`` = the transcript's record count before it."""
        # Only the lease holder writes a session's turns: after the first, this process
        # counts on instead of reading the whole project log again.
        self.store.settle()  # the last turn's end is recorded first
        self._turn, self._before, self._after, self._tracked = None, None, None, None
        self._committed = ""
        if self.off:
            return
        last_session, last = self._last
        try:
            number = last + 1 if last_session == session else len(self.store.turns(session)) + 1
            rec = {"type": "turn", "session": session, "turn": number, "records": records}
            self.store.append({**rec, "title": title[:120], "time": time.time()})
        except (SessionError, OSError) as exc:  # an unreadable or unwritable log
            self._switch_off(exc)
            return
        self._turn = Turn(session, number, records, title[:120], time.time())
        self._last = (session, number)

    def tools_starting(self, full: bool = True) -> None:
        """A round of tool calls is about to run: prepare the "before" tree, once per turn;
        not when (``full`` False) every call of the round reads or names its file."""
        turn = self._turn
        if full and turn is not None and not turn.before and self._before is None:
            self._before = _Ahead(self.store)

    def tools_done(self) -> None:
        """A round of tools ended: in a turn that wrote, prepare its "after" tree."""
        turn = self._turn
        if turn is not None and turn.before not in ("", "-") and self._tracked is None:
            self._drop_after()
            self._after = _Ahead(self.store)

    def _drop_after(self) -> None:
        ahead, self._after = self._after, None
        if ahead is not None:
            ahead.drop()

    def outside_change(self) -> None:
        """Files may change outside a tool (a Stop hook): an "after" tree made before is
        stale, and a turn recorded from its files becomes a full one."""
        self._drop_after()
        if self._tracked is not None:
            self.before_write()

    def before_write(self, paths: list[Path] | None = None) -> None:
        """A tool that may change files is about to run: snapshot once per turn.

        ``paths``: the files the tool writes, when it names them
        (:func:`~reasonix.agent.snapedit.write_targets`). While every write of a turn
        does, the turn is recorded from those files alone (no scan of the tree); the
        first that does not makes it a full one.
        """
        self._drop_after()  # whatever it prepared, this write comes after it
        turn = self._turn
        if turn is None or turn.before == "-" or (turn.before and self._tracked is None):
            return
        try:
            if paths is None or not self._track(turn, paths):
                self._full_before(turn)
        except (SessionError, OSError) as exc:
            turn.before, self._tracked = "-", None  # no checkpoints for this turn or the next
            self._switch_off(exc)

    def _track(self, turn: Turn, paths: list[Path]) -> bool:
        """Record the files about to be written; False when the turn must be a full one."""
        from reasonix.agent.snapedit import TrackedTurn, Untrackable

        if self._before is not None:
            return False  # a full "before" tree is being prepared: it is taken
        tracked = self._tracked or TrackedTurn.start(self.store)
        if tracked is None:
            return False  # no snapshot yet to start from
        try:
            new, big = tracked.take(self.store, paths, FILE_LIMIT)
        except (Untrackable, OSError):  # a file it cannot read now: the whole tree decides
            return False
        self._tracked = tracked
        if not turn.before or tracked.before != self._committed:
            turn.before = self.store.commit(tracked.before, f"before turn {turn.number}")
            self._committed = tracked.before
        elif not new:
            return True
        turn.too_big = [*turn.too_big, *big]
        self._log_before(turn, tracked.names(), big)
        return True

    def _full_before(self, turn: Turn) -> None:
        """The turn's "before" from the whole tree (prepared ahead, or now)."""
        ahead, self._before = self._before, None
        tracked, self._tracked = self._tracked, None
        tree, turn.too_big = ahead.take() if ahead is not None else self.store.tree()
        if tracked is not None:  # the files it wrote so far, as they were before the turn
            tree = tracked.over(self.store.git_dir, self.store.read_tree, tree)
        turn.before = self.store.commit(tree, f"before turn {turn.number}")
        self._log_before(turn, None, turn.too_big)

    def _log_before(self, turn: Turn, paths: list[str] | None, big: list[str]) -> None:
        rec = {"type": "before", "session": turn.session, "turn": turn.number,
               "commit": turn.before, "too_big": turn.too_big}  # fmt: skip
        if paths is not None:  # recorded from these files alone (a killed turn's files)
            rec["paths"] = paths
        self.store.append(rec)
        if big:  # named once, when first met
            names = ", ".join(big[:5])
            self.notices.append(f"checkpoint: too big to keep (not restorable): {names}")

    def end(self) -> None:
        """The turn ended: snapshot again when it wrote anything.

        The snapshot is finished on a thread of its own (the turn's answer is
        not held up by git): reading the log (:meth:`CheckpointStore.records`,
        so every rewind and the next turn) waits for it, and so does the
        process's exit (the thread is not a daemon).
        """
        turn, self._turn = self._turn, None
        tracked, self._tracked, self._committed = self._tracked, None, ""
        unused, ahead, self._after, self._before = self._before, self._after, None, None
        if unused is not None:  # a turn that never wrote: no git may outlive the turn
            unused.drop()  # nobody takes its tree: it stops once git has listed the files
            unused.thread.join()
        if turn is None or not turn.before or turn.before == "-":
            return
        self.store.finish_later(
            lambda: self._record_after(turn, ahead, tracked), name="reasonix-checkpoint-end"
        )

    def _record_after(self, turn: Turn, ahead: _Ahead | None, tracked: TrackedTurn | None
                      ) -> None:  # fmt: skip
        try:
            with short_slices():
                if tracked is not None:  # the "before" tree with the turn's files as they are
                    tree = tracked.after_tree(self.store, FILE_LIMIT)
                else:
                    tree, _ = ahead.take() if ahead is not None else self.store.tree()
                after = self.store.commit(tree, f"after turn {turn.number}")
                # Git reads both snapshots back (what a rewind does first): a repository
                # damaged where our own writes do not look (HEAD, config, an old object)
                # is found at this turn, not at the rewind. Off the answer's path.
                self.store.changed(turn.before, after)
                self.store.append({"type": "after", "session": turn.session,
                                   "turn": turn.number, "commit": after})  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - on this thread, any failure is a notice
            self._switch_off(exc)
