"""The memory tools and recall as declarations: same request, same answers, loaded on use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.recall import Recaller
from reasonix.agent.memory.wiring import DeferredRecall, controller_tools, deferred_controller_tools
from reasonix.tool import Registry, ToolContext

ROOT = Path(__file__).resolve().parents[2]


class _Session:
    id = "s1"

    def records(self) -> Sequence[Mapping[str, Any]]:
        return []


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "rx"))
    return tmp_path


def _surface(tools: Sequence[Any]) -> list[tuple[Any, ...]]:
    reg = Registry()
    for tool in tools:
        reg.add(tool)
    flags = [
        (t.name, bool(t.read_only), dict(getattr(t, "metadata", {}) or {})) for t in reg.tools()
    ]
    hints = [callable(getattr(t, "reads_only", None)) for t in reg.tools()]
    return [json.dumps(reg.schemas(), sort_keys=False), flags, hints]


def test_the_declarations_match_the_live_tools(home: Path) -> None:
    ws = home / "ws"
    ws.mkdir()
    live = controller_tools(Memory.for_workspace(ws), ws, _Session)
    declared = deferred_controller_tools(lambda: Memory.for_workspace(ws), ws, _Session)
    assert _surface(declared) == _surface(live)
    only = deferred_controller_tools(lambda: Memory.for_workspace(ws), ws, _Session, ["memory"])
    assert [t.name for t in only] == ["memory"]


def test_a_declared_tool_runs_the_real_one(home: Path) -> None:
    ws = home / "ws"
    ws.mkdir()
    made: list[Memory] = []

    def memory() -> Memory:
        made.append(Memory.for_workspace(ws))
        return made[-1]

    tools = {t.name: t for t in deferred_controller_tools(memory, ws, _Session)}
    ctx = ToolContext(workspace=ws, cwd=ws, write_roots=[ws], extra={"permission_mode": "yolo"})
    assert made == []  # nothing built for the declarations
    saved = tools["remember"].execute(
        json.dumps({"content": "the deploy script lives in ops/deploy.sh", "type": "project"}), ctx
    )
    assert not saved.is_error, saved.content
    listed = tools["memory"].execute(json.dumps({"operation": "list"}), ctx)
    assert "ops/deploy.sh" in listed.content
    assert len(made) == 1  # one store for all four tools


def test_recall_without_facts_loads_no_store(home: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from reasonix.agent.memory.wiring import DeferredRecall\n"
        "r = DeferredRecall(lambda: 1 / 0, Path('.'))\n"
        "print(repr(r.recall_suffix('how does the deploy pipeline work')),\n"
        "      'reasonix.agent.memory.catalog' in sys.modules)\n"
    )
    env = {**os.environ, "REASONIX_HOME": str(home / "rx"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=home, capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.split() == ["''", "False"]


def test_recall_with_facts_says_what_the_recaller_says(home: Path) -> None:
    ws = home / "ws"
    ws.mkdir()
    memory = Memory.for_workspace(ws)
    memory.store("project").create("the deploy pipeline runs ops/deploy.sh", type="project")
    text = "how does the deploy pipeline work"
    want = Recaller(memory).recall_suffix(text)
    assert want and "deploy.sh" in want
    assert DeferredRecall(lambda: Memory.for_workspace(ws), ws).recall_suffix(text) == want
