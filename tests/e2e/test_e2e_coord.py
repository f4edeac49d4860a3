"""The built .pyz with two models on one fake server: plan-only, plan-then-execute, Plan
mode under --yolo, and a goal that survives SIGKILL and ``run -c``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env
from fakes import FakeServer, ToolSpec, Turn

PLAN = "<plan>\n# Fix add\n## Verified touchpoints\n- calc.py:2\n## Steps\n- a + b\n</plan>"
FIX = ToolSpec("edit_file", '{"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}')


def project(ws: Path, url: str, planner: bool = True) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    agent = '[agent]\nplanner_model = "fake/plan-model"\n' if planner else ""
    (ws / "reasonix.toml").write_text(
        f'default_model = "fake/exec-model"\n{agent}[[providers]]\nname = "fake"\n'
        f'kind = "openai"\nbase_url = "{url}"\nmodels = ["exec-model", "plan-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
    )
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")


def run(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.e2e
def test_plan_only_then_plan_then_execute(pyz: Path, tmp_path: Path) -> None:
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]), Turn.text_only(PLAN),
        Turn.text_only(PLAN), Turn.tools([FIX]), Turn.text_only("fixed"),
    ]  # fmt: skip
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        code, only = run(pyz, ws, env, "--plan-only", "fix add()")
        assert code == 0 and only["stop_reason"] == "plan_saved", only
        assert [r.json["model"] for r in srv.requests] == ["plan-model"] * 2
        code, planned = run(pyz, ws, env, "-y", "--plan", "fix add()")
        models = [r.json["model"] for r in srv.requests]
        executor_first = srv.requests[3].json["messages"][1]["content"]
    assert code == 0 and planned["result"] == "fixed", planned
    assert models == ["plan-model"] * 3 + ["exec-model"] * 2
    assert (planned["planner_requests"], planned["executor_requests"]) == (1, 2)
    assert planned["route"] == "plan_then_execute" and planned["plan_id"] != only["plan_id"]
    assert "calc.py:2" in executor_first and (ws / "calc.py").read_text().endswith("a + b\n")


@pytest.mark.e2e
def test_plan_mode_under_yolo_waits_for_a_human(pyz: Path, tmp_path: Path) -> None:
    exit_ = ToolSpec("exit_plan_mode", json.dumps({"plan": "# Fix\n- a + b"}))
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer(
        "openai", [Turn.tools([exit_]), Turn.tools([FIX]), Turn.text_only("ok")]
    ) as srv:
        project(ws, srv.url, planner=False)
        code, waiting = run(pyz, ws, env, "--yolo", "--permission-mode", "plan", "fix add()")
        assert code == 0 and waiting["stop_reason"] == "awaiting_approval", waiting
        assert len(srv.requests) == 1 and (ws / "calc.py").read_text().endswith("a - b\n")
        code, done = run(pyz, ws, env, "-c", "--approve-plan")
    assert code == 0 and done["result"] == "ok" and done["plan_id"] == waiting["plan_id"]
    assert (ws / "calc.py").read_text().endswith("a + b\n")


@pytest.mark.e2e
def test_a_goal_survives_sigkill_and_run_c(pyz: Path, tmp_path: Path) -> None:
    done = json.dumps({"status": "complete", "summary": "done"})
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]), Turn.text_only("one"),
        Turn.text_only("slow", delay=5.0),                      # killed while streaming
        Turn.tools([ToolSpec("update_goal", done)]),
    ]  # fmt: skip
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False)
        proc = subprocess.Popen(
            [sys.executable, str(pyz), "run", "--json", "--goal", "check calc.py"],
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while len(srv.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(srv.requests) == 3
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        code, result = run(pyz, ws, env, "-c", "carry on")
        resumed = [m["content"] for m in srv.requests[-1].json["messages"] if m["role"] == "user"]
    assert code == 0 and result["stop_reason"] == "complete", result
    assert result["goal"]["status"] == "complete"
    assert result["goal"]["turns"] == 2 and result["goal"]["evidence"] == 1  # kept across the kill
    first = resumed[0].split("</skills>\n\n", 1)[-1]  # after the host's skill index
    assert first.startswith("<goal id=") and resumed[-1] == "carry on"
