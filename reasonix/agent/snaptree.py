"""A checkpoint tree written by us instead of ``git add`` + ``git write-tree``.

For a workspace of up to :data:`NATIVE_FILES` files the blobs and trees are
written into the shadow repository directly, from the list one
``git ls-files`` gives, or :mod:`reasonix.agent.snaplist` where no ignore rule
exists (so git alone still decides what ``.gitignore`` and
the excludes leave out): two git processes fewer per snapshot. The objects
are the ones git would write for the same files: a blob per file (its bytes
as they are; a symlink's target), mode ``100755`` when the owner may execute
it, else ``100644``, ``120000`` for a symlink, and trees sorted the way git
sorts them (a directory as its name plus ``/``).

:func:`native_tree` returns None, leaving the snapshot to git, whenever the
result could differ from git's or the work would be large: more files than
:data:`NATIVE_FILES`, more unread bytes than :data:`NATIVE_BYTES`, a nested
repository or any name that is not a file or a symlink. (``.gitattributes``
cannot make them differ: the repository's ``info/attributes`` unsets every
attribute that would change the stored bytes.)
A file over the size limit keeps the bytes of the last snapshot that held it,
as it does when git leaves it out of its index.

A tree prepared ahead that a later write has made useless is given up between
two files (``wanted()`` says so, :class:`Unwanted` is raised): its work would
only slow down the tool that made it stale.

Within one process a file whose size, times, inode and mode are unchanged
keeps its blob without being read again, unless it changed in the second
before it was read (a write within the file system's timestamp granularity
could go unseen).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from reasonix.digest import sha1_hex

__all__ = [
    "ATTRIBUTES",
    "NATIVE_BYTES",
    "NATIVE_FILES",
    "Entries",
    "StatCache",
    "Unwanted",
    "init_repository",
    "native_tree",
    "set_ref",
    "stamp",
    "write_object",
]

NATIVE_FILES = 2000  # more files than this: git builds the tree (its index keeps stat data)
NATIVE_BYTES = 8 * 1024 * 1024  # more bytes to read than this: git builds the tree
_SETTLED = 1.0  # seconds: a file changed more recently than this is read again next time

StatCache = dict[bytes, tuple[tuple[int, ...], bytes]]  # name -> (stat key, binary object id)
Entries = dict[bytes, tuple[bytes, bytes]]  # name -> (mode, binary object id)


def write_object(git_dir: Path, kind: bytes, body: bytes) -> str:
    """Store a loose object the way git does (zlib, read-only, renamed into place)."""
    data = b"%s %d\0" % (kind, len(body)) + body
    oid = sha1_hex(data)  # git names objects so
    folder = git_dir / "objects" / oid[:2]
    target = folder / oid[2:]
    if target.exists():
        return oid
    folder.mkdir(exist_ok=True)
    tmp = folder / f"tmp_obj_{os.getpid()}_{threading.get_ident()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        try:
            fd = os.open(tmp, flags, 0o444)  # read-only from the start, as git makes them
        except FileExistsError:  # left by a killed process of the same pid and thread id
            os.unlink(tmp)
            fd = os.open(tmp, flags, 0o444)
        with open(fd, "wb") as fh:
            fh.write(zlib.compress(data))
        os.replace(tmp, target)  # the same name means the same bytes: replacing is harmless
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # only a failure leaves it (a rename leaves no name to remove)
        raise
    return oid


class Unwanted(Exception):
    """The tree being written is no longer wanted (see :func:`native_tree`)."""


def _key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


def native_tree(
    workspace: Path,
    git_dir: Path,
    listed: bytes,
    limit: int,
    cache: StatCache,
    kept: Callable[[list[bytes]], Entries],
    wanted: Callable[[], bool] | None = None,
) -> tuple[str, list[str], Entries] | None:
    """The tree of the files ``listed`` (``ls-files -z`` output), the names left out as
    larger than ``limit`` and the tree's entries; None when git should build it (see the
    module docstring).

    A file over the limit keeps the entry it had in the last snapshot, as ``git add``
    leaving it out of the index does: ``kept(names)`` gives those it knows. ``wanted``
    is asked before each file is read: False gives up with :class:`Unwanted`.
    """
    names = sorted({n for n in listed.split(b"\0") if n})
    if len(names) > NATIVE_FILES:
        return None
    base = os.fsencode(workspace)
    started = time.time()
    entries: Entries = {}
    big: list[bytes] = []
    unread = NATIVE_BYTES
    for name in names:
        if name.endswith(b"/"):
            return None  # ls-files names a nested repository so
        path = base + b"/" + name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue  # removed since git listed it: not in the tree, as with `add -A`
        link = stat.S_ISLNK(st.st_mode)
        if link:
            mode = b"120000"
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                big.append(name)
                continue
            mode = b"100755" if st.st_mode & stat.S_IXUSR else b"100644"
        else:
            return None  # a directory (nested repository) or a special file: git decides
        key = _key(st)
        known = cache.get(name)
        if known is not None and known[0] == key:
            entries[name] = (mode, known[1])
            continue
        unread -= st.st_size
        if unread < 0:
            return None
        if wanted is not None and not wanted():
            raise Unwanted
        try:
            data = os.fsencode(os.readlink(path)) if link else Path(os.fsdecode(path)).read_bytes()
        except FileNotFoundError:
            continue  # removed meanwhile
        oid = bytes.fromhex(write_object(git_dir, b"blob", data))
        if max(st.st_mtime_ns, st.st_ctime_ns) < (started - _SETTLED) * 1e9:
            cache[name] = (key, oid)
        entries[name] = (mode, oid)
    if big:
        entries.update(kept(big))
    too_big = [name.decode("utf-8", "replace") for name in big]
    return _write_trees(git_dir, entries), too_big, entries


def _write_trees(git_dir: Path, entries: Entries) -> str:
    """Write the trees for ``entries`` (full names) bottom-up; returns the root tree's id."""
    root: dict[bytes, object] = {}
    for name, (mode, oid) in entries.items():
        *dirs, leaf = name.split(b"/")
        node = root
        for d in dirs:
            child = node.setdefault(d, {})
            assert isinstance(child, dict)
            node = child
        node[leaf] = (mode, oid)
    return _write_tree(git_dir, root)


def _write_tree(git_dir: Path, node: dict[bytes, object]) -> str:
    rows: list[tuple[bytes, bytes]] = []  # (sort key, entry bytes)
    for name, value in node.items():
        if isinstance(value, dict):
            oid = bytes.fromhex(_write_tree(git_dir, value))
            rows.append((name + b"/", b"40000 " + name + b"\0" + oid))
        else:
            assert isinstance(value, tuple)
            mode, blob = value
            rows.append((name, mode + b" " + name + b"\0" + blob))
    rows.sort()
    return write_object(git_dir, b"tree", b"".join(row for _, row in rows))


def stamp(now: float) -> str:
    """``<seconds> <+hhmm>`` as git writes a date: local offset, like ``commit-tree``."""
    offset = time.localtime(now).tm_gmtoff or 0
    sign = "-" if offset < 0 else "+"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return f"{int(now)} {sign}{hours:02d}{minutes:02d}"


CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"


# Highest-precedence attributes: a workspace's .gitattributes may not rewrite what is stored.
ATTRIBUTES = "* -text -eol -crlf -ident -filter -working-tree-encoding\n"


def init_repository(git_dir: Path, excludes: str) -> None:
    """What git needs of a repository (SHA-1, loose refs: ``HEAD``, ``config``,
    ``objects/``, ``refs/``), plus ``info/exclude`` and ``info/attributes``.

    Written directly: a git process here cost more than the rest of a first
    snapshot. ``HEAD`` is written last, so a half-made repository is made again.
    The directories ``git init`` adds besides (``objects/pack``, ``refs/heads`` …)
    git makes when it needs them; on a slow file system each costs as much as a blob.
    """
    for sub in ("objects", "refs", "info"):
        (git_dir / sub).mkdir(parents=True, exist_ok=True)
    (git_dir / "config").write_text(CONFIG)
    (git_dir / "info" / "exclude").write_text(excludes)
    (git_dir / "info" / "attributes").write_text(ATTRIBUTES)
    (git_dir / "HEAD").write_text("ref: refs/heads/master\n")


def set_ref(git_dir: Path, name: str, oid: str) -> None:
    """Point a loose ref at ``oid`` through git's own ``<ref>.lock`` protocol."""
    ref = git_dir / name
    lock = ref.with_name(ref.name + ".lock")
    ref.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # held: git is updating it
    try:
        try:
            os.write(fd, f"{oid}\n".encode())
        finally:
            os.close(fd)
        os.replace(lock, ref)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # only a failure leaves the lock behind
        raise
