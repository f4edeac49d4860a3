"""Goal (D28, PERM-17…21): the host keeps going until complete, blocked, stopped or a budget.

No default limit of any kind: a 50-round goal runs to the end without a
pause. A configured token budget pauses it resumably, and resuming keeps the
statistics. Exact repeats are not progress; stalls re-plan, never pause.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from coord_kit import EXEC, bodies, project
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.events import Done, Event, Phase, ToolEnd
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.cli.main import main

USAGE = {
    "input_tokens": 300,
    "output_tokens": 50,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
}


def complete(i: int = 0) -> Turn:
    args = json.dumps({"status": "complete", "summary": "all done"})
    return Turn.tools([ToolSpec("update_goal", args, id=f"done{i}")], usage=USAGE)


def read(path: str, i: int) -> Turn:
    return Turn.tools([ToolSpec("read_file", json.dumps({"path": path}), id=f"c{i}")], usage=USAGE)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


def events_of(rt: Any, text: str) -> list[Event]:
    return list(rt.runner.run(text, Cancel()))


def goal_stats(events: list[Event]) -> dict[str, float]:
    return next(e.stats for e in reversed(events) if isinstance(e, Phase) and e.stats)


def test_a_fifty_round_goal_runs_to_completion_without_a_pause(ws: Path) -> None:
    script: list[Turn] = []
    for i in range(50):
        script += [read(f"f{i}.txt", i), Turn.text_only(f"step {i} done", usage=USAGE)]
    script.append(complete())
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        for i in range(50):
            (ws / f"f{i}.txt").write_text(f"fact {i}\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, goal="read every fact file"))
        try:
            events = events_of(rt, "")
            assert rt.host.goals.goal is not None
            final = rt.host.goals.goal
        finally:
            rt.close()
        n = len(srv.requests)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "complete", done
    assert n == 101 and not srv.remaining
    assert final.status == "complete" and final.stats.turns == 51
    assert final.stats.evidence == 50 and final.stats.repeats == 0 and final.stats.replans == 0
    assert not [e for e in events if isinstance(e, Phase) and e.status == "paused"]
    assert final.stats.tokens == 101 * 350


def test_a_token_budget_pauses_and_resume_keeps_the_statistics(ws: Path) -> None:
    script = [
        read("a.txt", 0), Turn.text_only("one", usage=USAGE),  # 700 tokens: go on
        read("b.txt", 1),  # 1050 >= 1000: no further request in this turn, pause
        Turn.text_only("two", usage=USAGE), complete(),         # after /goal resume
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False, agent="goal_token_budget = 1000")
        (ws / "a.txt").write_text("a\n")
        (ws / "b.txt").write_text("b\n")
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            first = events_of(rt, "/goal read both files")
            paused = first[-1]
            assert isinstance(paused, Done) and paused.reason == "goal_paused", paused
            goal = rt.host.goals.goal
            assert goal is not None and goal.status == "paused"
            assert goal.reason == "budget_spend:tokens" and goal.stats.tokens == 1050
            assert len(srv.requests) == 3
            status = events_of(rt, "/goal status")
            assert len(srv.requests) == 3 and "paused" in str(status[-1])
            resumed = events_of(rt, "/goal resume")
        finally:
            rt.close()
    assert isinstance(resumed[-1], Done) and resumed[-1].reason == "complete"
    stats = goal_stats(resumed)
    assert stats["tokens"] == 1750 and stats["turns"] == 4 and stats["requests"] == 5
    assert goal.status == "complete"


def test_a_budget_is_checked_before_every_request_inside_one_turn(ws: Path) -> None:
    """Issue 34: fifty tool rounds in one turn stop at the budget, and run -c finishes."""
    script = [read(f"f{i}.txt", i) for i in range(50)]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False, agent="goal_token_budget = 1000")
        for i in range(50):
            (ws / f"f{i}.txt").write_text(f"fact {i}\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, goal="read every fact file"))
        try:
            events = events_of(rt, "")
            goal = rt.host.goals.goal
        finally:
            rt.close()
        sent = len(srv.requests)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "goal_paused", done
    assert sent == 3  # 350 + 350 + 350 >= 1000: no fourth request
    assert goal is not None and goal.status == "paused" and goal.reason == "budget_spend:tokens"
    assert goal.stats.tokens == 1050 and goal.stats.tool_rounds == 3
    # the transcript is whole: every call has its result, so `run -c` can resume it
    with FakeServer("openai", [complete()]) as srv:
        project(ws, srv.url, planner=False, agent="goal_token_budget = 1000")
        assert main(["run", "--dir", str(ws), "-c", "--json", "/goal resume"]) == 0
        body = srv.requests[0].json
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert calls == results and len(calls) == 3


def test_exact_repeats_are_not_progress_and_stalls_re_plan_instead_of_pausing(ws: Path) -> None:
    script: list[Turn] = []
    for i in range(4):
        script += [read("same.txt", i), Turn.text_only(f"looked again {i}", usage=USAGE)]
    script.append(complete())
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        (ws / "same.txt").write_text("unchanging\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, goal="find something new"))
        try:
            events = events_of(rt, "")
            goal = rt.host.goals.goal
        finally:
            rt.close()
        sent = bodies(srv.requests, EXEC)
    assert isinstance(events[-1], Done) and events[-1].reason == "complete"
    assert goal is not None and goal.stats.evidence == 1 and goal.stats.repeats == 3
    assert goal.stats.replans == 1
    last_user = [m["content"] for m in sent[-1]["messages"] if m["role"] == "user"][-1]
    assert '<goal-replan reason="no_new_evidence">' in last_user
    assert not [e for e in events if isinstance(e, Phase) and e.status == "paused"]


def test_blocked_ends_the_run_as_an_error_and_goal_state_is_in_the_json(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = json.dumps({"status": "blocked", "reason": "the API key for staging is missing"})
    with FakeServer("openai", [Turn.tools([ToolSpec("update_goal", blocked)])]) as srv:
        project(ws, srv.url, planner=False)
        capsys.readouterr()
        code = main(["run", "--dir", str(ws), "--json", "--goal", "deploy to staging"])
        result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert len(srv.requests) == 1
    assert code == 1 and result["stop_reason"] == "goal_blocked"
    assert result["error"]["type"] == "GoalBlocked" and "API key" in result["error"]["message"]
    assert result["route"] == "goal_start" and result["goal"]["status"] == "blocked"


def test_a_goal_in_the_dual_model_setup_starts_with_the_planner(ws: Path) -> None:
    plan = "<plan>\n# Ship\n## Steps\n- do it\n</plan>"
    with FakeServer("openai", [Turn.text_only(plan), complete()]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            events = events_of(rt, "/goal ship the release")
        finally:
            rt.close()
        models = [r.json["model"] for r in srv.requests]
    assert models == ["plan-model", "exec-model"]
    assert isinstance(events[-1], Done) and events[-1].reason == "complete"
    first_exec = next(m for m in srv.requests[1].json["messages"] if m["role"] == "user")
    assert "<goal id=" in first_exec["content"] and "<plan id=" in first_exec["content"]


def test_a_sub_agent_of_a_goal_stops_at_the_goals_budget_too(ws: Path) -> None:
    task = ToolSpec("task", json.dumps({"prompt": "read the fact files"}), id="t0")
    script = [Turn.tools([task], usage=USAGE)] + [read(f"f{i}.txt", i) for i in range(1, 40)]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False, agent="goal_token_budget = 1000")
        for i in range(40):
            (ws / f"f{i}.txt").write_text(f"fact {i}\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, goal="learn the facts", auto=True))
        try:
            events = events_of(rt, "")
            goal = rt.host.goals.goal
        finally:
            rt.close()
        sent = len(srv.requests)
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert ends[0].name == "task" and "budget" in ends[0].content, ends[0]  # the child stopped
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "goal_paused", done
    # parent 350, child 350 + 350 (1050 >= 1000: the child asks no more), parent: no more
    assert sent == 3
    assert goal is not None and goal.reason == "budget_spend:tokens"
    assert goal.stats.tokens == 1050  # the sub-agent's spend counts toward the goal
