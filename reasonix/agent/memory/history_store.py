"""The live session's ``history`` index kept beside its transcript (issue 38).

Building the index of a long session costs seconds (every message
tokenised); the next process that searches the same session loads it from
``<session-id>.hidx`` next to ``<session-id>.jsonl`` instead and tokenises
only the records appended since. The file is a cache: anything wrong with it
(missing, torn, another version, another byte order, a transcript that was
rewritten or is shorter than what it covers) makes :func:`load` return None
and the caller builds the index again; :func:`save` writes atomically and
ignores a home it cannot write.

Layout: a magic line, one line of ASCII JSON (what the index covers and how
to check it, each document's record number, role and length, each term
with its number of postings, a CRC-32 of the rest), then the postings of
every term in that order as two native ``int32`` arrays (documents, then
frequencies).
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reasonix.agent.lazy_records import LazyRecord
from reasonix.agent.memory.history_index import Doc, TranscriptIndex, message_text

__all__ = ["SUFFIX", "index_path", "load", "save"]

SUFFIX = ".hidx"
_MAGIC = b"reasonix-history-index 1\n"


def index_path(transcript: Path) -> Path:
    """Where the index of ``transcript`` is kept."""
    return transcript.with_suffix(SUFFIX)


def _canonical(record: Mapping[str, Any] | None) -> str:
    # A JSON round trip turns tuples into lists: compare the serialised forms.
    return json.dumps(record, sort_keys=True, ensure_ascii=True, default=str)


def save(ix: TranscriptIndex, transcript: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Write ``ix`` (the index of ``records``, the transcript's records) beside ``transcript``."""
    if not ix.consumed or not records:
        return
    try:
        size = transcript.stat().st_size
    except OSError:
        return
    docs, tfs = array("i"), array("i")
    terms = []
    for term, (d, f) in ix.postings.items():
        terms.append([term, len(d)])
        docs.extend(d)
        tfs.extend(f)
    body = docs.tobytes() + tfs.tobytes()
    head = {
        "session": ix.session,
        "crc": zlib.crc32(body),
        "byteorder": sys.byteorder,
        "itemsize": docs.itemsize,
        "size": size,
        "consumed": ix.consumed,
        "first": _canonical(records[0]),
        "last": _canonical(ix.last),
        "docs": [[d.index, d.role, n] for d, n in zip(ix.docs, ix.lengths, strict=True)],
        "terms": terms,
    }
    line = json.dumps(head, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    path = index_path(transcript)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(_MAGIC + line + b"\n")
            fh.write(body)
        os.replace(tmp, path)  # a reader sees the old file or the new one, never half
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only home: the index stays in memory


def load(
    transcript: Path, session: str, records: Sequence[Mapping[str, Any]]
) -> TranscriptIndex | None:
    """The kept index of ``transcript`` if it still describes a prefix of ``records``, else None."""
    try:
        data = index_path(transcript).read_bytes()
        size = transcript.stat().st_size
    except OSError:
        return None
    try:
        return _parse(data, size, session, records)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
        return None  # damaged or from another version: build it again


def _parse(
    data: bytes, size: int, session: str, records: Sequence[Mapping[str, Any]]
) -> TranscriptIndex | None:
    if not data.startswith(_MAGIC):
        return None
    end = data.index(b"\n", len(_MAGIC))
    head = json.loads(data[len(_MAGIC) : end])
    consumed = int(head["consumed"])
    valid = (
        head["session"] == session
        and head["byteorder"] == sys.byteorder
        and head["itemsize"] == array("i").itemsize
        and 0 < consumed <= len(records)
        and int(head["size"]) <= size  # a transcript only grows
        and head["first"] == _canonical(records[0])
        and head["last"] == _canonical(records[consumed - 1])
    )
    if not valid:
        return None
    ix = TranscriptIndex(session)
    for index, role, length in head["docs"]:
        rec = records[index] if index < consumed else None
        if not isinstance(length, int):
            return None
        text = ""  # a message left on disk is read back when a hit shows it
        if not isinstance(rec, LazyRecord):
            found = message_text(rec) if rec is not None else None
            if not found:
                return None
            text = found
        ix.docs.append(Doc(session, index, str(role), text))
        ix.lengths.append(length)
    ix.total = sum(ix.lengths)
    body = memoryview(data)[end + 1 :]
    if zlib.crc32(body) != head["crc"]:
        return None  # torn or damaged: the postings cannot be trusted
    flat = array("i")
    flat.frombytes(body)  # ValueError unless a whole number of items
    half = len(flat) // 2
    if 2 * half != len(flat):
        return None
    docs, tfs = flat[:half], flat[half:]
    at = 0
    for term, count in head["terms"]:
        if not isinstance(term, str) or not isinstance(count, int) or count <= 0:
            return None
        ix.postings[term] = (docs[at : at + count], tfs[at : at + count])
        at += count
    if at != half:
        return None
    ix.consumed = consumed
    ix.last = records[consumed - 1]
    return ix
