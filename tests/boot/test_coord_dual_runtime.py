"""The Coordinator inside a live runtime: the interactive approval boundary, a cancel
while planning (rolled back), and the runtime's wiring rules (COORD-1)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from coord_kit import EXEC, PLAN, PLAN_TEXT, project, research
from fakes import FakeServer, Turn

from reasonix.agent.coordinator import Coordinator
from reasonix.agent.events import ApprovalRequested, Done, Event, Phase, StepStart
from reasonix.agent.session import read_records
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.errors import ConfigError
from reasonix.permission import ApprovalChoice


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


@pytest.mark.parametrize("answer", [ApprovalChoice.ONCE, ApprovalChoice.DENY])
def test_plan_for_approval_asks_through_the_runner_stream(ws: Path, answer: ApprovalChoice) -> None:
    with FakeServer("openai", [Turn.text_only(PLAN_TEXT), Turn.text_only("ran")]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True, yolo=True))
        try:
            assert isinstance(rt.coordinator, Coordinator)
            events: list[Event] = []
            for event in rt.runner.run("/plan-approve fix add()", Cancel()):
                if isinstance(event, ApprovalRequested):
                    event.answer(answer)  # YOLO did not answer it: a human must
                events.append(event)
            models = [r.json["model"] for r in srv.requests]
        finally:
            rt.close()
    asks = [e for e in events if isinstance(e, ApprovalRequested)]
    assert len(asks) == 1 and asks[0].request.tool_name == "plan" and asks[0].request.fresh
    assert "calc.py:2" in asks[0].request.detail
    done = events[-1]
    assert isinstance(done, Done)
    if answer is ApprovalChoice.ONCE:
        assert models == [PLAN, EXEC] and done.result == "ran"
    else:
        assert models == [PLAN] and done.reason == "awaiting_approval"


def test_a_cancel_while_planning_rolls_the_planner_turn_back(ws: Path) -> None:
    slow = Turn.text_only("never finished", delay=0.2)
    with FakeServer(
        "openai", [*research(1), slow, Turn.text_only(PLAN_TEXT), Turn.text_only("x")]
    ) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            cancel = Cancel()
            events: list[Event] = []
            for event in rt.runner.run("/plan fix add()", cancel):
                events.append(event)
                if isinstance(event, StepStart) and event.step == 2:
                    threading.Timer(0.3, cancel.cancel, ("test",)).start()
            done = events[-1]
            assert isinstance(done, Done) and done.reason == "cancelled"
            planner = rt.coordinator.planner.sessions.get()
            assert planner.messages() == []  # nothing of the broken turn is kept
            turns = [r for r in planner.records() if r.get("type") == "planner_turn"]
            assert turns[-1]["status"] == "rolled_back" and turns[-1]["reason"] == "cancelled"
            # the next planner turn starts clean from the committed state
            again = list(rt.runner.run("/plan fix add()", Cancel()))
            assert isinstance(again[-1], Done) and again[-1].result == "x"
        finally:
            rt.close()
        bodies = [r.json for r in srv.requests]
    assert [b["model"] for b in bodies] == [PLAN, PLAN, PLAN, EXEC]
    assert len(bodies[2]["messages"]) == 2  # system + the new user turn only
    records = read_records(rt.session.path)
    assert not [r for r in records if r["type"] == "message" and "never" in str(r)]


def test_the_coordinator_exists_only_for_a_different_planner_model(ws: Path) -> None:
    with FakeServer("openai", []) as srv:
        project(ws, srv.url, planner=False)
        for agent, expected in (("", None), (f'planner_model = "fake/{EXEC}"', None)):
            project(ws, srv.url, planner=False, agent=agent)
            rt = build_runtime(RuntimeOptions(workspace=ws))
            try:
                assert rt.coordinator is expected and rt.arm == "single"
            finally:
                rt.close()
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, ablate="planner"))
        try:
            assert rt.coordinator is None and rt.arm == "ablated"
        finally:
            rt.close()
        project(ws, srv.url, planner=False, agent='planner_model = "nosuch/model x"')
        with pytest.raises(ConfigError, match="planner_model"):
            build_runtime(RuntimeOptions(workspace=ws))


def test_routing_phases_name_codes_never_the_text(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("hi")]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            events = list(rt.runner.run("SECRET-7 explain plan files", Cancel()))
        finally:
            rt.close()
    phases = [e for e in events if isinstance(e, Phase)]
    assert phases and all("SECRET" not in repr(p) for p in phases)
    assert (phases[0].route, phases[0].reason) == ("executor", "default")
