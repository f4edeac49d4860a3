"""SUB-21…24, D7: the fleet graph — preflight, ordering, concurrency, failure."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from reasonix.agent.subagent.claims import resolve_claim
from reasonix.agent.subagent.fleet import FleetItem, FleetPlan, preflight, run_fleet, summary
from reasonix.agent.subagent.spec import CapabilityGrant, ContextRequest, ProfileExecSpec, TaskSpec
from reasonix.errors import ToolError


def _item(ident: str, deps: tuple[str, ...] = (), claim: object = None) -> FleetItem:
    spec = ProfileExecSpec(None, TaskSpec(f"do {ident}"), CapabilityGrant(), ContextRequest(),
                           "fleet")  # fmt: skip
    return FleetItem(ident, spec, deps, claim)  # type: ignore[arg-type]


EXAMPLE = (
    _item("research"),
    _item("backend", ("research",)),
    _item("frontend", ("research",)),
    _item("integration", ("backend", "frontend")),
    _item("review", ("integration",)),
)


@pytest.mark.parametrize(
    ("items", "needle"),
    [
        ((_item("a"), _item("a")), "duplicate id(s): a"),
        ((_item("a", ("ghost",)), _item("b")), "unknown id(s): ghost"),
        ((_item("a", ("a",)), _item("b")), "a depends on itself"),
        ((_item("a", ("b",)), _item("b", ("c",)), _item("c", ("a",))), "cycle: "),
    ],
)
def test_preflight_rejects_bad_graphs(items: tuple[FleetItem, ...], needle: str) -> None:
    ran: list[str] = []
    plan = FleetPlan(items)
    with pytest.raises(ToolError, match="nothing was started") as info:
        preflight(plan)
        run_fleet(plan, lambda item: (ran.append(item.id), (True, "", None))[1])
    assert needle in str(info.value) and ran == []


def test_disjointness_only_for_items_that_may_run_together(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    shared = resolve_claim(["src"], ws)
    ordered = FleetPlan((_item("implement", (), shared), _item("review", ("implement",), shared)))
    preflight(ordered)  # an edge orders them: sharing is fine (SUB-23)
    parallel = FleetPlan((_item("a", (), shared), _item("b", (), resolve_claim(["src/x"], ws))))
    with pytest.raises(ToolError, match="overlap"):
        preflight(parallel)
    whole = FleetPlan((_item("a", (), resolve_claim(None, ws)), _item("b", (), shared)))
    preflight(whole)  # a whole-workspace writer queues in the scheduler instead


def _timed(fail: set[str], delay: float = 0.1):  # type: ignore[no-untyped-def]
    spans: dict[str, tuple[float, float]] = {}
    lock = threading.Lock()

    def run_item(item: FleetItem) -> tuple[bool, str, object]:
        start = time.monotonic()
        time.sleep(delay)
        with lock:
            spans[item.id] = (start, time.monotonic())
        assert item.spec.task.prompt == f"do {item.id}"  # only its own text (D7)
        return item.id not in fail, f"result of {item.id}", None

    return spans, run_item


def test_the_example_runs_branches_together_and_the_rest_in_order() -> None:
    spans, run_item = _timed(set())
    results = run_fleet(FleetPlan(EXAMPLE), run_item)
    assert [r.state for r in results] == ["complete"] * 5
    back, front = spans["backend"], spans["frontend"]
    assert back[0] < front[1] and front[0] < back[1]  # they overlap in time
    assert spans["research"][1] <= min(back[0], front[0])
    assert max(back[1], front[1]) <= spans["integration"][0]
    assert spans["integration"][1] <= spans["review"][0]
    assert summary(results).startswith("fleet: 5/5 items complete")


def test_a_failure_skips_its_downstream_branch_only() -> None:
    spans, run_item = _timed({"backend"})
    states = {r.id: r.state for r in run_fleet(FleetPlan(EXAMPLE), run_item)}
    assert states == {"research": "complete", "backend": "failed", "frontend": "complete",
                      "integration": "skipped", "review": "skipped"}  # fmt: skip
    assert "integration" not in spans and "frontend" in spans


def test_fail_fast_starts_nothing_new_but_lets_running_items_finish() -> None:
    items = (
        _item("quick"),
        _item("slow"),
        _item("after_quick", ("quick",)),
        _item("late", ("slow",)),
    )
    spans: dict[str, float] = {}

    def run_item(item: FleetItem) -> tuple[bool, str, object]:
        time.sleep(0.3 if item.id == "slow" else 0.02)
        spans[item.id] = time.monotonic()
        return item.id != "quick", "", None

    states = {r.id: r.state for r in run_fleet(FleetPlan(items, fail_fast=True), run_item)}
    assert states == {"quick": "failed", "slow": "complete", "after_quick": "skipped",
                      "late": "not started"}  # fmt: skip
    without = {r.id: r.state for r in run_fleet(FleetPlan(items), run_item)}
    assert without["late"] == "complete"  # independent branches continue by default
