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
from reasonix.which import which

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.snaptree import Entries, StatCache

__all__ = ["FILE_LIMIT", "CheckpointStore", "StaleTree", "Turn"]

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
        self._rules: list[str] | None = None  # see own_rules
        self._rules_known = False
        self._entries: Entries = {}  # the last tree we wrote, by file
        # git's ignore answers by name, with the rules files they stand on (snapedit)
        self.ignored: dict[bytes, tuple[tuple[object, ...], bool]] = {}

    def finish_later(self, target: Callable[[], None], name: str) -> None:
        """Run ``target`` on a thread that :meth:`settle` (so every reader of the log)
        and the process's exit wait for: a turn's end, recorded off the answer's path."""
        done = threading.Thread(target=target, name=name)  # not a daemon: exit waits
        self._finishing.append(done)
        done.start()

    def settle(self) -> None:
        """Wait for every turn end still being recorded (``TurnRecorder.end``)."""
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

    def own_rules(self) -> list[str] | None:
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
            rules = self.own_rules() if native else None
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

    def has_snapshot(self) -> bool:
        """True once a snapshot was recorded as the latest (one look; nothing is made)."""
        return (self.git_dir / "refs" / "reasonix" / "latest").is_file()

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
        if missing and self.has_snapshot():
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
