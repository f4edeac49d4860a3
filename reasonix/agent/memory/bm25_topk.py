"""Exact BM25 top-k for common words: impact-ordered postings and the Threshold Algorithm.

:class:`~reasonix.agent.memory.bm25.BM25Index` uses this when its cost model
says so, typically when every query term is frequent: MaxScore (in ``bm25``)
then walks two or more postings lists of tens of thousands of documents
before its bound prunes anything. Here each term's postings are ordered by
*impact* ``tf / (tf + k1·(1 − b + b·|d|/avgdl))``, the query-independent
factor of the term's contribution (a query multiplies it by
``qtf·idf·(k1 + 1)``), so one order serves every query.

The Threshold Algorithm (Fagin, Lotem and Naor) reads the lists in parallel,
best impact first, scores every newly seen document exactly by random access
into the per-term ``doc → tf`` maps, and stops once the k-th best exact score
beats the sum of the contributions at the read frontier, which bounds every
document not yet seen. With common words the top 10 are known after a few
hundred entries per list.

Sorting a whole list would cost more than the query, so a list is ordered
lazily in tiers: a sampled quantile picks a cut, one C-level ``map`` pass
collects the postings above it, and only those are sorted; the next tier is
collected when the frontier reaches the cut. Lists are cached per term until
the next :meth:`~BM25Index.add_tokens`, which changes avgdl and so every impact.
"""

from __future__ import annotations

import heapq
import math
from itertools import islice
from operator import truediv

# The first tier holds about this many postings; each further tier four times
# as many, so a deep query sorts O(log) tiers instead of one at a time.
_FIRST_TIER = 1024
_SAMPLE = 256
# Sorted access reads this many entries per term in the first round, doubling
# up to _MAX_BATCH: the stop test costs a heap peek and a sum per round.
_FIRST_BATCH = 32
_MAX_BATCH = 1024
# The frontier bound and the exact scores are rounded in different orders;
# this relative slack keeps the stop test safe against that last-bit noise.
_SLACK = 1e-9


class ImpactList:
    """One term's postings, revealed best impact first, tier by tier.

    Postings are ordered by ``norm/tf`` ascending, which is the impact order
    (impact = ``1/(1 + norm/tf)``) at a third of the arithmetic.
    """

    __slots__ = ("_done", "_norms", "_tfs", "docs", "ratios")

    def __init__(self, tfs: dict[int, int], norms: list[float]) -> None:
        self._tfs, self._norms = tfs, norms
        self._done = -1.0  # postings with ratio <= this are in the sorted prefix
        self.docs: list[int] = []  # sorted prefix, best impact first
        self.ratios: list[float] = []

    def exhausted(self) -> bool:
        """True once every posting is in the sorted prefix."""
        return len(self.docs) == len(self._tfs)

    def impact(self, i: int) -> float:
        """The impact of the ``i``-th posting of the sorted prefix."""
        return 1.0 / (1.0 + self.ratios[i])

    def extend(self) -> None:
        """Sort the next tier (about four times the current prefix) onto the prefix."""
        tfs, norms, done = self._tfs, self._norms, self._done
        want = max(_FIRST_TIER, 4 * len(self.docs))
        cut = math.inf
        if want < len(tfs) - len(self.docs):
            # the cut is a quantile of an evenly spaced sample of the unsorted rest
            step = max(1, len(tfs) // _SAMPLE)
            sample = (norms[d] / tfs[d] for d in islice(tfs, 0, None, step))
            rest = sorted(x for x in sample if x > done)
            if want // step < len(rest):
                cut = rest[want // step]
        chosen = self._tier(done, cut)
        if not chosen:  # ties at the sampled cut: take the whole remainder
            cut = math.inf
            chosen = self._tier(done, cut)
        chosen.sort()
        self.ratios.extend(r for r, _ in chosen)
        self.docs.extend(doc for _, doc in chosen)
        self._done = cut

    def _tier(self, low: float, high: float) -> list[tuple[float, int]]:
        """(ratio, doc) of the postings with low < ratio <= high, unordered.

        The ratios are recomputed by C-level ``map`` on every tier rather than
        kept: most queries need one tier, and the list would cost as much.
        """
        tfs = self._tfs
        ratios = map(truediv, map(self._norms.__getitem__, tfs), tfs.values())
        pairs = zip(ratios, tfs, strict=True)
        if low < 0.0:
            return [(r, d) for r, d in pairs if r <= high]
        return [(r, d) for r, d in pairs if r <= high and r > low]  # most fail the first test


def threshold_top_k(
    terms: list[tuple[dict[int, int], float, ImpactList]], norms: list[float], k: int
) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs, best first, ties by lower doc number.

    ``terms`` are ``(doc → tf, qtf·idf·(k1 + 1), impact list)`` in the order the
    exact score adds them up (the same order as MaxScore, so the floats agree).
    """
    heap: list[tuple[float, int]] = []  # (score, -doc): heap[0] is the current k-th best
    seen: set[int] = set()
    depth = 0
    batch = _FIRST_BATCH
    while True:
        bound = 0.0
        done = True
        for _, wk, lst in terms:
            end = depth + batch
            while len(lst.docs) < end and not lst.exhausted():
                lst.extend()
            new = [d for d in lst.docs[depth:end] if d not in seen]
            seen.update(new)
            for doc in new:
                score = 0.0
                for tfs, w, _ in terms:
                    tf = tfs.get(doc)
                    if tf:
                        score += w * tf / (tf + norms[doc])
                item = (score, -doc)
                if len(heap) < k:
                    heapq.heappush(heap, item)
                elif item > heap[0]:
                    heapq.heapreplace(heap, item)
            if len(lst.docs) > end or (len(lst.docs) == end and not lst.exhausted()):
                bound += wk * lst.impact(end - 1)  # no unread posting has a higher impact
                done = False
        if done or (len(heap) == k and heap[0][0] > bound * (1.0 + _SLACK)):
            break
        depth += batch
        batch = min(2 * batch, _MAX_BATCH)
    return [(-neg, score) for score, neg in sorted(heap, reverse=True)]
