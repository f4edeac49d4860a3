"""The ``history`` tool's search index, kept across searches (issue 38, MEM-1).

A transcript only ever grows, so each one gets a :class:`TranscriptIndex`
that remembers how many records it has consumed and, on the next search,
tokenises only the records appended since; a transcript that shrank or whose
last consumed record changed (another session under the same id, a file
rewritten) is indexed again from the start. The live session's index is
built by its first search (the ``history`` tool is read-only and rarely
called: no start-up or idle work is spent on it) and extended by later ones.

:func:`search` scores every transcript of a scope together, as one BM25
index over their messages in scope order would (:class:`~.bm25.BM25Index`):
``N``, ``df`` and the average length are summed over the transcripts, each
document's score adds the same terms in the same order with the same float
expressions, and ties go to the earlier document. The results are therefore
the old rebuild-per-search results exactly (a differential test holds them
equal); only the work differs.

Term counts come from :func:`term_counts`, which equals
``Counter(tokenize(text))`` but tokenises each distinct word once: the
text is cut into maximal runs of word or CJK characters (no token spans
two runs, and a run tokenises the same alone as in context), the runs are
counted at C speed, and each distinct run is tokenised by
:func:`~.bm25.tokenize` itself and cached. On source-like text that is
about 14 times faster than tokenising the whole text.
"""

from __future__ import annotations

import heapq
import math
import re
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from reasonix.agent.lazy_records import LazyRecord
from reasonix.agent.memory.bm25 import _CJK_RANGES, K1, B, tokenize

__all__ = ["Doc", "TranscriptIndex", "message_text", "search", "term_counts"]

# Bytes that may be part of a word in ASCII text; every other byte separates.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_ASCII_SPLIT = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))
_RUN_CACHE_MAX = 200_000  # distinct runs remembered (hashes and numbers would grow it forever)
_run_terms: dict[object, tuple[str, ...]] = {}


@cache
def _runs_re() -> re.Pattern[str]:
    """Maximal runs of characters a token can contain (compiled on first use)."""
    return re.compile(rf"[\w{_CJK_RANGES}]+")


def _tokenize_run(run: object, text: str) -> tuple[str, ...]:
    """The terms of one run, remembered (a cache miss of :func:`term_counts`)."""
    if len(_run_terms) >= _RUN_CACHE_MAX:
        _run_terms.clear()
    terms = _run_terms[run] = tuple(tokenize(text))
    return terms


def term_counts(text: str) -> tuple[dict[str, int], int]:
    """``(term → frequency, number of tokens)`` of ``text``, as :func:`tokenize` counts them."""
    counts: dict[str, int] = {}
    length = 0
    get, cached = counts.get, _run_terms.get
    runs: Counter[Any]
    if text.isascii():
        # In ASCII text the token pattern's matches are exactly the runs of
        # [A-Za-z0-9_]; bytes.translate + split finds them fastest.
        runs = Counter(text.encode("ascii").translate(_ASCII_SPLIT).split())
        ascii_runs = True
    else:
        runs = Counter(_runs_re().findall(text))
        ascii_runs = False
    for run, k in runs.items():
        terms = cached(run)
        if terms is None:
            terms = _tokenize_run(run, run.decode("ascii") if ascii_runs else run)
        for term in terms:
            counts[term] = get(term, 0) + k
        length += k * len(terms)
    return counts, length


def message_text(record: Mapping[str, Any]) -> str | None:
    """The searchable text of a ``message`` record (content and tool calls), else None."""
    if record.get("type") != "message":
        return None
    msg = record.get("message")
    if not isinstance(msg, Mapping):
        return None
    parts = [str(msg.get("content") or "")]
    for call in msg.get("tool_calls") or []:
        if isinstance(call, Mapping):
            parts.append(f"{call.get('name', '')} {call.get('arguments', '')}")
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Doc:
    """One searchable message: its session, record number, role and text."""

    session: str
    index: int
    role: str
    text: str


@dataclass
class TranscriptIndex:
    """An inverted index over one transcript's messages, extended as records arrive.

    Postings are two ``array('i')`` per term (documents, frequencies): about
    8 bytes a posting where ``(doc, tf)`` tuples would take ~60.
    """

    session: str
    docs: list[Doc] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    total: int = 0
    postings: dict[str, tuple[array[int], array[int]]] = field(default_factory=dict)
    consumed: int = 0  # records looked at so far
    last: Mapping[str, Any] | None = None  # the last of them, to notice a different transcript

    def current_for(self, records: Sequence[Mapping[str, Any]]) -> bool:
        """Whether ``records`` extend what this index has consumed (nothing rewritten)."""
        if len(records) < self.consumed:
            return False
        if not self.consumed:
            return True
        tail = records[self.consumed - 1]
        return tail is self.last or tail == self.last

    def extend(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Index the records appended since the last call (after :meth:`current_for`)."""
        postings = self.postings
        for i in range(self.consumed, len(records)):
            rec = records[i]
            text = message_text(rec)
            if not text:
                continue
            counts, length = term_counts(text)
            doc = len(self.docs)
            # A message a resumed session left on disk keeps its text there (a hit's
            # snippet reads it back): the index must not hold the transcript in memory.
            kept = "" if isinstance(rec, LazyRecord) else text
            self.docs.append(Doc(self.session, i, str(rec["message"].get("role", "")), kept))
            self.lengths.append(length)
            self.total += length
            for term, tf in counts.items():
                pair = postings.get(term)
                if pair is None:
                    postings[term] = (array("i", (doc,)), array("i", (tf,)))
                else:
                    pair[0].append(doc)
                    pair[1].append(tf)
        self.consumed = len(records)
        self.last = records[-1] if records else None


def search(indexes: Sequence[TranscriptIndex], query: str, k: int) -> list[Doc]:
    """The ``k`` best documents of ``indexes`` (in order, as one corpus) for ``query``.

    Exactly :meth:`BM25Index.search` over the concatenated documents: the same
    idf, norms and per-document sum order, ties to the earlier document.
    """
    n = sum(len(ix.docs) for ix in indexes)
    if n == 0 or k <= 0:
        return []
    weights: list[tuple[str, float]] = []
    for term, qtf in Counter(tokenize(query)).items():
        df = sum(len(ix.postings[term][0]) for ix in indexes if term in ix.postings)
        if df:
            weights.append((term, qtf * math.log(1.0 + (n - df + 0.5) / (df + 0.5))))
    weights.sort(key=lambda tw: -tw[1])
    if not weights:
        return []
    avgdl = sum(ix.total for ix in indexes) / n or 1.0
    c0 = K1 * (1.0 - B)
    c1 = K1 * B / avgdl
    acc: dict[int, float] = {}
    base = 0
    where: list[tuple[int, TranscriptIndex]] = []
    for ix in indexes:
        lengths = ix.lengths
        get = acc.get
        for term, weight in weights:
            pair = ix.postings.get(term)
            if pair is None:
                continue
            wk = weight * (K1 + 1.0)
            for doc, tf in zip(pair[0], pair[1], strict=True):
                g = base + doc
                acc[g] = get(g, 0.0) + wk * tf / (tf + (c0 + c1 * lengths[doc]))
        where.append((base, ix))
        base += len(ix.docs)
    best = heapq.nsmallest(k, acc.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for g, _ in best:
        for start, ix in reversed(where):
            if g >= start:
                out.append(ix.docs[g - start])
                break
    return out
