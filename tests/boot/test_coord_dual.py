"""Two models, one task: ``reasonix run --json`` against two fake models on one server.

The fake answers requests in arrival order whatever the model, so each test
scripts the planner's turns first and the executor's after them; the
recorded bodies say which model every request was for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from coord_kit import (
    EXEC,
    PLAN,
    PLAN_TEXT,
    assert_byte_extensions,
    assert_extensions,
    bodies,
    project,
    raw_bodies,
    research,
    users,
)
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.session import latest_session, read_records
from reasonix.cli.main import main
from reasonix.config.paths import sessions_dir


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


def run(ws: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["run", "--dir", str(ws), "--json", *args])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


def test_plan_only_makes_planner_requests_only_and_saves_the_plan(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer("openai", [*research(1), Turn.text_only(PLAN_TEXT)]) as srv:
        project(ws, srv.url)
        code, result = run(ws, capsys, "--plan-only", "fix add() in calc.py")
        requests = list(srv.requests)
    assert code == 0 and result["stop_reason"] == "plan_saved", result
    assert [r.json["model"] for r in requests] == [PLAN, PLAN]
    assert result["planner_requests"] == 2 and result["executor_requests"] == 0
    assert result["route"] == "plan_only" and result["plan_id"].startswith("plan-")
    assert "Fix add()" in result["result"]
    saved = sessions_dir(ws.resolve()) / "plans" / f"{result['plan_id']}.md"
    assert "calc.py:2" in saved.read_text()
    records = read_records(sessions_dir(ws.resolve()) / f"{result['session_id']}.jsonl")
    plan = next(r["plan"] for r in records if r["type"] == "plan")
    assert plan["status"] == "saved" and plan["sections"]["verified"] == [
        "calc.py:2 — add subtracts"
    ]
    assert plan["sections"]["candidates"] == ["test_calc.py"]
    assert not [r for r in records if r["type"] == "message"]  # the executor never ran
    assert [r["title"] for r in records if r["type"] == "title"] == ["fix add() in calc.py"]
    assert (ws / "calc.py").read_text().endswith("a - b\n")


def test_plan_hands_the_plan_to_the_executor_and_three_turns_stay_prefix_stable(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fix = '{"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}'
    script = [
        *research(1), Turn.text_only(PLAN_TEXT),                       # turn 1: planner
        Turn.tools([ToolSpec("edit_file", fix)]), Turn.text_only("fixed"),  # turn 1: executor
        Turn.text_only("<plan>\n# Add a test\n## Steps\n- write test\n</plan>"),  # turn 2
        Turn.text_only("test written"),
        Turn.text_only("it adds two numbers"),                         # turn 3: executor only
        *research(1), Turn.text_only("<plan>\n# Docs\n</plan>"),       # turn 4: planner again
        Turn.text_only("docs updated"),
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        code, first = run(ws, capsys, "-y", "--plan", "fix add() in calc.py")
        assert code == 0, first
        assert first["route"] == "plan_then_execute" and first["plan_id"]
        assert (first["planner_requests"], first["executor_requests"]) == (2, 2)
        code, second = run(ws, capsys, "-c", "-y", "add a test, plan first")
        assert code == 0 and second["route"] == "plan_then_execute", second
        code, third = run(ws, capsys, "-c", 'explain what "plan only" means')
        assert code == 0 and third["route"] == "executor"
        assert (third["planner_requests"], third["executor_requests"]) == (0, 1)
        code, fourth = run(ws, capsys, "-c", "-y", "/plan update the docs")
        assert code == 0 and fourth["route"] == "plan_then_execute"
        requests = list(srv.requests)
    assert (ws / "calc.py").read_text().endswith("a + b\n")
    planner, executor = bodies(requests, PLAN), bodies(requests, EXEC)
    assert len(planner) == 5 and len(executor) == 5
    first_user = users(executor[0])[0]
    assert (
        first_user.startswith("fix add() in calc.py") and "calc.py:2 — add subtracts" in first_user
    )
    assert f'<plan id="{first["plan_id"]}">' in first_user
    assert '<planner-turn route="plan_then_execute">' in users(planner[0])[0]
    assert users(planner[3])[-1].startswith("update the docs")  # the slash command is gone
    # each session's requests extend that session's previous request, across all turns
    assert_extensions(planner)
    assert_extensions(executor)
    assert_byte_extensions(raw_bodies(requests, PLAN))  # on the recorded bytes too
    assert_byte_extensions(raw_bodies(requests, EXEC))
    assert all(first["session_id"] == r["session_id"] for r in (second, third, fourth))
    # the planner's transcript is separate and linked by ids, and `-c` never picks it
    records = read_records(sessions_dir(ws.resolve()) / f"{first['session_id']}.jsonl")
    link = next(r["planner_session"] for r in records if r["type"] == "planner_link")
    planner_meta = read_records(sessions_dir(ws.resolve()) / "planner" / f"{link}.jsonl")[0]
    assert planner_meta["executor_session"] == first["session_id"]
    assert planner_meta["role"] == "planner" and planner_meta["model"] == f"fake/{PLAN}"
    info = latest_session(ws.resolve())
    assert info is not None and info.id == first["session_id"]


def test_a_directive_after_the_task_makes_it_plan_only(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer("openai", [Turn.text_only(PLAN_TEXT)]) as srv:
        project(ws, srv.url)
        code, result = run(ws, capsys, "fix the bug in calc.py, then plan only")
        models = [r.json["model"] for r in srv.requests]
    assert code == 0 and result["route"] == "plan_only" and models == [PLAN]


def test_a_quoted_directive_asks_no_planner(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeServer("openai", [Turn.text_only("it plans and stops")]) as srv:
        project(ws, srv.url)
        code, result = run(ws, capsys, 'explain what "plan only" means')
        models = [r.json["model"] for r in srv.requests]
    assert code == 0 and models == [EXEC] and result["planner_requests"] == 0
    assert result["route"] == "executor" and result["plan_id"] is None


NEVER = [*research(9)]  # 8 research rounds, then tools again in the final summary round


def test_a_planner_that_never_finalises_falls_back_for_plan(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer("openai", [*NEVER, Turn.text_only("fixed directly")]) as srv:
        project(ws, srv.url)
        code, result = run(ws, capsys, "--plan", "fix add() in calc.py")
        requests = list(srv.requests)
    assert code == 0 and result["result"] == "fixed directly", result
    assert (result["planner_requests"], result["executor_requests"]) == (9, 1)
    final = users(bodies(requests, PLAN)[-1])
    assert any(
        "<planner-final-round>" in str(m.get("content"))
        for m in bodies(requests, PLAN)[-1]["messages"]
    )
    assert final  # the planner saw the task
    ex = bodies(requests, EXEC)[0]
    assert users(ex) == [users(ex)[0]] and users(ex)[0].startswith("fix add() in calc.py")
    assert "<plan" not in users(ex)[0] and "planner" not in users(ex)[0]  # the pristine task
    # the planner turn was rolled back: its transcript holds no message of it
    records = read_records(sessions_dir(ws.resolve()) / f"{result['session_id']}.jsonl")
    link = next(r["planner_session"] for r in records if r["type"] == "planner_link")
    planned = read_records(sessions_dir(ws.resolve()) / "planner" / f"{link}.jsonl")
    assert not [r for r in planned if r["type"] == "message"]
    turn = next(r for r in planned if r["type"] == "planner_turn")
    assert turn["status"] == "rolled_back" and turn["reason"] == "not_converged"


@pytest.mark.parametrize("flag", ["--plan-only", "--plan-approve"])
def test_a_planner_that_never_finalises_fails_closed(
    ws: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    with FakeServer("openai", [*NEVER, Turn.text_only("must never be asked")]) as srv:
        project(ws, srv.url)
        code, result = run(ws, capsys, "-y", flag, "fix add() in calc.py")
        models = [r.json["model"] for r in srv.requests]
    assert code == 1 and result["is_error"] and result["error"]["type"] == "PlannerError"
    assert EXEC not in models and result["executor_requests"] == 0
    assert (ws / "calc.py").read_text().endswith("a - b\n")


def test_plan_approve_headless_waits_then_run_c_approves(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fix = '{"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}'
    script = [
        Turn.text_only(PLAN_TEXT),
        Turn.tools([ToolSpec("edit_file", fix)]), Turn.text_only("done as planned"),
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        code, waiting = run(ws, capsys, "--yolo", "--plan-approve", "fix add() in calc.py")
        assert code == 0 and waiting["stop_reason"] == "awaiting_approval", waiting
        assert waiting["executor_requests"] == 0 and (ws / "calc.py").read_text().endswith(
            "a - b\n"
        )
        code, done = run(ws, capsys, "-c", "-y", "--approve-plan")
        requests = list(srv.requests)
    assert code == 0 and done["result"] == "done as planned", done
    assert done["plan_id"] == waiting["plan_id"] and done["route"] == "executor"
    assert (ws / "calc.py").read_text().endswith("a + b\n")
    assert "calc.py:2" in users(bodies(requests, EXEC)[0])[0]


def test_an_approving_message_continues_a_waiting_plan(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = [Turn.text_only(PLAN_TEXT), Turn.text_only("ran it")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _, waiting = run(ws, capsys, "fix calc.py; wait for my approval")
        assert (
            waiting["route"] == "plan_for_approval"
            and waiting["stop_reason"] == "awaiting_approval"
        )
        code, done = run(ws, capsys, "-c", "go ahead")
        models = [r.json["model"] for r in srv.requests]
    assert code == 0 and done["result"] == "ran it" and models == [PLAN, EXEC]


def test_the_metrics_record_the_planner_arm(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    metrics = ws.parent / "m.json"
    with FakeServer("openai", [Turn.text_only(PLAN_TEXT), Turn.text_only("a")]) as srv:
        project(ws, srv.url)
        run(ws, capsys, "--metrics", str(metrics), "--plan-only", "x")
        assert json.loads(metrics.read_text())["arm"] == "dual"
        code, result = run(
            ws, capsys, "--metrics", str(metrics), "--ablate", "planner", "--plan", "x"
        )
    m = json.loads(metrics.read_text())
    assert m["arm"] == "ablated" and m["ablate"] == ["planner"] and m["planner_requests"] == 0
    assert code == 0 and result["executor_requests"] == 1
