"""SUB-13, SUB-17, SUB-5: write claims on real paths, and the session scheduler."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest

from reasonix.agent.subagent.claims import WriteClaim, resolve_claim
from reasonix.agent.subagent.scheduler import Scheduler
from reasonix.agent.subagent.spec import SchedulerPolicy
from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, UsageError


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    (d / "src").mkdir(parents=True)
    (d / "docs").mkdir()
    return d


def test_claims_resolve_through_the_deepest_existing_ancestor(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "out"
    outside.mkdir()
    (ws / "src" / "link").symlink_to(outside)
    claim = resolve_claim(["src/"], ws)
    assert claim.paths == ((ws / "src").resolve(),) and not claim.whole
    assert claim.covers((ws / "src" / "new" / "a.py").resolve())
    assert not claim.covers((ws / "docs" / "x").resolve())
    assert not claim.covers(outside / "x")  # where src/link/x really lands
    with pytest.raises(UsageError, match="outside the workspace"):
        resolve_claim(["src/link/x"], ws)  # a claim cannot be laundered through a link
    with pytest.raises(UsageError, match="outside the workspace"):
        resolve_claim(["../elsewhere"], ws)
    with pytest.raises(UsageError):
        resolve_claim(["missing/../../x"], ws)  # '..' after a missing directory
    with pytest.raises(UsageError, match="empty"):
        resolve_claim([], ws)


def test_overlap_and_nesting(ws: Path) -> None:
    src, doc = resolve_claim(["src"], ws), resolve_claim(["docs/a.md"], ws)
    whole = resolve_claim(None, ws)
    assert not src.overlaps(doc) and whole.overlaps(src) and whole.overlaps(whole)
    assert resolve_claim(["src/a.py"], ws).overlaps(src)
    assert resolve_claim(["src/a.py"], ws).within(src) and not doc.within(src)
    assert src.within(whole) and not whole.within(src)
    assert whole.shown() == "the whole workspace" and doc.shown() == "docs/a.md"


def test_ten_children_never_exceed_six_or_three_writers(ws: Path) -> None:
    """Children hold their slots until the test lets them go, so the limits are
    reached by construction (not by how long a sleep overlaps under load)."""
    sched = Scheduler(SchedulerPolicy(6, 3))
    gate = threading.Event()
    seen = threading.Condition()
    inside: list[str] = []  # "w"/"r" per child now holding a slot
    ran: list[str] = []
    threads: list[threading.Thread] = []

    def child(claim: WriteClaim | None) -> None:
        with sched.slot(claim, (), Cancel()):
            with seen:
                inside.append("r" if claim is None else "w")
                ran.append(inside[-1])
                seen.notify_all()
            gate.wait()
            with seen:
                inside.remove("r" if claim is None else "w")

    def start(claims: list[WriteClaim | None], held: int) -> None:
        for c in claims:
            threads.append(threading.Thread(target=child, args=(c,)))
            threads[-1].start()
        with seen:
            assert seen.wait_for(lambda: len(inside) == held, 30), inside

    def refused(claim: WriteClaim | None) -> bool:
        """Whether one more child would have to wait (a cancelled one raises then)."""
        stop = Cancel()
        stop.cancel("probe")
        try:
            with sched.slot(claim, (), stop):
                return False
        except Cancelled:
            return True

    try:
        start([resolve_claim([f"src/f{n}.py"], ws) for n in range(5)], 3)
        assert sorted(inside) == ["w"] * 3 and refused(resolve_claim(["docs/x.md"], ws))
        assert not refused(None)  # a reader still fits: only the writers are full
        start([None] * 5, 6)
        assert sorted(inside) == ["r"] * 3 + ["w"] * 3 and refused(None)
    finally:
        gate.set()
    for t in threads:
        t.join()
    assert sorted(ran) == ["r"] * 5 + ["w"] * 5  # the queued four ran once slots freed
    assert sched.peak_running == 6 and sched.peak_writers == 3


def test_two_claimless_writers_never_overlap_in_time(ws: Path) -> None:
    sched = Scheduler(SchedulerPolicy(6, 3))
    spans: list[tuple[float, float]] = []

    def writer() -> None:
        with sched.slot(resolve_claim(None, ws), (), Cancel()):
            start = time.monotonic()
            time.sleep(0.05)
            spans.append((start, time.monotonic()))

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_a_nested_child_borrows_its_ancestors_slot(ws: Path) -> None:
    sched = Scheduler(SchedulerPolicy(1, 1))
    whole = resolve_claim(None, ws)
    with sched.slot(whole, (), Cancel()) as parent:
        # same lineage: no deadlock although the only slot and the whole workspace are held
        with sched.slot(resolve_claim(["src"], ws), (parent,), Cancel()):
            pass
        cancel = Cancel()
        cancel.cancel("stop")
        with pytest.raises(Cancelled), sched.slot(None, (), cancel):
            pass  # a top-level child waits for the slot; a cancel ends the wait
