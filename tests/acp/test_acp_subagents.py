"""Issue 36: a sub-agent's live counters reach the editor as ``tool_call_update``s of
the call that started it (``_meta["reasonix/subagent"]``), valid ACP for the SDK."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import schema as acp_schema
from acp_client import AgentProcess, project
from fakes import FakeServer, ToolSpec, Turn

USAGE = {"input_tokens": 300, "output_tokens": 50}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")


def test_subagent_counters_ride_on_the_task_call(tmp_path: Path) -> None:
    ask = ToolSpec("read_only_task", json.dumps({"prompt": "what is in a.txt?"}), id="q0")
    script = [
        Turn.tools([ask], usage=USAGE),
        Turn.tools([ToolSpec("read_file", '{"path": "a.txt"}')], usage=USAGE),  # the child
        Turn.text_only("a fact", usage=USAGE),
        Turn.text_only("a.txt holds a fact", usage=USAGE),
    ]
    ws = tmp_path / "ws"
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        (ws / "a.txt").write_text("fact\n")
        agent = AgentProcess()
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            assert agent.prompt(sid, "what is in a.txt")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
    updates = [u for u in agent.updates(sid) if "reasonix/subagent" in u.get("_meta", {})]
    counters = [u["_meta"]["reasonix/subagent"] for u in updates]
    assert [(c["state"], c["tokens"], c["turns"]) for c in counters] == [
        ("running", 0, 0), ("running", 350, 1), ("running", 700, 2), ("complete", 700, 2),
    ]  # fmt: skip
    assert {u["sessionUpdate"] for u in updates} == {"tool_call_update"}
    announced = [u for u in agent.updates(sid) if u["sessionUpdate"] == "tool_call"]
    assert {u["toolCallId"] for u in updates} == {announced[0]["toolCallId"]}
    for message in agent.messages:
        if message.get("method") == "session/update":
            acp_schema.SessionNotification.model_validate(message["params"])
