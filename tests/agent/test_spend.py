"""Run budgets (issue 36): durations, the goal + run combinator, grants, what is left."""

from __future__ import annotations

import pytest

from reasonix.agent.spend import RunBudget, combine, parse_duration
from reasonix.errors import UsageError
from reasonix.provider.types import Usage

PRICE = {"input": 1.0, "output": 2.0, "cache_read": 0.1, "currency": "USD"}


def test_durations() -> None:
    assert parse_duration("90s") == 90
    assert parse_duration("10m") == 600
    assert parse_duration("1h") == 3600
    assert parse_duration("45") == 45
    for bad in ("soon", "", "0s", "-5m", "nan", "infm", "inf"):
        with pytest.raises(UsageError):
            parse_duration(bad)


def test_combine_asks_each_and_passes_a_childs_tokens() -> None:
    seen: list[int] = []

    def run(extra_tokens: int = 0) -> str:
        seen.append(extra_tokens)
        return "tokens" if extra_tokens > 10 else ""

    def goal(extra_tokens: int = 0) -> str:
        return "slice"

    assert combine(None, None) is None
    assert combine(None, run) is run
    both = combine(run, goal)
    assert both is not None
    assert both(extra_tokens=20) == "tokens"  # the run's, asked first
    assert both(extra_tokens=1) == "slice"  # then the goal's
    assert both() == "slice"
    assert seen == [20, 1, 0]


def test_spent_by_cost_tokens_and_time() -> None:
    used = Usage(input_tokens=100_000, output_tokens=10_000)  # $0.12
    assert RunBudget(max_cost=0.2).spent(used, PRICE) == ""
    assert RunBudget(max_cost=0.12).spent(used, PRICE) == "cost"
    # a running sub-agent's tokens count, priced as output
    assert RunBudget(max_cost=0.2).spent(used, PRICE, extra_tokens=40_000) == "cost"
    assert RunBudget(max_tokens=110_001).spent(used, PRICE) == ""
    assert RunBudget(max_tokens=110_001).spent(used, None, extra_tokens=1) == "tokens"
    late = RunBudget(max_seconds=5, started=0.0)  # monotonic 0 is long past
    assert late.spent(used, PRICE) == "time"
    assert not RunBudget().active and RunBudget().spent(used, PRICE) == ""


def test_grant_gives_the_same_amount_again_and_remaining_shows_it() -> None:
    used = Usage(input_tokens=100_000, output_tokens=10_000)
    budget = RunBudget(max_cost=0.1, max_tokens=100_000)
    assert budget.spent(used, PRICE) == "cost"
    assert budget.remaining(used, PRICE) == "budget $0.00 · 0 tok left"
    budget.grant(used, PRICE)
    assert budget.spent(used, PRICE) == ""
    assert budget.max_cost == pytest.approx(0.22)
    assert budget.max_tokens == 210_000
    assert budget.remaining(used, PRICE) == "budget $0.10 · 100.0k tok left"
    more = Usage(input_tokens=300_000, output_tokens=10_000)
    budget.grant(more, PRICE)  # the first amount again, not the grown one
    assert budget.max_tokens == 410_000
