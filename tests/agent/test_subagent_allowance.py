"""Issue 36: per-spawn budgets reserved from the parent's remaining, and the spawn cap.

The probes here are plain counters standing in for a child's telemetry (the
pool reads nothing else of a child); tests/boot/test_subagent_budgets.py runs
the same rules over real child runtimes and a loopback model server.
"""

from __future__ import annotations

import time

import pytest

from reasonix.agent.subagent.allowance import Allowance, Grant, Pool
from reasonix.errors import ToolError


class Spend:
    """A child's running totals (what its telemetry would say)."""

    def __init__(self) -> None:
        self.tokens, self.cost, self.turns = 0, 0.0, 0

    def probe(self) -> tuple[int, float | None, int]:
        return self.tokens, self.cost, self.turns


def started(pool: Pool, parent: Grant | None, ask: Allowance) -> tuple[Grant, Spend]:
    grant = pool.open(parent, ask)
    spend = Spend()
    grant.attach(spend.probe, priced=True)
    return grant, spend


def run_left(tokens: float | None, used: list[float]) -> tuple[float | None, None, None]:
    """A run budget of ``tokens`` with ``used[0]`` spent so far (the root's telemetry)."""
    return (None if tokens is None else tokens - used[0], None, None)


def test_a_call_cap_is_cut_to_what_the_run_has_left() -> None:
    used = [400.0]
    pool = Pool(Allowance(), 0, lambda: run_left(1000, used))
    grant, _ = started(pool, None, Allowance(tokens=100_000))
    assert grant.cap.tokens == 600  # never beyond the parent's remaining


def test_a_reservation_is_held_from_siblings_and_returned_at_the_end() -> None:
    used = [0.0]
    pool = Pool(Allowance(tokens=600), 0, lambda: run_left(1000, used))
    first, spend = started(pool, None, Allowance())
    assert first.cap.tokens == 600  # the [agent] default
    second, _ = started(pool, None, Allowance())
    assert second.cap.tokens == 400  # the first one's 600 is held
    with pytest.raises(ToolError, match="no tokens budget is left"):
        pool.open(None, Allowance())
    spend.tokens = 100  # the first spent 100 of its 600 and ends: its usage joins the run
    used[0] += 100
    pool.close(first)
    third, _ = started(pool, None, Allowance())
    assert third.cap.tokens == 500  # 1000 - 100 spent - 400 still held by the second


def test_a_child_stops_at_its_own_cap_and_an_uncapped_one_at_the_pool() -> None:
    used = [0.0]
    pool = Pool(Allowance(), 0, lambda: run_left(1000, used))
    capped, spend = started(pool, None, Allowance(tokens=300))
    shared, other = started(pool, None, Allowance())
    spend.tokens = 299
    assert capped.check() == ""
    spend.tokens = 300
    assert capped.check() == "tokens"
    other.tokens = 699  # the pool is 1000 less the 300 the capped one holds
    assert shared.check() == ""
    other.tokens = 700
    assert shared.check() == "tokens"


def test_uncapped_children_share_the_pool_live() -> None:
    used = [0.0]
    pool = Pool(Allowance(), 0, lambda: run_left(1000, used))
    a, sa = started(pool, None, Allowance())
    b, sb = started(pool, None, Allowance())
    sa.tokens, sb.tokens = 600, 399
    assert a.check() == "" and b.check() == ""
    sb.tokens = 400  # together they reached the run's 1000
    assert a.check() == "tokens" and b.check() == "tokens"


def test_a_nested_child_draws_from_its_parent_child_and_counts_there_after() -> None:
    pool = Pool(Allowance(), 0)  # no run budget: only the child's own cap
    parent, ps = started(pool, None, Allowance(tokens=1000))
    assert pool.open(parent, Allowance(tokens=5000)).cap.tokens == 1000  # cut to its parent's
    pool.close(pool.top[0].kids[0])
    nested, ns = started(pool, parent, Allowance(tokens=600))
    ps.tokens = 200
    ns.tokens = 500
    assert parent.check() == ""  # 1000 - 200 own - 600 held by the nested one
    ps.tokens = 400
    assert parent.check() == "tokens"  # what the nested one holds is not the parent's
    ps.tokens = 200
    pool.close(nested)  # its 500 now count against the parent's 1000 (with its own 200)
    assert parent.folded[0] == 500
    ps.tokens = 499
    assert parent.check() == ""
    ps.tokens = 500
    assert parent.check() == "tokens"


def test_turns_and_time_are_per_child() -> None:
    pool = Pool(Allowance(turns=2), 0, lambda: (None, None, time.monotonic() + 60))
    grant, spend = started(pool, None, Allowance())
    spend.turns = 1
    assert grant.check() == ""
    spend.turns = 2
    assert grant.check() == "turns"
    late = pool.open(None, Allowance(seconds=0.01))
    late.attach(Spend().probe, priced=True)
    time.sleep(0.02)
    assert late.check() == "time"
    assert grant.deadline is not None and late.deadline is not None
    assert late.deadline < grant.deadline  # its own 0.01 s, not the run's 60


def test_the_session_spawn_cap_refuses_the_next_spawn() -> None:
    pool = Pool(Allowance(), 2)
    for _ in range(2):
        pool.close(pool.open(None, Allowance()))  # ended ones count too
    with pytest.raises(ToolError, match=r"max_subagent_spawns allows \(2\)"):
        pool.open(None, Allowance())


def test_a_cost_budget_over_an_unpriced_child_model_is_refused() -> None:
    pool = Pool(Allowance(cost=0.5), 0)
    grant = pool.open(None, Allowance())
    with pytest.raises(ToolError, match="has no price"):
        grant.attach(Spend().probe, priced=False)
    tokens_only = Pool(Allowance(tokens=100), 0).open(None, Allowance())
    tokens_only.attach(Spend().probe, priced=False)  # nothing counts cost: fine
