"""Large records of a resumed transcript, kept as a place in the file (issue 38, item 1).

A long session's transcript is tens of megabytes, almost all of it tool
results the context no longer carries (a checkpoint covers them). Holding
every parsed record would make a resume's memory grow with the session, so
:meth:`reasonix.agent.session.Session.open` keeps a ``message`` record whose
line is longer than :data:`LAZY_BYTES` as a :class:`LazyRecord`: its type and
role, and where its line is. Anything else a reader asks of it is read back
from the transcript, which only ever grows (the lease keeps other writers
out), so the line is still there and still the same.

:class:`MessageLog` is the agent's conversation over those records: a
sequence of :class:`~reasonix.provider.types.Message` built on access, so
the thousands of messages a resume does not look at are never built.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from reasonix.errors import SessionError
from reasonix.provider.types import Message

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

__all__ = [
    "LAZY_BYTES",
    "LazyRecord",
    "MessageLog",
    "RecordSource",
    "RecordView",
    "loads_line",
    "of_types",
]

_RAW_DECODE = json.JSONDecoder().raw_decode
_OPEN_LOCK = threading.Lock()
_JSON_SPACE = " \t\n\r"


def loads_line(raw: bytes) -> Any:
    """``json.loads(raw)`` for one transcript line, with less of its per-call work.

    A line starting ``{"`` is UTF-8 to ``json.loads`` (no BOM, no NUL byte)
    and has no leading space, so it is decoded and scanned directly; what
    follows the value must be JSON whitespace, as ``json.loads`` requires.
    Any other line goes to ``json.loads`` itself.
    """
    if raw[:2] != b'{"':
        return json.loads(raw)
    text = raw.decode("utf-8", "surrogatepass")
    value, end = _RAW_DECODE(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        raise ValueError("extra data after the JSON value")
    return value


# Lines up to this size stay parsed: user messages, most answers and every
# small bookkeeping record, which the walks over a session's records read.
LAZY_BYTES = 4096


class RecordSource:
    """The transcript lazy records are read back from; remembers the last record read.

    One record, not more: a reader that asks several keys of the same
    record (``{**rec}``, ``rec.get`` then ``rec[...]``) pays one read, and
    memory stays bounded by the largest record. The file stays open for
    reading until :meth:`close` (the session's close), so a walk over many
    records (the ``history`` index, a copy) does not open it once per record.
    """

    __slots__ = ("_closed", "_fd", "_last", "path", "reads")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.reads = 0  # lines read back (tests count them)
        self._last: tuple[int, dict[str, Any]] | None = None
        self._fd: int | None = None
        self._closed = False

    def load(self, at: int, size: int) -> dict[str, Any]:
        """The record whose line starts at byte ``at`` and is ``size`` bytes long."""
        last = self._last
        if last is not None and last[0] == at:
            return last[1]
        try:
            raw = self._pread(at, size)
        except OSError as err:
            raise SessionError(f"{self.path}: cannot read a record back: {err}") from err
        try:
            rec = loads_line(raw) if len(raw) == size and raw.endswith(b"\n") else None
        except ValueError:
            rec = None
        if not isinstance(rec, dict):
            raise SessionError(f"{self.path}: the transcript changed under the session")
        self.reads += 1
        self._last = (at, rec)
        return rec

    def _pread(self, at: int, size: int) -> bytes:
        if self._closed:  # after the session closed: open, read, close
            once = os.open(self.path, os.O_RDONLY)
            try:
                return os.pread(once, size, at)
            finally:
                os.close(once)
        fd = self._fd
        return os.pread(fd if fd is not None else self._open(), size, at)

    def _open(self) -> int:
        with _OPEN_LOCK:  # two threads reading at once open the file once
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY)
            return self._fd

    def close(self) -> None:
        """Close the file (idempotent); a later read opens it for that read alone."""
        self._closed = True
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        self.close()  # records read without a session (open_records) close it here


class LazyRecord(dict):  # type: ignore[type-arg]
    """A ``message`` record known by type and role; the rest is read back on access.

    It is a ``dict`` (readers check ``isinstance(rec, dict)``) holding only
    ``type``: asking for ``type`` costs nothing, every other read, iteration,
    copy or comparison reads the whole record back (:class:`RecordSource`).
    Records are never modified in place, so the mutating methods are left as
    they are.
    """

    __slots__ = ("_at", "_size", "_src", "role")

    def __init__(self, source: RecordSource, at: int, size: int, role: str) -> None:
        super().__init__(type="message")
        self._src, self._at, self._size, self.role = source, at, size, role

    @property
    def source(self) -> RecordSource:
        """Where the record is read back from (shared by a session's lazy records)."""
        return self._src

    def full(self) -> dict[str, Any]:
        """The whole record, as parsed from its line."""
        return self._src.load(self._at, self._size)

    def get(self, key: str, default: Any = None) -> Any:
        """``dict.get``: the type at once, any other key from the whole record."""
        if key == "type":
            return "message"
        return self.full().get(key, default)

    def __getitem__(self, key: str) -> Any:
        return "message" if key == "type" else self.full()[key]

    def __contains__(self, key: object) -> bool:
        return key == "type" or key in self.full()

    def __iter__(self) -> Iterator[str]:
        return iter(self.full())

    def __len__(self) -> int:
        return len(self.full())

    def keys(self) -> dict_keys[str, Any]:
        """The whole record's keys."""
        return self.full().keys()

    def values(self) -> dict_values[str, Any]:
        """The whole record's values."""
        return self.full().values()

    def items(self) -> dict_items[str, Any]:
        """The whole record's items (``json.dumps`` reads these)."""
        return self.full().items()

    def copy(self) -> dict[str, Any]:
        """A plain ``dict`` of the whole record."""
        return dict(self.full())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRecord):
            other = other.full()
        return self.full() == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.full())


def _role(item: Message | Mapping[str, Any]) -> str:
    if isinstance(item, Message):
        return item.role.value
    if isinstance(item, LazyRecord):
        return item.role
    body = item.get("message")
    data = body if isinstance(body, Mapping) else item
    return str(data.get("role", ""))


class MessageLog(Sequence[Message]):
    """The agent's conversation: messages of a session's records, built when read.

    ``items`` holds records whose message is known to build (they passed the
    record check when the transcript was read) and messages appended since.
    A message built from a small record is kept; one from a
    :class:`LazyRecord` is not (memory stays what the records take).
    """

    __slots__ = ("_items",)

    def __init__(self, items: list[Message | dict[str, Any]]) -> None:
        self._items = items

    def _at(self, i: int) -> Message:
        from reasonix.agent.compaction import message_from_record

        item = self._items[i]
        if isinstance(item, Message):
            return item
        msg = message_from_record(item)
        if msg is None:  # checked when read: cannot happen unless the file changed
            raise SessionError("a message record of the transcript no longer builds")
        if not isinstance(item, LazyRecord):
            self._items[i] = msg
        return msg

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(len(self._items))[index]]
        n = len(self._items)
        if not -n <= index < n:
            raise IndexError("message index out of range")
        return self._at(index if index >= 0 else n + index)

    def __iter__(self) -> Iterator[Message]:
        return (self._at(i) for i in range(len(self._items)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageLog | list):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def append(self, message: Message) -> None:
        """Add a message at the end (the agent writes it to the session too)."""
        self._items.append(message)

    def contents(self, role: str) -> Iterator[str]:
        """The ``content`` of each message of one role (``"user"``), in order.

        Nothing is built for it: a small record's text is read off the record
        as :meth:`Message.from_dict` would read it, a large one's from the file.
        """
        for item in self._items:
            if _role(item) != role:
                continue
            if isinstance(item, Message):
                yield item.content
                continue
            body = item.get("message")
            data = body if isinstance(body, Mapping) else item
            yield str(data.get("content") or "")


class RecordView(Sequence[dict[str, Any]]):
    """A read-only snapshot of a session's records, made in constant time.

    A session only ever appends, so the first ``n`` records of its list never
    change: the view keeps the list and the length it had, and never copies
    (a copy per turn would make each turn cost more than the one before).
    ``kinds`` (the session's record numbers by type) lets :meth:`positions`
    find the records of a few types without a walk.
    """

    __slots__ = ("_items", "_kinds", "_n")

    def __init__(
        self, items: list[dict[str, Any]], n: int, kinds: dict[str, list[int]] | None = None
    ) -> None:
        self._items, self._n, self._kinds = items, n, kinds

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return self._items[: self._n][index]
        if not -self._n <= index < self._n:
            raise IndexError("record index out of range")
        return self._items[index if index >= 0 else self._n + index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return itertools.islice(self._items, self._n)

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        items = self._items
        return (items[i] for i in range(self._n - 1, -1, -1))

    def positions(self, kinds: tuple[str, ...]) -> list[int]:
        """The numbers of the records whose type is one of ``kinds``, in order."""
        n = self._n
        if self._kinds is None:
            return [i for i, rec in enumerate(self) if rec.get("type") in kinds]
        found = [i for k in kinds for i in self._kinds.get(k, ()) if i < n]
        return sorted(found) if len(kinds) > 1 else found


def of_types(
    records: Sequence[Mapping[str, Any]], kinds: tuple[str, ...]
) -> Iterator[Mapping[str, Any]]:
    """The records whose type is one of ``kinds``, in order: a session's
    :class:`RecordView` finds them without a walk over the others (a long session
    holds tens of thousands), any other sequence is walked."""
    if isinstance(records, RecordView):
        return (records[i] for i in records.positions(kinds))
    return (rec for rec in records if rec.get("type") in kinds)
