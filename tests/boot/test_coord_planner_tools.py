"""The planner's tools (COORD-15, PERM-14): a read-only research set plus the fixed
``use_capability`` proxy, never direct ``mcp__*`` schemas; authorized non-destructive
MCP targets are callable without ``readOnlyHint``, destructive ones are left to the executor.
Real parts: an MCP server on the PyPI SDK over stdio, the loopback fake provider.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from coord_kit import EXEC, PLAN, PLAN_TEXT, bodies, project
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.events import Done, Notice, ToolEnd
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel

SERVER = Path(__file__).resolve().parent / "servers" / "coord_mcp_server.py"


def need_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        pytest.skip("MISSING python package mcp: run `.venv/bin/pip install mcp`")


def cap(action: str, tool: str = "", **arguments: str) -> str:
    args: dict[str, object] = {"action": action, "server": "coord"}
    if tool:
        args["tool"] = tool
    if arguments:
        args["arguments"] = arguments
    return json.dumps(args)


def test_the_planner_reaches_mcp_only_through_its_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_mcp()
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    ws = tmp_path / "repo"
    script = [
        Turn.tools([
            # the call first: it waits for a server still starting (D21), then the list
            ToolSpec("use_capability", cap("call", "lookup", key="BUG-1"), id="c1"),
            ToolSpec("use_capability", cap("list"), id="l"),
            ToolSpec("use_capability", cap("call", "wipe"), id="c2"),
        ]),
        Turn.text_only(PLAN_TEXT),
        Turn.text_only("executed"),
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write(f'[[mcp.servers]]\nname = "coord"\ncommand = "{sys.executable}"\n'
                     f'args = ["{SERVER}"]\n')  # fmt: skip
        rt = build_runtime(RuntimeOptions(workspace=ws, plan="plan_then_execute"))
        try:
            events = list(rt.runner.run("triage BUG-1", Cancel()))
        finally:
            rt.close()
        planner, executor = bodies(srv.requests, PLAN), bodies(srv.requests, EXEC)
    assert isinstance(events[-1], Done), [e for e in events if isinstance(e, Notice)]
    names = [t["function"]["name"] for t in planner[0]["tools"]]
    assert "use_capability" in names and not [n for n in names if n.startswith("mcp__")]
    assert not {"bash", "edit_file", "write_file", "exit_plan_mode", "update_goal"} & set(names)
    assert "use_capability" in [t["function"]["name"] for t in executor[0]["tools"]]
    results = {e.call_id: e for e in events if isinstance(e, ToolEnd)}
    assert "lookup" in results["l"].content and "wipe" not in results["l"].content
    assert not results["c1"].is_error and "open since Monday" in results["c1"].content
    assert results["c2"].is_error and "destructive" in results["c2"].content
