"""A turn's checkpoints from the files its file tools wrote, with no scan of the tree.

A turn whose every write comes from a file tool that names its file before
writing (:data:`TRACKED_TOOLS`: ``write_file``, ``edit_file`` …) is recorded
from those files alone: its "before" tree is the latest snapshot's tree with
each written file put in as it was just before its first write of the turn
(read then, so an edit made outside the agent since that snapshot is kept
exactly), and its "after" tree is the "before" tree with the same files as
they are at the turn's end. Only the trees on those files' paths are read and
written (:func:`edit_tree`), so the cost does not grow with the workspace.

A file a full snapshot leaves out is left out here too: one outside the
workspace, or one the ignore rules exclude (asked of ``git check-ignore``
once per file and rules, see :func:`tracked_names`); a file over the size
limit keeps the entry it had. A file below a nested repository, a special
file, or anything a tool without named files (``bash``, an MCP tool, a hook)
may have written, makes the turn a full one again (:class:`TrackedTurn`
gives what the full "before" tree needs).
"""

from __future__ import annotations

import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.snaplist import global_excludes
from reasonix.agent.snaptree import write_object

if TYPE_CHECKING:
    from reasonix.agent.checkpoints import CheckpointStore
    from reasonix.tool import Registry

__all__ = [
    "BIG",
    "TRACKED_TOOLS",
    "Entry",
    "TrackedTurn",
    "Untrackable",
    "edit_tree",
    "entry_now",
    "full_round",
    "lookup",
    "read_object",
    "tracked_names",
    "tree_of",
    "write_targets",
]

# The file tools whose one written file is their ``path`` argument (move_file can move a
# folder: it is not here, its turn is a full one).
TRACKED_TOOLS = frozenset(
    {"write_file", "edit_file", "multi_edit", "delete_range", "delete_symbol", "notebook_edit"}
)
# Hooks run commands that may write anything: with one of these, every turn is a full one.
_TOOL_HOOKS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")

Entry = tuple[bytes, bytes]  # (git mode, binary object id)
BIG = (b"", b"")  # a file over the size limit: it keeps the entry it had
_TREE = b"40000"
Read = Callable[[str], bytes]  # a tree object's body by its hex id


class Untrackable(Exception):
    """A written file a tree edit cannot stand for (the turn becomes a full one)."""


def write_targets(
    name: str, args: dict[str, object], base: str, hooks: object
) -> list[Path] | None:
    """The real paths a call of tool ``name`` writes, or None when they are not known
    (any tool but :data:`TRACKED_TOOLS`, or tool hooks configured)."""
    has = getattr(hooks, "has", None)
    if name not in TRACKED_TOOLS or (has is not None and any(has(e) for e in _TOOL_HOOKS)):
        return None
    path = args.get("path")
    if not isinstance(path, str):
        return []  # the tool refuses the call: nothing is written
    from reasonix.errors import PathDenied
    from reasonix.tool.paths import real_path

    try:
        return [real_path(path, base)]
    except PathDenied:
        return []  # refused by the tool as well


def full_round(names: Iterable[str], registry: Registry, extra: dict[str, object]) -> bool:
    """Whether a round of calls of tools ``names`` may write files none of them names
    (then its turn's "before" tree is prepared from the whole tree, ahead)."""
    hooks = getattr(extra.get("hooks"), "has", None)
    if hooks is not None and any(hooks(e) for e in _TOOL_HOOKS):
        return True
    for name in names:
        tool = registry.get(name)
        if tool is not None and not tool.read_only and name not in TRACKED_TOOLS:
            return True
    return False


def tree_of(git_dir: Path, commit: str, read_git: Callable[[str, str], bytes]) -> str:
    """The tree id of ``commit``."""
    body = read_object(git_dir, "commit", commit, read_git)
    first = body.split(b"\n", 1)[0]
    if not first.startswith(b"tree "):
        raise Untrackable(f"commit {commit} names no tree")
    return first[5:].decode()


def read_object(git_dir: Path, kind: str, oid: str, read_git: Callable[[str, str], bytes]) -> bytes:
    """An object's body: a loose object read here, else (packed) from git."""
    try:
        raw = zlib.decompress((git_dir / "objects" / oid[:2] / oid[2:]).read_bytes())
    except FileNotFoundError:
        return read_git(kind, oid)
    except zlib.error:
        return read_git(kind, oid)
    return raw.partition(b"\0")[2]


def _rows(body: bytes) -> dict[bytes, Entry]:
    rows: dict[bytes, Entry] = {}
    i = 0
    while i < len(body):
        space = body.index(b" ", i)
        nul = body.index(b"\0", space)
        rows[body[space + 1 : nul]] = (body[i:space], body[nul + 1 : nul + 21])
        i = nul + 21
    return rows


def lookup(read: Read, tree: str, name: bytes) -> Entry | None:
    """The entry ``name`` (a file) has in ``tree``, or None."""
    *dirs, leaf = name.split(b"/")
    for d in dirs:
        found = _rows(read(tree)).get(d)
        if found is None or found[0] != _TREE:
            return None
        tree = found[1].hex()
    entry = _rows(read(tree)).get(leaf)
    return None if entry is None or entry[0] == _TREE else entry


def edit_tree(
    git_dir: Path, read: Read, tree: str | None, changes: dict[bytes, Entry | None]
) -> str:
    """``tree`` with each name of ``changes`` set to its entry (None: no file there);
    only the trees on those names' paths are read and written, as git would write them
    (sorted as git sorts, no empty folder)."""
    rows = _rows(read(tree)) if tree else {}
    below: dict[bytes, dict[bytes, Entry | None]] = {}
    for name, entry in changes.items():
        head, sep, rest = name.partition(b"/")
        if sep:
            below.setdefault(head, {})[rest] = entry
        elif entry is not None:
            rows[head] = entry
        elif head in rows and rows[head][0] != _TREE:
            del rows[head]  # a folder of that name stays: its files are names of their own
    for head, inner in below.items():
        old = rows.get(head)
        sub = edit_tree(git_dir, read, old[1].hex() if old and old[0] == _TREE else None, inner)
        if sub == _EMPTY:
            rows.pop(head, None)
        else:
            rows[head] = (_TREE, bytes.fromhex(sub))
    keyed = sorted(
        (n + b"/" if m == _TREE else n, m + b" " + n + b"\0" + o) for n, (m, o) in rows.items()
    )
    return write_object(git_dir, b"tree", b"".join(row for _, row in keyed))


_EMPTY = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree


def entry_now(workspace: Path, git_dir: Path, name: bytes, limit: int) -> Entry | None:
    """``name`` as it is now, its blob written: None when absent, :data:`BIG` when over
    ``limit``; :class:`Untrackable` for a folder or a special file."""
    path = os.fsencode(workspace) + b"/" + name
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode):
        return b"120000", bytes.fromhex(
            write_object(git_dir, b"blob", os.fsencode(os.readlink(path)))
        )
    if not stat.S_ISREG(st.st_mode):
        raise Untrackable(os.fsdecode(name))
    if st.st_size > limit:
        return BIG
    with open(path, "rb") as fh:
        data = fh.read()
    mode = b"100755" if st.st_mode & stat.S_IXUSR else b"100644"
    return mode, bytes.fromhex(write_object(git_dir, b"blob", data))


class TrackedTurn:
    """What a turn recorded from its tracked writes: the tree it started from, and each
    written file as it was before the turn's first write of it."""

    def __init__(self, base: str) -> None:
        self.base = base  # the latest snapshot's tree when the turn first wrote
        self.before = base  # the turn's "before" tree
        self.pre: dict[bytes, Entry | None] = {}  # written file -> its entry before the turn

    @classmethod
    def start(cls, store: CheckpointStore) -> TrackedTurn | None:
        """A turn recorded from its files, on the latest snapshot; None without one."""
        base = store.latest_tree()
        return cls(base) if base else None

    def take(
        self, store: CheckpointStore, paths: Iterable[Path], limit: int
    ) -> tuple[bool, list[str]]:
        """Files ``paths`` are about to be written: (whether a file is new to the turn,
        the new ones too big to keep). :class:`Untrackable` when one cannot be tracked."""
        names = [n for n in tracked_names(store, paths) if n not in self.pre]
        found = [(n, entry_now(store.workspace, store.git_dir, n, limit)) for n in names]
        self.add(store.git_dir, store.read_tree, found)
        return bool(names), [os.fsdecode(n) for n, e in found if e is BIG]

    def after_tree(self, store: CheckpointStore, limit: int) -> str:
        """The turn's "after" tree (see :meth:`after`)."""

        def now(name: bytes) -> Entry | None:
            try:
                return entry_now(store.workspace, store.git_dir, name, limit)
            except Untrackable:
                return None  # a folder or a special file where the file was: no file there

        return self.after(store.git_dir, store.read_tree, now)

    def names(self) -> list[str]:
        """The files the turn wrote (as the log records them)."""
        return sorted(os.fsdecode(n) for n in self.pre)

    def add(self, git_dir: Path, read: Read, found: Iterable[tuple[bytes, Entry | None]]) -> bool:
        """Files about to be written, as they are now: True when the "before" tree
        changed (one of them was not as the latest snapshot held it)."""
        fixes: dict[bytes, Entry | None] = {}
        for name, entry in found:
            if name in self.pre:
                continue  # written before in this turn: its state before the turn is known
            held = lookup(read, self.before, name)
            if entry is BIG:
                entry = held  # kept as the last snapshot held it, as a full snapshot does
            self.pre[name] = entry
            if entry != held:
                fixes[name] = entry
        if fixes:
            self.before = edit_tree(git_dir, read, self.before, fixes)
        return bool(fixes)

    def after(self, git_dir: Path, read: Read, now: Callable[[bytes], Entry | None]) -> str:
        """The "after" tree: the "before" tree with each written file as it is now."""
        changes: dict[bytes, Entry | None] = {}
        for name in self.pre:
            entry = now(name)
            changes[name] = lookup(read, self.before, name) if entry is BIG else entry
        return edit_tree(git_dir, read, self.before, changes)

    def over(self, git_dir: Path, read: Read, tree: str) -> str:
        """``tree`` (a full snapshot taken during the turn) with each written file as it
        was before the turn: the full "before" tree of a turn that turns full."""
        return edit_tree(git_dir, read, tree, dict(self.pre))


def tracked_names(store: CheckpointStore, paths: Iterable[Path]) -> list[bytes]:
    """The work-tree names of ``paths`` a snapshot holds: outside the workspace or
    ignored, a path is left out (as a full snapshot leaves it); :class:`Untrackable`
    below a nested repository.

    Whether a name is ignored depends only on the ``.gitignore`` files on its path
    and on the repository's and the user's excludes files. With none of the first,
    the repository's own excludes are judged here (:func:`_own_ignored`); else git
    judges, and its answer is kept in ``store.ignored`` with the identity of each of
    those files, so a file written again in a later turn costs no git process until
    one of them changes.
    """
    workspace = store.workspace
    names: list[bytes] = []
    stamps: dict[bytes, tuple[object, ...]] = {}
    excludes = global_excludes(os.environ)
    common = (
        _stamp(excludes) if excludes is not None else None,
        _stamp(store.git_dir / "info" / "exclude"),
    )
    for path in paths:
        try:
            rel = path.relative_to(workspace)
        except ValueError:
            continue
        if not rel.parts:
            raise Untrackable("the workspace itself")
        here = workspace
        rules = [_stamp(here / ".gitignore")]
        for part in rel.parts[:-1]:
            here = here / part
            if os.path.lexists(here / ".git"):
                raise Untrackable(f"{rel}: below a nested repository")
            rules.append(_stamp(here / ".gitignore"))
        name = os.fsencode(rel.as_posix())
        names.append(name)
        stamps[name] = (*common, *rules)
    if not names:
        return []
    # only the repository's own rules: no user excludes file, no .gitignore on any path
    if common[0] is None and not any(stamp for n in names for stamp in stamps[n][2:]):
        own = _own_ignored(store, names)
        if own is not None:
            return [n for n in names if n not in own]
    known = store.ignored
    ask = [n for n in names if known.get(n, ((), False))[0] != stamps[n]]
    if ask:
        # --no-index: the ignore rules alone, without reading an index as large as the tree
        out = store.git("check-ignore", "--no-index", "-z", "--stdin",
                        data=b"\0".join(ask) + b"\0", codes=(0, 1))  # fmt: skip
        ignored = set(out.split(b"\0"))
        for name in ask:
            known[name] = (stamps[name], name in ignored)
    return [n for n in names if not known[n][1]]


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    """The identity of a rules file as it is now (None: there is none)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# Names whose ignore status depends on the rules for git's own directories: git decides.
_SPECIAL = frozenset({b".git", b".gitignore", b".reasonix-checkpoints"})


def _own_ignored(store: CheckpointStore, names: list[bytes]) -> set[bytes] | None:
    """The ``names`` the shadow repository's own ``info/exclude`` leaves out, when no other
    rule can apply (no ``.gitignore`` on their paths and no user excludes file, checked by
    the caller; the repository's config naming none); else None.

    Those rules are directories anchored at the root (the state directory inside the
    workspace) and ``.git/`` and ``.reasonix-checkpoints/`` at any depth; a name that
    touches the latter, or a rule with a glob character, is left to git.
    """
    rules = store.own_rules()
    if sys.platform != "linux" or rules is None:
        return None  # elsewhere git may fold case: it decides
    anchored = [os.fsencode(rule.strip("/")) + b"/" for rule in rules]
    if any(ch in rule for rule in anchored for ch in b"*?[\\!"):
        return None
    ignored: set[bytes] = set()
    for name in names:
        if any(part.lower() in _SPECIAL for part in name.split(b"/")):
            return None
        if name.startswith(tuple(anchored)):
            ignored.add(name)
    return ignored
