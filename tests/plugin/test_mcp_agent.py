"""An agent run (scripted model) calls an MCP tool end-to-end.

Tools of a server ready within the start wait are offered directly as
``mcp__<server>__<tool>`` from the first request, next to ``use_capability``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp_servers import need_module, sdk_argv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))

from agent_scripted import ScriptedProvider, calls, text

import reasonix.provider as provider_registry
from reasonix.agent.events import Done, ToolEnd
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.config.model import McpServerConfig
from reasonix.plugin.mcp import McpManager
from reasonix.tool import Registry, ToolContext

pytestmark = pytest.mark.interop


def test_agent_calls_mcp_tools_directly_and_through_the_proxy(tmp_path: Path) -> None:
    need_module("mcp")
    ws = tmp_path / "ws"
    ws.mkdir()
    server = McpServerConfig("sdk", command=sys.executable, args=sdk_argv("stdio")[1:])
    with McpManager([server], workspace=ws, log_dir=tmp_path / "logs") as mgr:
        mgr.start()
        assert mgr.wait_ready(20.0) == ["sdk"]
        registry = Registry()
        for tool in mgr.tools():
            registry.add(tool)
        steps = [
            calls(
                ("mcp__sdk__echo", '{"text": "hi"}'),
                ("use_capability", '{"action": "call", "server": "sdk", "tool": "add",'
                                   ' "arguments": {"a": 2, "b": 40}}'),
            ),
            text("done"),
        ]  # fmt: skip
        prov = provider_registry.new("scripted", {"steps": steps})
        assert isinstance(prov, ScriptedProvider)
        session = Session.create(ws, {"system": "sys"})
        try:
            agent = Agent(
                prov, registry, session, model="m", system="sys", tool_ctx=ToolContext(workspace=ws)
            )
            events = list(agent.run("go", Cancel()))
        finally:
            session.close()
    assert isinstance(events[-1], Done) and events[-1].result == "done"
    offered = {t.name for t in prov.requests[0].tools}
    assert {"mcp__sdk__echo", "mcp__sdk__add", "use_capability"} <= offered
    results = [m.content for m in prov.requests[1].messages if m.tool_call_id]
    assert results == ["echo: hi", "42"]
    assert len([e for e in events if isinstance(e, ToolEnd)]) == 2
