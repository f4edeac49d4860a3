"""The memory catalog: a project store plus the global store, searched together.

Search is BM25 over each active fact's title and body. Two rules shape the
ranking (MEM-5, MEM-15): a fact's score is multiplied by a freshness factor
that depends on its type and age, and when a global fact is equivalent to a
project fact (same title or mostly the same words) the project one wins and
the global one is dropped — the project knows its own business best.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from reasonix.agent.memory.bm25 import BM25Index, tokenize
from reasonix.agent.memory.facts import Fact, FactError, FactStore, global_root, project_root
from reasonix.lazy import dataclass

__all__ = ["FRESHNESS_DAYS", "Memory", "Scored", "freshness", "similar"]

# type -> (fresh for, stale after) in days (MEM-15)
FRESHNESS_DAYS: dict[str, tuple[int, int]] = {
    "reference": (14, 45),
    "project": (30, 180),
    "user": (90, 365),
    "feedback": (90, 365),
}
_DAY = 86400.0


def freshness(fact: Fact, now: float) -> float:
    """1.0 while fresh, sliding to 0.5 at the stale age, 0.25 beyond it."""
    import calendar  # with datetime and locale: only ranking facts needs it, not import

    fresh, stale = FRESHNESS_DAYS.get(fact.type, (30, 180))
    try:
        updated = calendar.timegm(time.strptime(fact.updated_at, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return 1.0
    age = (now - updated) / _DAY
    if age <= fresh:
        return 1.0
    if age >= stale:
        return 0.25
    return 1.0 - 0.5 * (age - fresh) / (stale - fresh)


def similar(a: Fact, b: Fact) -> bool:
    """Whether two facts say the same thing (same title, or ≥ 60 % shared words)."""
    if a.title and a.title.strip().lower() == b.title.strip().lower():
        return True
    ta, tb = set(tokenize(a.text)), set(tokenize(b.text))
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) >= 0.6


@dataclass(frozen=True)
class Scored:
    """A search hit: the fact and its freshness-adjusted score."""

    fact: Fact
    score: float


class Memory:
    """Project and global fact stores behind one search/list/get surface."""

    def __init__(
        self,
        global_store: FactStore,
        project_store: FactStore | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.global_store = global_store
        self.project_store = project_store
        self.clock = clock

    @classmethod
    def for_workspace(cls, workspace: Path, *, clock: Callable[[], float] = time.time) -> Memory:
        """The stores under the state dir for ``workspace``."""
        return cls(
            FactStore(global_root(), "global", clock=clock),
            FactStore(project_root(workspace), "project", clock=clock),
            clock=clock,
        )

    def store(self, scope: str) -> FactStore:
        """The store of ``scope`` ("project" or "global")."""
        if scope == "global":
            return self.global_store
        if scope == "project" and self.project_store is not None:
            return self.project_store
        raise FactError(f"no {scope} memory store here")

    def stores(self, scope: str = "all") -> list[FactStore]:
        """Stores for ``scope`` ("all", "project" or "global"), project first."""
        if scope == "all":
            return [s for s in (self.project_store, self.global_store) if s is not None]
        return [self.store(scope)]

    def may_have_facts(self) -> bool:
        """False when no store holds a fact file (a cheap test before a search)."""
        return any(s.may_have_facts() for s in self.stores())

    def facts(self, scope: str = "all") -> list[Fact]:
        """Every active fact of ``scope``, project facts first."""
        return [f for s in self.stores(scope) for f in s.facts()]

    def find(self, fact_id: str) -> tuple[FactStore, Fact]:
        """The store holding active fact ``fact_id`` and the fact."""
        for s in self.stores():
            if s.exists(fact_id):
                return s, s.get(fact_id)
        raise FactError(f"no active fact {fact_id!r}")

    def search(self, query: str, *, scope: str = "all", limit: int = 10) -> list[Scored]:
        """Facts ranked by BM25 × freshness; global duplicates of project facts dropped."""
        facts = self.facts(scope)
        if not facts:
            return []
        index = BM25Index()
        for i, f in enumerate(facts):
            index.add(i, f.text)
        now = self.clock()
        hits = []
        for h in index.search(query, k=max(limit * 3, 20)):
            fact = facts[int(str(h.key))]
            hits.append(Scored(fact, h.score * freshness(fact, now)))
        # Project first on equal scores; the stable sort keeps BM25 order otherwise.
        hits.sort(key=lambda s: (-s.score, s.fact.scope != "project"))
        kept: list[Scored] = []
        project_facts = [f for f in facts if f.scope == "project"]
        for s in hits:
            if s.fact.scope == "global" and any(similar(s.fact, p) for p in project_facts):
                continue
            kept.append(s)
        return kept[:limit]

    def duplicate_of(self, content: str, title: str, scope: str) -> Fact | None:
        """An active fact of ``scope`` that says the same as ``content``/``title``, if any."""
        probe = Fact("probe", 1, "project", scope, title, content, "", "")
        for f in self.facts(scope):
            if f.content.strip() == content.strip() or similar(probe, f):
                return f
        return None
