"""BM25 top-k: MaxScore and the Threshold Algorithm against a brute-force scorer.

The reference scores every document straight from the formula, adding the
terms in the order the index documents (weight descending, first occurrence
on ties), so scores agree bit for bit and ties are broken the same way:
higher score first, then the earlier document.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.agent.memory import bm25_topk
from reasonix.agent.memory.bm25 import BM25Index

VOCAB = ["a", "b", "c", "d", "e", "f", "g", "h"]
words = st.sampled_from([*VOCAB, "zz"])  # "zz" never occurs in a document
documents = st.lists(st.lists(st.sampled_from(VOCAB), min_size=0, max_size=8), max_size=40)


def brute_force(docs: list[list[str]], query: list[str], k: int) -> list[tuple[int, float]]:
    """Every document scored by the formula; the k best by (-score, document number)."""
    n = len(docs)
    if n == 0 or k <= 0:
        return []
    k1, b = 1.2, 0.75
    avgdl = sum(map(len, docs)) / n or 1.0
    df = Counter(t for d in docs for t in set(d))
    weights = []
    for term, qtf in Counter(query).items():
        if df[term]:
            idf = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
            weights.append((term, qtf * idf))
    weights.sort(key=lambda tw: -tw[1])
    scored = []
    for i, d in enumerate(docs):
        tfs = Counter(d)
        norm = k1 * (1.0 - b) + k1 * b / avgdl * len(d)
        score, hit = 0.0, False
        for term, w in weights:
            if tfs[term]:
                score += w * (k1 + 1.0) * tfs[term] / (tfs[term] + norm)
                hit = True
        if hit:
            scored.append((i, score))
    scored.sort(key=lambda ds: (-ds[1], ds[0]))
    return scored[:k]


@contextmanager
def small_tiers() -> Iterator[None]:
    """Tiers and reads of a few postings, so small corpora take many rounds."""
    names = ("_FIRST_TIER", "_SAMPLE", "_FIRST_BATCH", "_MAX_BATCH")
    saved = [getattr(bm25_topk, name) for name in names]
    for name, value in zip(names, (2, 4, 1, 2), strict=True):
        setattr(bm25_topk, name, value)
    try:
        yield
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(bm25_topk, name, value)


def ranked(idx: BM25Index, query: list[str], k: int) -> dict[str, list[tuple[int, float]]]:
    """The top k by the automatic choice, by MaxScore and by the Threshold Algorithm."""
    with small_tiers():
        return {
            "search": [(int(str(h.key)), h.score) for h in idx.search(query, k=k)],
            "maxscore": idx._top(query, k, threshold=False),
            "threshold": idx._top(query, k, threshold=True),
        }


@settings(max_examples=300, deadline=None)
@given(docs=documents, query=st.lists(words, max_size=5), k=st.integers(0, 12))
def test_every_method_equals_brute_force(docs: list[list[str]], query: list[str], k: int) -> None:
    idx = BM25Index()
    for i, d in enumerate(docs):
        idx.add_tokens(i, d)
    expected = brute_force(docs, query, k)
    for method, got in ranked(idx, query, k).items():
        assert got == expected, method


@settings(max_examples=100, deadline=None)
@given(
    first=documents,
    more=documents,
    query=st.lists(words, min_size=1, max_size=4),
    k=st.integers(1, 12),
)
def test_adding_documents_after_a_search_invalidates_cached_impacts(
    first: list[list[str]], more: list[list[str]], query: list[str], k: int
) -> None:
    idx = BM25Index()
    for i, d in enumerate(first):
        idx.add_tokens(i, d)
    assert ranked(idx, query, k)["threshold"] == brute_force(first, query, k)
    for i, d in enumerate(more, start=len(first)):
        idx.add_tokens(i, d)
    for method, got in ranked(idx, query, k).items():
        assert got == brute_force(first + more, query, k), method


def test_identical_documents_tie_in_insertion_order_on_both_paths() -> None:
    idx = BM25Index()
    docs = [["x", "y"]] * 30 + [["x"]] * 30 + [["y", "y", "x"]] * 5
    for i, d in enumerate(docs):
        idx.add_tokens(i, d)
    for query in (["x"], ["x", "y"], ["y", "x", "x"]):
        for method, got in ranked(idx, query, 10).items():
            assert got == brute_force(docs, query, 10), (query, method)


def test_common_words_take_the_threshold_path_and_read_a_prefix() -> None:
    idx = BM25Index()
    rng = random.Random(7)
    weights_ = [1.0 / (r + 1) for r in range(len(VOCAB))]
    docs = [rng.choices(VOCAB, weights_, k=rng.randint(5, 60)) for _ in range(20_000)]
    for i, d in enumerate(docs):
        idx.add_tokens(i, d)
    query = ["a", "b", "c"]
    weights = idx._weights(query)
    assert all(len(idx._tf[t]) > 10_000 for t, _ in weights)
    assert idx._use_threshold(weights, 10)
    got = [(int(str(h.key)), h.score) for h in idx.search(query, k=10)]
    assert got == brute_force(docs, query, 10)
    ordered = [idx._impacts[t] for t, _ in weights]
    assert any(not lst.exhausted() for lst in ordered)  # stopped before the lists' ends
