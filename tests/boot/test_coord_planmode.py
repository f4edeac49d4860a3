"""Plan mode with one model (COORD-5, PERM-14, PERM-15): executor-driven, human-approved.

``exit_plan_mode`` always needs a fresh human answer — under YOLO too; headless,
the run ends waiting with the plan saved, and ``run -c --approve-plan`` opens
the short auto-execution window, which never passes nested bash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from coord_kit import EXEC, bodies, project, users
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.events import ApprovalRequested, Done, Event, Phase, ToolEnd
from reasonix.agent.session import read_records
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.cli.main import main
from reasonix.config.paths import sessions_dir
from reasonix.permission import ApprovalChoice

PLAN_MD = "# Fix add\n## Steps\n- make add() return a + b"
EXIT = ToolSpec("exit_plan_mode", json.dumps({"plan": PLAN_MD}))
FIX = ToolSpec("edit_file", '{"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}')


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


def run(ws: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["run", "--dir", str(ws), "--json", *args])
    return code, json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_yolo_never_approves_exit_plan_mode_headless(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    read = ToolSpec("read_file", '{"path": "calc.py"}')
    nested = ToolSpec("bash", json.dumps({"command": 'eval "echo nested"', "justification": "x"}))
    script = [
        Turn.tools([read]), Turn.tools([EXIT]),                # plan, then ask to leave plan mode
        Turn.tools([nested]), Turn.tools([FIX]), Turn.text_only("fixed"),  # after approval
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        code, waiting = run(ws, capsys, "--yolo", "--permission-mode", "plan", "fix add()")
        assert code == 0 and waiting["stop_reason"] == "awaiting_approval", waiting
        assert len(srv.requests) == 2 and (ws / "calc.py").read_text().endswith("a - b\n")
        assert waiting["plan_id"] and waiting["planner_requests"] == 0
        saved = sessions_dir(ws.resolve()) / "plans" / f"{waiting['plan_id']}.md"
        assert "make add() return a + b" in saved.read_text()
        first = users(bodies(srv.requests, EXEC)[0])[0]
        assert '<plan-mode route="explicit">' in first
        # continue: approved by the flag; no -y, no --yolo: the window lets the edit run
        code, done = run(ws, capsys, "-c", "--approve-plan")
        requests = list(srv.requests)
    assert code == 0 and done["result"] == "fixed", done
    assert (ws / "calc.py").read_text().endswith("a + b\n")
    approved = users(bodies(requests, EXEC)[2])[-1]
    assert f'<plan-approved id="{waiting["plan_id"]}">' in approved
    # the nested bash call was refused even inside the window
    tool_msgs = [m for m in bodies(requests, EXEC)[3]["messages"] if m["role"] == "tool"]
    assert "nested/indirect" in tool_msgs[-1]["content"]
    records = read_records(sessions_dir(ws.resolve()) / f"{done['session_id']}.jsonl")
    statuses = [r["status"] for r in records if r["type"] == "plan_status"]
    assert statuses == ["approved"]


def _turn(rt: Any, text: str, answer: ApprovalChoice | None) -> list[Event]:
    out: list[Event] = []
    for event in rt.runner.run(text, Cancel()):
        if isinstance(event, ApprovalRequested):
            event.answer(answer)
        out.append(event)
    return out


@pytest.mark.parametrize("answer", [ApprovalChoice.ONCE, ApprovalChoice.DENY])
def test_interactive_yolo_still_asks_a_human(ws: Path, answer: ApprovalChoice) -> None:
    script = [Turn.tools([EXIT]), Turn.tools([FIX]), Turn.text_only("done")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        opts = RuntimeOptions(workspace=ws, interactive=True, permission_mode="plan", yolo=True)
        rt = build_runtime(opts)
        try:
            assert rt.gate.policy.planning_active and rt.mode == "bypassPermissions"
            events = _turn(rt, "fix add()", answer)
            asks = [e for e in events if isinstance(e, ApprovalRequested)]
            assert len(asks) == 1 and asks[0].request.tool_name == "exit_plan_mode"
            assert asks[0].request.fresh and "a + b" in asks[0].request.detail
            done = events[-1]
            assert isinstance(done, Done)
            if answer is ApprovalChoice.ONCE:
                assert done.reason == "complete" and done.result == "done"
                assert (ws / "calc.py").read_text().endswith("a + b\n")
                assert not rt.gate.policy.planning_active and not rt.gate.policy.in_window
            else:
                assert done.reason == "plan_rejected" and len(srv.requests) == 1
                assert rt.gate.policy.planning_active  # still planning, waiting for feedback
        finally:
            rt.close()


def test_slash_plan_enters_plan_mode_and_shift_tab_leaves_it(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("a plan-mode answer")]) as srv:
        project(ws, srv.url, planner=False)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            events = _turn(rt, "/plan", None)
            assert not srv.requests and isinstance(events[-1], Done)
            assert rt.gate.policy.planning_active and rt.mode == "ask"
            _turn(rt, "how is add() used?", None)
            assert '<plan-mode route="explicit">' in users(srv.requests[0].json)[-1]
            assert rt.set_mode("auto") == "auto" and not rt.gate.policy.planning_active
            assert rt.set_mode("plan") == "plan" and rt.gate.policy.planning_active
        finally:
            rt.close()


def test_one_model_plan_only_refuses_writes_and_saves_the_answer(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = [Turn.tools([FIX]), Turn.text_only("# Plan\n## Steps\n- fix add")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        code, result = run(ws, capsys, "--yolo", "--plan-only", "fix add()")
        tool = next(m for m in srv.requests[1].json["messages"] if m["role"] == "tool")
    assert code == 0 and result["stop_reason"] == "plan_saved" and result["plan_id"]
    assert "blocked" in tool["content"] and (ws / "calc.py").read_text().endswith("a - b\n")
    assert result["route"] == "plan_only" and result["planner_requests"] == 0


def test_the_host_enforces_the_approval_boundary_without_exit_plan_mode(ws: Path) -> None:
    script = [Turn.text_only("# Plan\n- fix add"), Turn.tools([FIX]), Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            events = _turn(rt, "/plan-approve fix add()", ApprovalChoice.ONCE)
            asks = [e for e in events if isinstance(e, ApprovalRequested)]
            assert [a.request.tool_name for a in asks] == ["plan"]
            ends = [e for e in events if isinstance(e, ToolEnd)]
            assert ends and not ends[0].is_error  # the window ran the edit without asking
            phases = [e.status for e in events if isinstance(e, Phase) and e.phase == "plan"]
            assert phases == ["approved"] and len(srv.requests) == 3
        finally:
            rt.close()
