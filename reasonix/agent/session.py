"""Durable sessions: one append-only JSONL transcript per conversation (DESIGN §6).

Layout: ``<state>/sessions/<project-slug>/<id>.jsonl`` plus ``<id>.lease``
while a process writes it. Every line is one complete JSON record
``{"type": …, …}``; known types are ``meta`` (first line: id, workspace,
system prompt, model), ``title``, ``message`` (one canonical Message) and
``end``; other layers add their own (the context manager's ``checkpoint``)
and unknown types are kept verbatim.

Durability: each record is written with one ``write`` call and flushed, so a
killed process loses at most the line being written; :meth:`Session.sync`
fsyncs at turn boundaries, on a thread of its own (:class:`~reasonix.agent.syncer.Syncer`: the
loop does not wait for the disk), and :meth:`Session.close` waits for it and
fsyncs what is left. Opening a transcript for writing truncates a torn
last line. The lease (pid + process start time, :mod:`reasonix.agent.lease`)
stops a second live process from writing the same file; a lease left by a
dead process is taken over.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonix.agent.compaction import CHECKPOINT, message_from_record, parse_checkpoint
from reasonix.agent.lazy_records import (
    LAZY_BYTES,
    LazyRecord,
    MessageLog,
    RecordSource,
    RecordView,
    loads_line,
)
from reasonix.agent.lease import Lease
from reasonix.config.paths import sessions_dir
from reasonix.config.safe_read import TRANSCRIPT_LIMIT, open_regular
from reasonix.errors import SessionError
from reasonix.lazy import dataclass
from reasonix.provider.types import Message, Role

if TYPE_CHECKING:
    from typing import BinaryIO

    from reasonix.agent.syncer import Syncer

__all__ = [
    "RecordView",
    "Session",
    "SessionInfo",
    "copy_session",
    "damage_notice",
    "find_session",
    "latest_session",
    "list_sessions",
    "make_title",
    "open_records",
    "read_records",
    "record_problem",
]

FORMAT_VERSION = 1
_ROLES = frozenset(r.value for r in Role)
_TEXT_FIELDS = ("content", "tool_call_id", "name", "reasoning")  # text or absent
_PEEK_BYTES = 1 << 20  # how far into a transcript a listing looks for its title
_TITLE_LEN = 80  # long enough to recognise a task in a listing, short enough for one line


@dataclass(frozen=True)
class SessionInfo:
    """What a listing shows about one stored session."""

    id: str
    path: Path
    title: str
    modified: float  # st_mtime, for ordering only


def make_title(text: str) -> str:
    """A one-line title from the first user message."""
    line = " ".join(text.split())
    return line if len(line) <= _TITLE_LEN else line[: _TITLE_LEN - 1] + "…"


def new_session_id() -> str:
    """A sortable, unique id: UTC timestamp plus random hex."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()


# -- reading -------------------------------------------------------------------


def _complete_lines(path: Path) -> Iterator[bytes]:
    """The complete lines of the transcript at ``path`` (a torn tail is left out).

    Read line by line rather than whole: a long session's transcript is tens
    of megabytes, and holding its bytes next to its parsed records would
    double the peak memory of a resume.
    """
    try:
        fh = open_regular(path, error=SessionError)
    except FileNotFoundError as err:
        raise SessionError(f"no session transcript at {path}") from err
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size > TRANSCRIPT_LIMIT:  # refused before any read
            raise SessionError(f"{path}: is too large ({size} bytes) for a session transcript")
        left = TRANSCRIPT_LIMIT  # bounded again while reading: the file may grow
        for raw in fh:  # the C line iterator: a per-line readline() costs a third more
            left -= len(raw)
            if left < 0:
                raise SessionError(f"{path}: grew past {TRANSCRIPT_LIMIT} bytes while being read")
            if not raw.endswith(b"\n"):
                return  # a torn last line
            yield raw


def _kind(rec: dict[str, Any]) -> str:
    kind = rec.get("type")
    return kind if isinstance(kind, str) else ""  # a record of another layer, any shape


def _is_str(value: Any, optional: bool = True) -> bool:
    return isinstance(value, str) or (optional and value is None)


def _message_problem(body: Any) -> str | None:
    """What is wrong with the body of a ``message`` record, or None."""
    if not isinstance(body, dict):
        return "a message record without a message object"
    role = body.get("role")
    if not isinstance(role, str) or role not in _ROLES:  # a list or dict is not hashable
        return f"unknown message role {role!r}"
    get = body.get  # every record of a resume passes here: plain look-ups, no helper calls
    for key in _TEXT_FIELDS:
        value = get(key)
        if value is not None and not isinstance(value, str):
            return f"message field {key!r} is not text"
    meta = get("reasoning_meta")
    if meta and not isinstance(meta, dict):
        return "message field 'reasoning_meta' is not an object"
    calls = get("tool_calls")
    if not calls:
        return None
    if not isinstance(calls, list):
        return "message field 'tool_calls' is not a list"
    for call in calls:
        if not isinstance(call, dict):
            return "a tool call without a text id and name"
        if not (isinstance(call.get("id"), str) and isinstance(call.get("name"), str)):
            return "a tool call without a text id and name"
        args = call.get("arguments")
        if args is not None and not isinstance(args, str):
            return "tool call arguments are not text"
    return None


def _checkpoint_problem(rec: dict[str, Any], index: int) -> str | None:
    cp = parse_checkpoint(rec)
    if cp is None:
        return "a malformed checkpoint"
    if cp.covers_through >= index or any(i >= index for i in cp.pruned):
        return "a checkpoint that points past itself"
    return None


def record_problem(rec: dict[str, Any], index: int) -> str | None:
    """Why record number ``index`` of a transcript cannot be used, or None when it can.

    Known types are checked field by field (a message must rebuild into a
    :class:`Message`); unknown types are kept verbatim for other layers.
    """
    kind = rec.get("type")
    if not isinstance(kind, str):
        return "a record without a type"
    if kind == "message":  # the nested form we write, or the flat one compaction accepts
        return _message_problem(rec.get("message") if "message" in rec else rec)
    if kind == "meta":
        bad = [k for k in ("id", "system", "model", "workspace") if not _is_str(rec.get(k))]
        return f"meta field {bad[0]!r} is not text" if bad else None
    if kind == "title":
        return None if isinstance(rec.get("title"), str) else "a title that is not text"
    if kind == CHECKPOINT:
        return _checkpoint_problem(rec, index)
    return None


def read_records(path: Path, damaged: list[str] | None = None) -> list[dict[str, Any]]:
    """Every complete, usable record of a transcript (read-only; nothing repaired).

    A line that is not a JSON object is skipped; a record of a known type
    with the wrong shape is replaced by a ``{"type": "damaged", …}`` record
    (so the indexes checkpoints refer to stay put). Each is described in
    ``damaged`` when given, as "line N: problem".
    """
    return _read(path, damaged, None)


def open_records(path: Path, damaged: list[str] | None = None) -> list[dict[str, Any]]:
    """The records of :func:`read_records` as a session holds them (:meth:`Session.open`).

    A ``message`` record whose line is longer than ``LAZY_BYTES`` is a
    :class:`~reasonix.agent.lazy_records.LazyRecord`: equal to the parsed
    record, read back from the file when more than its type is asked for.
    """
    return _read(path, damaged, RecordSource(path))


def _read(
    path: Path,
    damaged: list[str] | None,
    source: RecordSource | None,
    kinds: dict[str, list[int]] | None = None,
) -> list[dict[str, Any]]:
    """:func:`read_records`; with ``source``, large message records stay in the file.

    Each line is parsed (to check it and to number the records as before)
    and, when long, dropped at once for a :class:`LazyRecord`, so the memory
    of a resume does not grow with the transcript.
    """
    # Every record parsed is kept, so the cyclic collector's passes over them (one per
    # few hundred containers made) find nothing to free: it is off while they are parsed.
    was_on = gc.isenabled()
    gc.disable()
    try:
        return _parse_lines(path, damaged, source, kinds)
    finally:
        if was_on:
            gc.enable()


def _parse_lines(
    path: Path,
    damaged: list[str] | None,
    source: RecordSource | None,
    kinds: dict[str, list[int]] | None,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    at = 0  # byte offset of the line
    for number, raw in enumerate(_complete_lines(path), start=1):
        start, size = at, len(raw)
        at += size
        if raw[:1] != b"{" and not raw.strip():  # strip() would copy every line
            continue
        try:
            rec = loads_line(raw)
        except (ValueError, RecursionError):
            problems.append(f"line {number}: not JSON")  # must not make the session unloadable
            continue
        if not isinstance(rec, dict):
            problems.append(f"line {number}: not a JSON object")
            continue
        problem = record_problem(rec, len(out))
        if problem is not None:
            problems.append(f"line {number}: {problem}")
            rec = {"type": "damaged", "line": number, "problem": problem}
        elif source is not None and size > LAZY_BYTES and rec["type"] == "message":
            body = rec.get("message")  # the nested form we write; a flat one stays parsed
            if isinstance(body, dict):
                rec = LazyRecord(source, start, size, body["role"])  # checked above
        if kinds is not None:  # the record numbers of each type (checked: a text type)
            kinds.setdefault(rec["type"], []).append(len(out))
        out.append(rec)
    if damaged is not None:
        damaged.extend(problems)
    return out


def damage_notice(path: Path, problems: list[str]) -> str:
    """One notice for the records of ``path`` that were skipped on load."""
    shown = "; ".join(problems[:3]) + (f"; … {len(problems) - 3} more" if len(problems) > 3 else "")
    return f"skipped {len(problems)} damaged record(s) of {path} ({shown})"


def _peek_title(path: Path) -> str:
    # Titles sit near the top; read line by line so a listing of long sessions stays cheap.
    try:
        with open_regular(path, error=SessionError) as fh:
            seen = 0
            while seen < _PEEK_BYTES:  # bounded: a hostile file may hold one endless line
                raw = fh.readline(_PEEK_BYTES - seen)
                seen += len(raw)
                if not raw.endswith(b"\n"):
                    break
                with contextlib.suppress(ValueError):
                    rec = json.loads(raw)
                    if isinstance(rec, dict) and rec.get("type") == "title":
                        return str(rec.get("title", ""))
    except (OSError, SessionError):
        pass  # a listing shows what it can; opening the session reports the problem
    return ""


def list_sessions(workspace: Path) -> list[SessionInfo]:
    """Sessions of ``workspace``, most recently modified first."""
    root = sessions_dir(workspace)
    if not root.is_dir():
        return []
    infos = []
    for path in root.glob("*.jsonl"):
        with contextlib.suppress(OSError):
            infos.append(SessionInfo(path.stem, path, _peek_title(path), path.stat().st_mtime))
    infos.sort(key=lambda i: (i.modified, i.id), reverse=True)
    return infos


def latest_session(workspace: Path) -> SessionInfo | None:
    """The most recently modified session of ``workspace`` (``--continue``)."""
    infos = list_sessions(workspace)
    return infos[0] if infos else None


def _describe(infos: list[SessionInfo], limit: int = 10) -> str:
    rows = [f"  {i.id}  {i.title or '(untitled)'}" for i in infos[:limit]]
    if len(infos) > limit:
        rows.append(f"  … and {len(infos) - limit} more")
    return "\n".join(rows)


def find_session(workspace: Path, query: str) -> Path:
    """Resolve ``--resume QUERY``: an exact id, a transcript path, or a unique title substring.

    Raises :class:`SessionError` listing the candidates when nothing or more
    than one session matches.
    """
    candidate = Path(query).expanduser()
    if query.endswith(".jsonl") and candidate.is_file():
        return candidate.resolve()
    infos = list_sessions(workspace)
    for info in infos:
        if info.id == query:
            return info.path
    low = query.lower()
    hits = [i for i in infos if low in i.title.lower() or low in i.id.lower()]
    if len(hits) == 1:
        return hits[0].path
    if not hits:
        listing = _describe(infos) if infos else "  (this project has no sessions yet)"
        raise SessionError(f"no session matches {query!r}; sessions of this project:\n{listing}")
    raise SessionError(
        f"{len(hits)} sessions match {query!r}; be more specific:\n{_describe(hits)}"
    )


# -- the session ---------------------------------------------------------------


class Session:
    """One conversation's transcript, open for appending by this process.

    Use :meth:`create` for a new session and :meth:`open` to continue one;
    both hold the lease until :meth:`close`.
    """

    def __init__(
        self,
        path: Path,
        records: list[dict[str, Any]],
        lease: Lease,
        kinds: dict[str, list[int]] | None = None,
    ) -> None:
        self.path = path
        self.id = path.stem
        self.notices: list[str] = []  # what loading had to skip, for the frontend to show
        self._records = records
        self._checked = len(records)  # records read from the file: each passed record_problem
        self._source: RecordSource | None = None  # where its lazy records are read back from
        # The record numbers of each type, kept as records arrive (``kinds``: as the
        # reader found them): the title, the tools, the pins and the checkpoints are
        # found without a walk over a long session's records.
        if kinds is None:
            kinds = {}
            for i, rec in enumerate(records):
                kinds.setdefault(_kind(rec), []).append(i)
        self._kinds = kinds
        titles = kinds.get("title")
        self._title = str(records[titles[-1]].get("title", "")) if titles else ""
        self._lease = lease
        self._fh: BinaryIO | None = path.open("ab")
        self._synced = False  # True while nothing was appended since the last sync()
        self._syncer: Syncer | None = None

    # -- constructors ---------------------------------------------------------
    @classmethod
    def create(
        cls, workspace: Path, meta: dict[str, Any] | None = None, *, root: Path | None = None
    ) -> Session:
        """Start a new session for ``workspace`` and write its meta record.

        ``root`` puts the transcript elsewhere than the workspace's session
        directory (the planner's sessions, which listings must not show).
        """
        root = root if root is not None else sessions_dir(workspace)
        root.mkdir(parents=True, exist_ok=True)
        path = root / f"{new_session_id()}.jsonl"
        lease = Lease(path.with_suffix(".lease"))
        lease.acquire(path.stem)
        session = cls(path, [], lease)
        head = {"type": "meta", "version": FORMAT_VERSION, "id": session.id}
        head.update({"workspace": str(workspace), "created": time.time()})
        session.append({**head, **(meta or {})})  # fsynced with the first turn boundary
        return session

    @classmethod
    def open(cls, path: Path) -> Session:
        """Continue the session stored at ``path``: take its lease, repair a torn tail."""
        path = Path(path)
        if not path.is_file():
            raise SessionError(f"no session transcript at {path}")
        lease = Lease(path.with_suffix(".lease"))
        lease.acquire(path.stem)
        try:
            _repair_tail(path)
            damaged: list[str] = []
            source = RecordSource(path)
            kinds: dict[str, list[int]] = {}
            records = _read(path, damaged, source, kinds)  # large ones stay on disk
            session = cls(path, records, lease, kinds)
            session._source = source
            if damaged:
                session.notices.append(damage_notice(path, damaged))
            return session
        except BaseException:
            lease.release()
            raise

    def copy(self, workspace: Path) -> Session:
        """A new session holding this one's records (``--copy``); this one is left untouched."""
        return copy_session(self.records(), workspace)

    # -- writing --------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a complete line and flush it to the OS."""
        if self._fh is None:
            raise SessionError(f"session {self.id} is closed")
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: \u-escape them, the record round-trips
            data = (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")
        self._synced = False
        self._fh.write(data)  # one write: a kill tears at most this line
        self._fh.flush()
        self._kinds.setdefault(_kind(record), []).append(len(self._records))
        self._records.append(record)
        if record.get("type") == "title":
            self._title = str(record.get("title", ""))

    def append_message(self, message: Message, raw_content: str = "") -> None:
        """Append one canonical message; the first user message also sets the title.

        ``raw_content`` keeps a tool's full local output next to the bounded
        provider-visible content; it never reaches a request.
        """
        if message.role is Role.USER and not self.title:
            self.set_title(message.content)
        record: dict[str, Any] = {"type": "message", "message": message.to_dict()}
        if raw_content:
            record["raw_content"] = raw_content
        self.append(record)

    def set_title(self, text: str) -> None:
        """Record the title shown by listings and matched by ``--resume``."""
        self.append({"type": "title", "title": make_title(text)})

    def sync(self) -> None:
        """Make every appended record durable (called at turn boundaries).

        The fsync runs on the session's syncer thread; every byte is already
        with the OS (a killed process loses nothing), the disk is told next.
        """
        if self._fh is not None and not self._synced:  # a second fsync would find nothing
            if self._syncer is None:
                from reasonix.agent.syncer import Syncer  # at the first turn boundary

                self._syncer = Syncer(self._fh.fileno())
            self._syncer.request()
            self._synced = True

    def close(self) -> None:
        """Sync, close the file and release the lease (idempotent)."""
        if self._fh is not None:
            syncer, self._syncer = self._syncer, None
            clean = syncer.finish() if syncer is not None else False
            if not (clean and self._synced):  # whatever the syncer has not made durable
                with contextlib.suppress(OSError):
                    os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
        if self._source is not None:
            self._source.close()
        self._lease.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading --------------------------------------------------------------
    def records(self) -> RecordView:
        """Every record in order: a read-only snapshot (constant time; records are shared)."""
        return RecordView(self._records, len(self._records), self._kinds)

    def __len__(self) -> int:
        """The number of records."""
        return len(self._records)

    def iter_type(self, kind: str) -> Iterator[dict[str, Any]]:
        """Records of one type, in order (no walk over the others)."""
        records = self._records
        return (records[i] for i in self._kinds.get(kind, ()))

    def messages(self) -> list[Message]:
        """The canonical conversation: every ``message`` record, in order."""
        found = (message_from_record(r) for r in self.iter_type("message"))
        return [m for m in found if m is not None]

    def message_log(self) -> MessageLog:
        """The conversation as :meth:`messages` has it, each message built when read.

        A resumed session's agent starts from this: the messages of records
        read from the file are built on access (they passed the record check,
        so each builds), those appended since are built now.
        """
        items: list[Message | dict[str, Any]] = []
        for i in self._kinds.get("message", ()):
            rec = self._records[i]
            if i < self._checked:
                items.append(rec)
            elif (msg := message_from_record(rec)) is not None:
                items.append(msg)
        return MessageLog(items)

    @property
    def meta(self) -> dict[str, Any]:
        """The first meta record (empty when the transcript has none)."""
        return next(self.iter_type("meta"), {})

    @property
    def title(self) -> str:
        """The latest title record, or ""."""
        return self._title


def copy_session(
    records: Sequence[dict[str, Any]], workspace: Path, meta: dict[str, Any] | None = None
) -> Session:
    """A new session continuing ``records`` (``--copy``); needs no lease on the source.

    The new meta record keeps the source's system prompt and model, so the
    copy's requests start with the same prefix; ``meta`` fills what it lacks.
    """
    old = next((r for r in records if r.get("type") == "meta"), {})
    merged = {
        **(meta or {}),
        **{k: v for k, v in old.items() if k not in ("type", "id", "version", "created")},
    }
    merged["copied_from"] = old.get("id", "")
    new = Session.create(workspace, merged)
    for rec in records:
        if rec.get("type") != "meta":
            new.append(rec)
    new.sync()
    return new


def _repair_tail(path: Path) -> None:
    """Cut a torn last line (a write interrupted by a kill) so appends start clean."""
    with open_regular(path, error=SessionError, writable=True) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > TRANSCRIPT_LIMIT:  # refused before any scan or cut, not after
            raise SessionError(f"{path}: is too large ({size} bytes) for a session transcript")
        if size == 0:
            return
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return
        # Scan back in blocks for the last newline; transcripts can be large.
        pos, block = size, 65536
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            data = fh.read(pos - start)
            nl = data.rfind(b"\n")
            if nl >= 0:
                fh.truncate(start + nl + 1)
                return
            pos = start
        fh.truncate(0)
