"""A fleet is a small dependency graph (spec §3.14, SUB-21…24, D7).

Items declare ``id`` and ``depends_on`` only — no conditions, expressions or
dynamic fan-out. Ids default to the 1-based position. :func:`preflight`
rejects duplicate ids, unknown ids, self-edges and cycles, and requires
disjoint explicit write claims only for items that may run at the same time
(an edge orders two items, so they may share paths); a failing fleet never
starts. :func:`run_fleet` starts an item as soon as its dependencies
complete, on the session scheduler; a failed or skipped item skips its whole
downstream branch; ``fail_fast`` stops starting new items and lets running
ones finish. Dependencies stay in the plan and never enter the
``ProfileExecSpec`` (SUB-22); a dependent item gets only its own task text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from reasonix.errors import ReasonixError, ToolError
from reasonix.lazy import dataclass

from .claims import WriteClaim
from .spec import ProfileExecSpec

__all__ = ["FleetItem", "FleetPlan", "ItemResult", "preflight", "run_fleet", "summary"]


@dataclass(frozen=True)
class FleetItem:
    """One node: its id, the compiled spec, what it waits for and its claim (writers)."""

    id: str
    spec: ProfileExecSpec
    depends_on: tuple[str, ...] = ()
    claim: WriteClaim | None = None  # resolved for the disjointness check; None = reader


@dataclass(frozen=True)
class FleetPlan:
    """The graph and its one failure switch."""

    items: tuple[FleetItem, ...]
    fail_fast: bool = False


@dataclass
class ItemResult:
    """How one item ended: ``complete`` | ``failed`` | ``skipped`` | ``not started``."""

    id: str
    state: str
    text: str = ""
    why: str = ""
    outcome: object = None


def _ancestors(plan: FleetPlan) -> dict[str, set[str]]:
    deps = {i.id: set(i.depends_on) for i in plan.items}
    memo: dict[str, set[str]] = {}

    def up(node: str) -> set[str]:
        if node not in memo:
            memo[node] = set()
            for d in deps[node]:
                memo[node] |= {d} | up(d)
        return memo[node]

    return {n: up(n) for n in deps}


def _cycle(plan: FleetPlan) -> list[str]:
    deps = {i.id: list(i.depends_on) for i in plan.items}
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        trail.append(node)
        for nxt in deps[node]:
            if state.get(nxt) == 1:
                return [*trail[trail.index(nxt) :], nxt]
            if state.get(nxt) is None and (found := visit(nxt)):
                return found
        trail.pop()
        state[node] = 2
        return []

    for node in deps:
        if node not in state and (found := visit(node)):
            return found
    return []


def preflight(plan: FleetPlan) -> None:
    """Raise ToolError listing every problem; return when the fleet may start."""
    problems: list[str] = []
    ids = [i.id for i in plan.items]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"duplicate id(s): {', '.join(dupes)}")
    known = set(ids)
    for item in plan.items:
        if item.id in item.depends_on:
            problems.append(f"{item.id} depends on itself")
        unknown = [d for d in item.depends_on if d not in known]
        if unknown:
            problems.append(f"{item.id} depends on unknown id(s): {', '.join(unknown)}")
    if not problems:
        cycle = _cycle(plan)
        if cycle:
            problems.append("cycle: " + " -> ".join(cycle))
    if not problems:
        up = _ancestors(plan)
        items = list(plan.items)
        for n, a in enumerate(items):
            for b in items[n + 1 :]:
                if a.id in up[b.id] or b.id in up[a.id]:
                    continue  # ordered by an edge: they never run together (SUB-23)
                ca, cb = a.claim, b.claim
                if ca is None or cb is None or ca.whole or cb.whole:
                    continue  # readers; whole-workspace writers queue in the scheduler
                if ca.overlaps(cb):
                    problems.append(
                        f"{a.id} and {b.id} may run at the same time but their write_paths "
                        f"overlap ({ca.shown()} / {cb.shown()}); make them disjoint or order "
                        "them with depends_on"
                    )
    if problems:
        raise ToolError("fleet preflight failed, nothing was started: " + "; ".join(problems))


def run_fleet(
    plan: FleetPlan, run_item: Callable[[FleetItem], tuple[bool, str, object]]
) -> list[ItemResult]:
    """Run a checked plan; ``run_item`` returns (complete?, text, outcome) for one item.

    Items whose dependencies completed start at once, each on its own thread
    (the scheduler inside ``run_item`` bounds how many really run).
    """
    results = {i.id: ItemResult(i.id, "pending") for i in plan.items}
    lock = threading.Condition()
    running: set[str] = set()
    stop = [False]

    def work(item: FleetItem) -> None:
        try:
            ok, text, outcome = run_item(item)
            state, why = ("complete" if ok else "failed"), ""
        except ReasonixError as err:  # a refused spawn is a failed item, not a crash
            ok, text, outcome, state, why = False, "", None, "failed", str(err)
        with lock:
            results[item.id] = ItemResult(item.id, state, text, why, outcome)
            running.discard(item.id)
            if not ok and plan.fail_fast:
                stop[0] = True
            lock.notify_all()

    threads: list[threading.Thread] = []
    with lock:
        while True:
            _settle(plan, results, stop[0])
            ready = [
                i
                for i in plan.items
                if results[i.id].state == "pending"
                and all(results[d].state == "complete" for d in i.depends_on)
            ]
            for item in ready:
                results[item.id].state = "running"
                running.add(item.id)
                t = threading.Thread(target=work, args=(item,), daemon=True)
                threads.append(t)
                t.start()
            if not running and not any(r.state == "pending" for r in results.values()):
                break
            lock.wait(0.1)
    for t in threads:
        t.join()
    return [results[i.id] for i in plan.items]


def _settle(plan: FleetPlan, results: dict[str, ItemResult], stopped: bool) -> None:
    """Mark what can no longer run: downstream of a failure, or everything after fail_fast."""
    changed = True
    while changed:
        changed = False
        for item in plan.items:
            res = results[item.id]
            if res.state != "pending":
                continue
            bad = [d for d in item.depends_on if results[d].state in ("failed", "skipped",
                                                                       "not started")]  # fmt: skip
            if bad:
                res.state, res.why = "skipped", f"{', '.join(bad)} did not complete"
                changed = True
            elif stopped:
                res.state, res.why = "not started", "fail_fast: an item failed"
                changed = True


def summary(results: Sequence[ItemResult]) -> str:
    """The fleet's tool result: a status table, then each item's own result."""
    done = sum(r.state == "complete" for r in results)
    head = [f"fleet: {done}/{len(results)} items complete"]
    head += [f"- {r.id}: {r.state}" + (f" ({r.why})" if r.why else "") for r in results]
    body = [f"\n=== {r.id} ===\n{r.text}" for r in results if r.text]
    return "\n".join(head + body)
