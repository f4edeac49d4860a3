"""Remembered facts as files, with revisions and an archive (MEM-4, MEM-7, MEM-8).

One store per scope: ``<state>/memory`` (global) and
``<state>/projects/<slug>/memory`` (project). Layout of a store root::

    <id>.md                      the active fact (front matter + body)
    .revisions/<id>/<rev>.md     every earlier revision, written before it is replaced
    .archive/<id>.r<rev>.md      forgotten facts (kept, searchable by nobody)

A fact file is a ``---`` front matter of ``key: <JSON value>`` lines followed
by the body, so people can read and diff it. The id never changes; the
revision only grows: an update, a restore and an archive recovery each write
a *new* revision, after snapshotting the one they replace.

Safety: ids are a closed alphabet, so a name can never escape the root;
symlinks are refused for the root, the fact files and the snapshot folders;
new files are created exclusively (an existing file is never overwritten,
except the active fact by an atomic replace after its snapshot exists).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.safe_read import MEMORY_LIMIT, read_text
from reasonix.errors import ToolError
from reasonix.lazy import Pattern, dataclass, replace

from .declared import global_root, project_root, root_may_have_facts

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "FACT_TYPES",
    "SCOPES",
    "Fact",
    "FactError",
    "FactStore",
    "format_fact",
    "global_root",
    "parse_fact",
    "project_root",
]

FACT_TYPES = ("user", "feedback", "project", "reference")
SCOPES = ("project", "global")
MAX_FACT_CHARS = 8000  # hard cap on one fact; the write policy's "bounded" limit is lower
_ID = Pattern(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_ARCHIVED = Pattern(r"^(?P<id>[A-Za-z0-9][A-Za-z0-9_-]{0,63})\.r(?P<rev>[0-9]{1,9})\.md$")
_FIELDS = ("id", "revision", "type", "scope", "title", "created_at", "updated_at")


class FactError(ToolError):
    """A memory store operation was refused or failed; the message says why."""


@dataclass(frozen=True)
class Fact:
    """One remembered fact at one revision."""

    id: str
    revision: int
    type: str
    scope: str
    title: str
    content: str
    created_at: str
    updated_at: str

    @property
    def text(self) -> str:
        """What search indexes: title and body."""
        return f"{self.title}\n{self.content}" if self.title else self.content


_FIELD_TYPES: dict[str, type] = {"revision": int}  # every other front-matter field is text


def format_fact(fact: Fact) -> str:
    """The file text of ``fact``."""
    head = [f"{k}: {json.dumps(getattr(fact, k), ensure_ascii=False)}" for k in _FIELDS]
    return "---\n" + "\n".join(head) + "\n---\n" + fact.content + "\n"


def parse_fact(text: str) -> Fact:
    """Inverse of :func:`format_fact`; raises FactError on anything malformed."""
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        raise FactError("not a fact file (no front matter)")
    try:
        end = lines.index("---", 1)
    except ValueError as err:
        raise FactError("not a fact file (front matter not closed)") from err
    meta: dict[str, Any] = {}
    for line in lines[1:end]:
        key, sep, raw = line.partition(": ")
        if not sep:
            raise FactError(f"bad front matter line {line!r}")
        try:
            meta[key] = json.loads(raw)
        except ValueError as err:
            raise FactError(f"bad front matter value for {key!r}") from err
    body = "\n".join(lines[end + 1 :])
    body = body[:-1] if body.endswith("\n") else body
    wrong = [k for k in _FIELDS if k in meta and not isinstance(meta[k], _FIELD_TYPES.get(k, str))]
    if wrong or isinstance(meta.get("revision"), bool):
        raise FactError(f"fact file field {(wrong or ['revision'])[0]!r} has the wrong type")
    try:
        fact = Fact(
            id=str(meta["id"]),
            revision=int(meta["revision"]),
            type=str(meta["type"]),
            scope=str(meta["scope"]),
            title=str(meta.get("title", "")),
            content=body,
            created_at=str(meta.get("created_at", "")),
            updated_at=str(meta.get("updated_at", "")),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise FactError(f"fact file lacks a field: {err}") from err
    if not _ID.match(fact.id) or fact.revision < 1 or fact.type not in FACT_TYPES:
        raise FactError("fact file has an invalid id, revision or type")
    return fact


def _now(clock: Callable[[], float]) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock()))


def new_fact_id(clock: Callable[[], float] = time.time) -> str:
    """A sortable, unique id: ``m`` + UTC date + random hex."""
    return "m" + time.strftime("%Y%m%d", time.gmtime(clock())) + "-" + secrets.token_hex(4)


class FactStore:
    """The facts of one scope, stored under ``root`` (see module docstring)."""

    def __init__(self, root: Path, scope: str, *, clock: Callable[[], float] = time.time) -> None:
        if scope not in SCOPES:
            raise FactError(f"unknown scope {scope!r}")
        self.root = Path(root)
        self.scope = scope
        self.clock = clock
        self.damaged: dict[Path, str] = {}  # fact files listings had to skip, and why
        self._lock = threading.Lock()

    # -- paths ----------------------------------------------------------------
    def _check_id(self, fact_id: str) -> str:
        if not _ID.match(fact_id):
            raise FactError(f"invalid fact id {fact_id!r}")
        return fact_id

    def _dir(self, *parts: str, create: bool = False) -> Path:
        path = self.root.joinpath(*parts)
        for p in [self.root, *[self.root.joinpath(*parts[: i + 1]) for i in range(len(parts))]]:
            if p.is_symlink():
                raise FactError(f"refusing to use a symlinked memory folder: {p}")
        if create:
            path.mkdir(parents=True, exist_ok=True)
        return path

    def _active(self, fact_id: str) -> Path:
        return self._dir() / f"{self._check_id(fact_id)}.md"

    def _snapshot(self, fact_id: str, revision: int) -> Path:
        return self._dir(".revisions", self._check_id(fact_id)) / f"{revision}.md"

    # -- file primitives ---------------------------------------------------------
    def _read(self, path: Path) -> Fact:
        if path.is_symlink():
            raise FactError(f"refusing to read a symlinked fact file: {path.name}")
        try:
            # Not followed, regular files only, capped: a fact is a small file we wrote.
            text = read_text(path, MEMORY_LIMIT, error=FactError, follow=False)
        except FileNotFoundError as err:
            raise FactError(f"no such fact file: {path.name}") from err
        except (OSError, UnicodeDecodeError) as err:
            raise FactError(f"cannot read fact file {path.name}: {err}") from err
        return parse_fact(text)

    def _create(self, path: Path, fact: Fact) -> None:
        """Write a new file; an existing one (or a symlink) is never overwritten."""
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError as err:
            raise FactError(f"refusing to overwrite {path.name}") from err
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(format_fact(fact))
            fh.flush()
            os.fsync(fh.fileno())

    def _replace(self, path: Path, fact: Fact) -> None:
        """Atomically replace the active fact (its snapshot was written first)."""
        if path.is_symlink():
            raise FactError(f"refusing to write through a symlink: {path.name}")
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        self._create(tmp, fact)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def _keep_snapshot(self, fact: Fact) -> None:
        path = self._snapshot(fact.id, fact.revision)
        self._dir(".revisions", fact.id, create=True)
        if path.exists() or path.is_symlink():
            if self._read(path) != fact:
                raise FactError(
                    f"revision {fact.revision} of {fact.id} conflicts with its snapshot"
                )
            return
        self._create(path, fact)

    def _max_revision(self, fact_id: str, *known: int) -> int:
        folder = self.root / ".revisions" / fact_id
        revs = list(known)
        if folder.is_dir() and not folder.is_symlink():
            revs += [int(p.stem) for p in folder.glob("*.md") if p.stem.isdigit()]
        return max(revs, default=0)

    # -- reading ------------------------------------------------------------------
    def may_have_facts(self) -> bool:
        """False when the store certainly holds no active fact (no fact file at all)."""
        return root_may_have_facts(self.root)

    def facts(self) -> list[Fact]:
        """Active facts, oldest id first."""
        if not self.root.is_dir() or self.root.is_symlink():
            return []
        out = []
        for path in sorted(self.root.glob("*.md")):
            try:
                out.append(self._read(path))
            except FactError as err:  # skipped, and said so by the listing (MEM-7)
                self.damaged[path] = str(err)
        return out

    def get(self, fact_id: str) -> Fact:
        """The active fact ``fact_id``."""
        return self._read(self._active(fact_id))

    def exists(self, fact_id: str) -> bool:
        """Whether ``fact_id`` is active here."""
        return _ID.match(fact_id) is not None and (self.root / f"{fact_id}.md").is_file()

    def revisions(self, fact_id: str) -> list[Fact]:
        """Every stored revision of ``fact_id`` (snapshots + the active one), oldest first."""
        self._check_id(fact_id)
        out: dict[int, Fact] = {}
        folder = self.root / ".revisions" / fact_id
        if folder.is_dir() and not folder.is_symlink():
            for p in folder.glob("*.md"):
                with contextlib.suppress(FactError):
                    f = self._read(p)
                    out[f.revision] = f
        with contextlib.suppress(FactError):
            cur = self.get(fact_id)
            out[cur.revision] = cur
        if not out:
            raise FactError(f"no fact {fact_id!r}")
        return [out[r] for r in sorted(out)]

    def archived(self) -> list[tuple[Path, Fact]]:
        """Forgotten facts: (archive file, fact), oldest first."""
        folder = self.root / ".archive"
        if not folder.is_dir() or folder.is_symlink():
            return []
        out = []
        for p in sorted(folder.glob("*.md")):
            if _ARCHIVED.match(p.name):
                with contextlib.suppress(FactError):
                    out.append((p, self._read(p)))
        return out

    # -- writing ------------------------------------------------------------------
    def create(self, content: str, *, type: str, title: str = "") -> Fact:
        """A new fact at revision 1."""
        _check_body(content, type)
        with self._lock:
            self._dir(create=True)
            now = _now(self.clock)
            fact = Fact(
                new_fact_id(self.clock),
                1,
                type,
                self.scope,
                title.strip(),
                content.strip(),
                now,
                now,
            )
            self._create(self._active(fact.id), fact)
            return fact

    def update(
        self,
        fact_id: str,
        content: str,
        *,
        title: str | None = None,
        type: str | None = None,
        expected_revision: int | None = None,
    ) -> Fact:
        """Write revision n+1 after snapshotting revision n; a stale expectation is refused."""
        with self._lock:
            cur = self.get(fact_id)
            if expected_revision is not None and expected_revision != cur.revision:
                raise FactError(
                    f"fact {fact_id} is at revision {cur.revision}, not {expected_revision}; "
                    "read it again before updating"
                )
            new_type = type or cur.type
            _check_body(content, new_type)
            new = replace(
                cur,
                revision=self._max_revision(fact_id, cur.revision) + 1,
                type=new_type,
                title=cur.title if title is None else title.strip(),
                content=content.strip(),
                updated_at=_now(self.clock),
            )
            self._keep_snapshot(cur)
            self._replace(self._active(fact_id), new)
            return new

    def restore(self, fact_id: str, revision: int) -> Fact:
        """Make revision ``revision``'s text current again, as a new higher revision."""
        with self._lock:
            cur = self.get(fact_id)
            old = {f.revision: f for f in self.revisions(fact_id)}.get(revision)
            if old is None:
                raise FactError(f"fact {fact_id} has no revision {revision}")
            new = replace(
                old,
                revision=self._max_revision(fact_id, cur.revision) + 1,
                created_at=cur.created_at,
                updated_at=_now(self.clock),
            )
            self._keep_snapshot(cur)
            self._replace(self._active(fact_id), new)
            return new

    def forget(self, fact_id: str) -> Path:
        """Archive the active fact (its revisions stay); returns the archive file."""
        with self._lock:
            cur = self.get(fact_id)
            self._keep_snapshot(cur)
            folder = self._dir(".archive", create=True)
            target = folder / f"{fact_id}.r{cur.revision}.md"
            self._create(target, cur)
            self._active(fact_id).unlink()
            return target

    def recover(self, path: Path | str) -> Fact:
        """Bring an archived fact back as a new higher revision.

        ``path`` is an archive file name or a path inside ``.archive/``;
        anything else (an escape, a symlink, a foreign file) is refused, and
        so is an id that is already active.
        """
        with self._lock:
            folder = self._dir(".archive")
            given = Path(path)
            candidate = given if given.is_absolute() or given.parent != Path() else folder / given
            if candidate.is_symlink():
                raise FactError("refusing to recover a symlinked archive file")
            try:
                real_parent = candidate.parent.resolve(strict=True)
            except (FileNotFoundError, RuntimeError) as err:
                raise FactError(f"no archive file {given}") from err
            if real_parent != folder.resolve() or not _ARCHIVED.match(candidate.name):
                raise FactError(f"{given} is not a file of this store's archive")
            match = _ARCHIVED.match(candidate.name)
            assert match is not None
            archived = self._read(candidate)
            if archived.id != match.group("id"):
                raise FactError("archive file name and fact id disagree")
            if self.exists(archived.id):
                raise FactError(
                    f"fact {archived.id} is active; forget it first or restore a revision"
                )
            self._keep_snapshot(archived)
            new = replace(
                archived,
                scope=self.scope,
                revision=self._max_revision(archived.id, archived.revision) + 1,
                updated_at=_now(self.clock),
            )
            self._dir(create=True)
            self._create(self._active(archived.id), new)
            candidate.unlink()
            return new


def _check_body(content: str, fact_type: str) -> None:
    if fact_type not in FACT_TYPES:
        raise FactError(f"type must be one of {', '.join(FACT_TYPES)}")
    if not content.strip():
        raise FactError("a fact needs some content")
    if len(content) > MAX_FACT_CHARS:
        raise FactError(f"a fact is limited to {MAX_FACT_CHARS} characters")
