"""Issue 36: a run budget (no goal) stops a sub-agent before its next request too,
and the parent after it; ``/status`` shows what is left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from coord_kit import project
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.events import Done, ToolEnd
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import RuntimeCommandHost
from reasonix.cancel import Cancel

USAGE = {"input_tokens": 300, "output_tokens": 50}


def read(i: int) -> Turn:
    args = json.dumps({"path": f"f{i}.txt"})
    return Turn.tools([ToolSpec("read_file", args, id=f"c{i}")], usage=USAGE)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


def test_a_sub_agent_stops_at_the_run_budget_and_so_does_the_parent(ws: Path) -> None:
    task = ToolSpec("task", json.dumps({"prompt": "read the fact files"}), id="t0")
    script = [Turn.tools([task], usage=USAGE)] + [read(i) for i in range(1, 40)]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False, agent="max_tokens = 1000")
        for i in range(40):
            (ws / f"f{i}.txt").write_text(f"fact {i}\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            events = list(rt.runner.run("learn the facts", Cancel()))
            status = RuntimeCommandHost(rt).status()
        finally:
            rt.close()
        sent = len(srv.requests)
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert ends[0].name == "task" and "budget" in ends[0].content, ends[0]  # the child stopped
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "budget", done
    # parent 350, child 350 + 350 (1050 >= 1000: the child asks no more), parent: no more
    assert sent == 3
    assert status["budget"] == "budget 0 tok left"
