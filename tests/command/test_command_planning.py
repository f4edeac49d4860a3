"""/plan, /plan-approve, /plan-only and /goal in the command registry: they hand the line
back as the turn, so the host routes the pristine text (real runtime, loopback fakes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from coord_kit import PLAN, PLAN_TEXT, project
from fakes import FakeServer, Turn

from reasonix.agent.events import Done, Phase
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.cancel import Cancel


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


def test_the_planning_commands_pass_their_line_to_the_host(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only(PLAN_TEXT)]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            reg = build_commands(rt)
            names = dict(reg.names())
            assert {"/plan", "/plan-approve", "/plan-only", "/goal"} <= set(names)
            assert [c.text for c in reg.complete("/goal p")] == ["/goal pause"]
            assert reg.is_command("/plan-only fix add()")
            result = reg.run("/plan-only   fix add()")
            assert not result.error and result.prompt == "/plan-only fix add()"
            assert reg.run("/plan").prompt == "/plan"
            events = list(rt.runner.run(result.prompt, Cancel()))
            routes = [(e.route, e.reason) for e in events if isinstance(e, Phase)][:1]
            assert routes == [("plan_only", "slash_plan_only")]
            assert isinstance(events[-1], Done) and events[-1].reason == "plan_saved"
            status = list(rt.runner.run(reg.run("/goal status").prompt or "", Cancel()))
            assert "no goal" in str(status[-1])
            models = [r.json["model"] for r in srv.requests]
        finally:
            rt.close()
    assert models == [PLAN]
