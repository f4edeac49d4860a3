"""Hand-written Okapi BM25 over an inverted index (MEM-2, D23).

Used by the ``history`` tool, the ``memory`` tool and auto-recall. The index
keeps, per term, a postings list of ``(document, term frequency)``; a query
only touches the postings of its own terms, which is why it is much faster
than scoring every document (see ``bench/bm25.py``). Top-k search prunes
with MaxScore, or, when every query term is common, with the Threshold
Algorithm over impact-ordered postings (:mod:`.bm25_topk`); both return the
exact ranking.

Scoring, with k1 = 1.2 and b = 0.75::

    idf(t)      = ln(1 + (N − df + 0.5) / (df + 0.5))
    score(d, q) = Σ_{t ∈ q} idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl))

This idf is the always-positive (Lucene) form: the classic
``ln((N − df + 0.5)/(df + 0.5))`` goes negative for terms in more than half
the documents, which would make a common query word *lower* a document's
score. Query terms are counted with repetition, as ``rank_bm25`` does.

Tokenisation (:func:`tokenize`): lower-cased words; code identifiers are kept
whole *and* split into their snake_case / camelCase parts, so
``parseJsonValue`` matches ``parse``, ``json`` and ``parseJsonValue``; runs
of CJK characters become overlapping character bigrams (a lone character
stays a unigram), which needs no dictionary and matches any shared
two-character word.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

from reasonix.agent.memory.bm25_topk import ImpactList, threshold_top_k
from reasonix.lazy import dataclass

__all__ = ["K1", "STOP_WORDS", "B", "BM25Index", "Hit", "content_terms", "tokenize"]

K1 = 1.2
B = 0.75

_CJK_RANGES = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # compatibility ideographs
)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The token and identifier-part patterns, compiled on first use (not at import).

    A token is a CJK run or an identifier-ish run of letters/digits/underscores;
    the parts of an identifier: ABBRWord → ABBR + Word, camelCase → camel + Case,
    digits apart.
    """
    token = re.compile(rf"([{_CJK_RANGES}]+)|([^\W{_CJK_RANGES}]+)")
    part = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
    return token, part


STOP_WORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "let",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "please",
        "should",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "up",
        "us",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yes",
        "ok",
        "okay",
        "continue",
        "go",
        "on",
        "again",
        "more",
        "next",
        "now",
        "thanks",
        "thank",
        "hi",
        "hello",
        "请",
        "继续",
        "好的",
        "谢谢",
        "你好",
        "然后",
        "一下",
    )
)


def tokenize(text: str) -> list[str]:
    """Index terms of ``text`` (see module docstring)."""
    out: list[str] = []
    token_re, part_re = _patterns()
    for m in token_re.finditer(text):
        cjk, word = m.group(1), m.group(2)
        if cjk:
            if len(cjk) == 1:
                out.append(cjk)
            else:
                out.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
            continue
        whole = word.lower().strip("_")
        parts = [p.lower() for p in part_re.findall(word)]
        if whole:
            out.append(whole)
        if len(parts) > 1:
            out.extend(parts)  # the whole identifier and its parts are both searchable
    return out


def content_terms(text: str) -> list[str]:
    """Distinct query terms that are not stop words (D23's "generic" test counts these)."""
    seen: list[str] = []
    for t in tokenize(text):
        if t not in STOP_WORDS and t not in seen:
            seen.append(t)
    return seen


@dataclass(frozen=True)
class Hit:
    """One search result: the caller's document key and its BM25 score."""

    key: Hashable
    score: float


class BM25Index:
    """An incremental inverted index; :meth:`add` documents, :meth:`search` them."""

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self._keys: list[Hashable] = []
        self._lengths: list[int] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._tf: dict[str, dict[int, int]] = {}  # the same postings, for random access
        self._total_length = 0
        self._norm_cache: list[float] | None = None
        self._impacts: dict[str, ImpactList] = {}  # lazily, per term, until the next add

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: Hashable, text: str) -> None:
        """Index ``text`` under ``key`` (keys need not be unique; each add is a document)."""
        self.add_tokens(key, tokenize(text))

    def add_tokens(self, key: Hashable, tokens: Sequence[str]) -> None:
        """Index an already-tokenised document."""
        doc = len(self._keys)
        self._keys.append(key)
        self._lengths.append(len(tokens))
        self._total_length += len(tokens)
        self._norm_cache = None  # avgdl changed
        self._impacts = {}  # and with it every impact
        for term, tf in Counter(tokens).items():
            self._postings.setdefault(term, []).append((doc, tf))
            self._tf.setdefault(term, {})[doc] = tf

    def idf(self, term: str) -> float:
        """``ln(1 + (N − df + 0.5)/(df + 0.5))``; 0 for an unknown term."""
        df = len(self._postings.get(term, ()))
        if df == 0:
            return 0.0
        n = len(self._keys)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _norms(self) -> list[float]:
        """Per-document ``k1·(1 − b + b·|d|/avgdl)``, cached until the next add."""
        if self._norm_cache is None:
            n = len(self._keys)
            avgdl = self._total_length / n or 1.0
            c0 = self.k1 * (1.0 - self.b)
            c1 = self.k1 * self.b / avgdl
            self._norm_cache = [c0 + c1 * length for length in self._lengths]
        return self._norm_cache

    def _weights(self, query_tokens: Iterable[str]) -> list[tuple[str, float]]:
        """(term, qtf × idf) for the query terms the index knows, highest weight first."""
        out = []
        for term, qtf in Counter(query_tokens).items():
            if term in self._postings:
                out.append((term, qtf * self.idf(term)))
        out.sort(key=lambda tw: -tw[1])
        return out

    def scores(self, query_tokens: Iterable[str]) -> dict[int, float]:
        """Document number → exact score, for every document sharing a query term."""
        return self._accumulate(self._weights(query_tokens), k=0)

    def _accumulate(self, weights: list[tuple[str, float]], k: int) -> dict[int, float]:
        n = len(self._keys)
        if n == 0 or not weights:
            return {}
        k1 = self.k1
        norms = self._norms()
        # MaxScore: a term adds at most weight × (k1 + 1). Once the k-th best
        # score so far beats everything the remaining terms could add, no
        # unseen document can enter the top k, so the remaining terms only
        # update documents already scored (by random access) — the long
        # postings of common words are never walked. With k = 0 every
        # document is scored.
        bounds = [w * (k1 + 1.0) for _, w in weights]
        rest = [sum(bounds[i:]) for i in range(len(bounds))]
        acc: dict[int, float] = {}
        for i, (term, weight) in enumerate(weights):
            wk = weight * (k1 + 1.0)
            if k and len(acc) >= k and heapq.nlargest(k, acc.values())[-1] > rest[i]:
                tfs = self._tf[term]
                for doc in acc:
                    tf = tfs.get(doc)
                    if tf:
                        acc[doc] += wk * tf / (tf + norms[doc])
                continue
            postings = self._postings[term]
            if not acc:  # first term: a comprehension is much cheaper than get/set
                acc = {doc: wk * tf / (tf + norms[doc]) for doc, tf in postings}
                continue
            get = acc.get
            for doc, tf in postings:
                acc[doc] = get(doc, 0.0) + wk * tf / (tf + norms[doc])
        return acc

    def search(self, query: str | Sequence[str], k: int = 10) -> list[Hit]:
        """The ``k`` best documents for ``query`` (text or tokens), best first.

        Ties keep insertion order (earlier documents first) so results are stable.
        """
        tokens = tokenize(query) if isinstance(query, str) else list(query)
        return [Hit(self._keys[doc], score) for doc, score in self._top(tokens, k)]

    def _top(
        self, tokens: Iterable[str], k: int, threshold: bool | None = None
    ) -> list[tuple[int, float]]:
        """(doc, score) of the ``k`` best, by the cheaper method unless ``threshold`` says."""
        weights = self._weights(tokens)
        if k <= 0 or not weights:
            return []
        if threshold is None:
            threshold = self._use_threshold(weights, k)
        if threshold:
            return self._threshold(weights, k)
        acc = self._accumulate(weights, k=k)
        if len(acc) > k:  # a key-less pass finds the k-th score; only ties with it are sorted
            kth = heapq.nlargest(k, acc.values())[-1]
            items = [kv for kv in acc.items() if kv[1] >= kth]
        else:
            items = list(acc.items())
        items.sort(key=lambda kv: (-kv[1], kv[0]))
        return items[:k]

    def _use_threshold(self, weights: list[tuple[str, float]], k: int) -> bool:
        """Whether the Threshold Algorithm should beat MaxScore for these terms.

        A rough cost model in units of one posting walked by MaxScore. MaxScore
        walks terms, heaviest first, until the k-th best score (guessed as 60 %
        of the walked terms' bounds) beats what the rest could add, then looks
        every scored document up in each remaining term, and ranks them
        (``nlargest`` per term, ``nsmallest`` at the end). The Threshold
        Algorithm first computes the impacts of the terms it has not ordered
        yet (about half a unit a posting, C-level ``map``) and then reads a
        few hundred entries per term, scoring each new document by a look-up
        per term (hence n²).
        """
        n = len(self._keys)
        dfs = [len(self._tf[term]) for term, _ in weights]
        bounds = [w for _, w in weights]  # proportional to the bounds: (k1 + 1) cancels
        maxscore = 0.0
        scored = 0
        for i, df in enumerate(dfs):
            if scored >= k and 0.6 * sum(bounds[:i]) > sum(bounds[i:]):
                maxscore += scored
            else:
                maxscore += df
                scored = min(n, scored + df)
        maxscore += 0.3 * scored * (len(dfs) + 1)
        unordered = sum(len(self._tf[t]) for t, _ in weights if t not in self._impacts)
        return 0.5 * unordered + 1500 * len(dfs) ** 2 < maxscore

    def _threshold(self, weights: list[tuple[str, float]], k: int) -> list[tuple[int, float]]:
        """The Threshold Algorithm's top k; impact lists are built on first need."""
        norms = self._norms()
        terms = []
        for term, weight in weights:
            lst = self._impacts.get(term)
            if lst is None:
                lst = self._impacts[term] = ImpactList(self._tf[term], norms)
            terms.append((self._tf[term], weight * (self.k1 + 1.0), lst))
        return threshold_top_k(terms, norms, k)
