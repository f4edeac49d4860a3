"""The line chat under a pseudo-terminal answers the planner's approval boundary: the plan
is shown whole, a human approves it, and the executor carries it out (COORD-10)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env
from fakes import FakeServer, Turn
from test_e2e_coord import PLAN, project
from test_e2e_task_chat import Term

pytest.importorskip("pty")


def test_the_line_chat_shows_and_approves_a_plan(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    script = [Turn.text_only(PLAN), Turn.text_only("carried out the plan"), Turn.text_only(PLAN)]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        env = {**clean_env(tmp_path), "TERM": "dumb"}
        term = Term([sys.executable, "-m", "reasonix", "--plain", "--yolo"], ws, env)
        try:
            term.expect("› ")
            term.send("fix add() in calc.py, wait for my approval\r")
            shown = term.expect("? allow execute plan")
            assert "Verified touchpoints" in shown and "calc.py:2" in shown
            term.expect("choice")
            term.send("1\r")
            term.expect("carried out the plan")
            term.expect("› ")
            term.send("/goal status\r")  # through the command registry, answered by the host
            term.expect("no goal in this session")
            term.expect("› ")
            term.send("/plan-only add a test\r")
            term.expect("saved to")
            term.expect("› ")
            term.send("/exit\r")
            code = term.close()
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
                term.proc.wait()
        models = [r.json["model"] for r in srv.requests]
    assert code == 0 and models == ["plan-model", "exec-model", "plan-model"]
