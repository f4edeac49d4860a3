"""``reasonix acp`` in-process: real runtimes, the fake model, raw JSON-RPC over pipes.

Every ``session/update`` and agent request is also checked against the
official ACP Python SDK's schema models, an implementation independent of ours.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import schema as acp_schema
from acp_client import AgentProcess, allow, project
from fakes import FakeServer, ToolSpec, Turn

from reasonix.acp.replay import user_text

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('calc test ok')\n"
FIX = json.dumps({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})
TEST_CMD = f"{sys.executable} test_calc.py"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")


def task_script() -> list[Turn]:
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], text="Reading calc.py."),
        Turn.tools([ToolSpec("edit_file", FIX)], reasoning="add subtracts; fix it"),
        Turn.tools([ToolSpec("bash", json.dumps({"command": TEST_CMD}))]),
        Turn.text_only("Fixed add(); the test passes."),
    ]


def task_project(ws: Path, url: str) -> None:
    # the test command is pre-approved, so the edit is the one question asked
    project(ws, url, f"[permissions]\nallow = [{json.dumps('Bash=' + TEST_CMD)}]\n")
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)


def check_schema(agent: AgentProcess) -> None:
    """Every notification and request we sent parses with the SDK's models."""
    for message in agent.messages:
        if message.get("method") == "session/update":
            acp_schema.SessionNotification.model_validate(message["params"])
        elif message.get("method") == "session/request_permission":
            acp_schema.RequestPermissionRequest.model_validate(message["params"])


def tool_updates(agent: AgentProcess, sid: str) -> dict[str, list[dict[str, Any]]]:
    by_id: dict[str, list[dict[str, Any]]] = {}
    for u in agent.updates(sid):
        if u["sessionUpdate"] in ("tool_call", "tool_call_update"):
            by_id.setdefault(u["toolCallId"], []).append(u)
    return by_id


def test_initialize_negotiates_the_version_and_advertises(tmp_path: Path) -> None:
    agent = AgentProcess()
    try:
        result = agent.initialize()
        acp_schema.InitializeResponse.model_validate(result)
        assert result["protocolVersion"] == 1
        caps = result["agentCapabilities"]
        assert caps["loadSession"] is True and caps["promptCapabilities"]["embeddedContext"]
        assert caps["mcpCapabilities"] == {"http": True, "sse": True}
        later = agent.request("initialize", {"protocolVersion": 7})["result"]
        assert later["protocolVersion"] == 1  # our latest, for the client to decide
        bad = agent.request("initialize", {"protocolVersion": "one"})
        assert bad["error"]["code"] == -32602
    finally:
        assert agent.close() == 0


def test_read_edit_test_task_asks_once_with_the_diff(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agent = AgentProcess({"session/request_permission": allow("allow-once")})
    with FakeServer("openai", task_script()) as srv:
        task_project(ws, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            response = agent.prompt(sid, "fix add() and run its test")
        finally:
            assert agent.close() == 0
    assert response["result"] == {"stopReason": "end_turn"}
    asks = [r for r in agent.requests if r["method"] == "session/request_permission"]
    assert len(asks) == 1
    params = asks[0]["params"]
    kinds = [o["kind"] for o in params["options"]]
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    texts = [c["content"]["text"] for c in params["toolCall"]["content"] if c["type"] == "content"]
    assert any("would approve" in t and "recorded calls" in t for t in texts)  # the simulator
    diff = params["toolCall"]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(ws / "calc.py"),
        "oldText": CALC,
        "newText": CALC.replace("a - b", "a + b"),
    }
    assert params["toolCall"]["kind"] == "edit"
    calls = tool_updates(agent, sid)
    assert len(calls) == 3
    for updates in calls.values():
        assert updates[0]["sessionUpdate"] == "tool_call"
        assert updates[-1]["status"] == "completed"
    kinds_seen = [u[0]["kind"] for u in calls.values()]
    assert kinds_seen == ["read", "edit", "execute"]
    edit_end = calls[params["toolCall"]["toolCallId"]][-1]
    assert edit_end["content"][0]["type"] == "diff"
    bash_end = list(calls.values())[2][-1]
    assert "calc test ok" in bash_end["content"][0]["content"]["text"]
    thoughts = [u for u in agent.updates(sid) if u["sessionUpdate"] == "agent_thought_chunk"]
    assert "".join(u["content"]["text"] for u in thoughts).startswith("add subtracts")
    assert any(u["sessionUpdate"] == "usage_update" for u in agent.updates(sid))
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    check_schema(agent)


def test_always_answers_save_rules(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    answers = iter(["allow-always", "reject-always"])
    agent = AgentProcess(
        {
            "session/request_permission": lambda p: {
                "outcome": {"outcome": "selected", "optionId": next(answers)}
            }
        }
    )
    other = json.dumps({"path": "notes.txt", "content": "x\n"})
    script = [
        Turn.tools([ToolSpec("edit_file", FIX)]),
        Turn.tools([ToolSpec("write_file", other)]),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        task_project(ws, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            assert agent.prompt(sid, "go")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
    asks = [r["params"] for r in agent.requests if r["method"] == "session/request_permission"]
    assert "saved to ./reasonix.toml" in asks[0]["options"][1]["name"]
    toml = (ws / "reasonix.toml").read_text()
    assert "Edit(" in toml.split("allow")[1]  # the edit's rule was saved as an allow rule
    assert "deny" in toml and not (ws / "notes.txt").exists()
    ends = [us[-1] for us in tool_updates(agent, sid).values()]
    assert [e["status"] for e in ends] == ["completed", "failed"]


def test_cancel_mid_stream_ends_the_turn_before_the_stream_and_the_next_prompt_works(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    # A stream far longer than any wait below: only the cancel can end this turn in time.
    slow = Turn(text=[f"word{i} " for i in range(2000)], delay=0.05)
    agent = AgentProcess()
    with FakeServer("openai", [slow, Turn.text_only("after cancel")]) as srv:
        project(ws, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            pending = agent.start(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "talk"}]}
            )
            agent.wait_for(
                lambda m: (
                    m.get("method") == "session/update"
                    and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                )
            )
            agent.notify("session/cancel", {"sessionId": sid})
            answer = agent.wait_response(pending, timeout=30)
            assert answer["result"] == {"stopReason": "cancelled"}
            cut = "".join(
                u["content"]["text"]
                for u in agent.updates(sid)
                if u["sessionUpdate"] == "agent_message_chunk"
            )
            assert cut.startswith("word0 ") and "word1999" not in cut  # the stream was cut
            assert srv.wait_idle(30)  # and its model request hung up, not left streaming
            again = agent.prompt(sid, "again")
            assert again["result"] == {"stopReason": "end_turn"}
        finally:
            assert agent.close() == 0
    text = "".join(
        u["content"]["text"]
        for u in agent.updates(sid)
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text.endswith("after cancel")


def test_closing_stdin_ends_running_turns_and_exits_zero(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    slow = Turn(text=[f"w{i} " for i in range(400)], delay=0.05)
    agent = AgentProcess()
    with FakeServer("openai", [slow]) as srv:
        project(ws, srv.url)
        agent.initialize()
        sid = agent.new_session(ws)
        agent.start("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "x"}]})
        agent.wait_for(
            lambda m: (
                m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            )
        )
        started = time.monotonic()
        assert agent.close() == 0
        assert time.monotonic() - started < 10
        assert srv.wait_idle(5.0)  # the in-flight model request was really hung up
    assert "Traceback" not in agent.log.getvalue()


def test_several_sessions_in_one_process(tmp_path: Path) -> None:
    agent = AgentProcess()
    script = [Turn.text_only("one"), Turn.text_only("two")]
    with FakeServer("openai", script) as srv:
        a, b = tmp_path / "a", tmp_path / "b"
        project(a, srv.url)
        project(b, srv.url)
        try:
            agent.initialize()
            sa, sb = agent.new_session(a), agent.new_session(b)
            assert sa != sb
            first = agent.start(
                "session/prompt", {"sessionId": sa, "prompt": [{"type": "text", "text": "1"}]}
            )
            second = agent.start(
                "session/prompt", {"sessionId": sb, "prompt": [{"type": "text", "text": "2"}]}
            )
            assert agent.wait_response(first)["result"]["stopReason"] == "end_turn"
            assert agent.wait_response(second)["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
    texts = {
        sid: "".join(
            u["content"]["text"]
            for u in agent.updates(sid)
            if u["sessionUpdate"] == "agent_message_chunk"
        )
        for sid in (sa, sb)
    }
    assert sorted(texts.values()) == ["one", "two"]


def test_load_replays_the_transcript_in_a_later_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    script = [*task_script(), Turn.text_only("second answer")]
    with FakeServer("openai", script) as srv:
        task_project(ws, srv.url)
        first = AgentProcess({"session/request_permission": allow("allow-once")})
        try:
            first.initialize()
            sid = first.new_session(ws)
            first.prompt(sid, "fix add() please")
        finally:
            first.close()
        second = AgentProcess()
        try:
            second.initialize()
            loaded = second.request(
                "session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []}
            )
            assert "modes" in loaded["result"]
            replayed = [
                u for u in second.updates(sid) if u["sessionUpdate"] != "available_commands_update"
            ]
            answer = second.prompt(sid, "and now?")
            assert answer["result"]["stopReason"] == "end_turn"
            missing = second.request(
                "session/load", {"sessionId": "nope", "cwd": str(ws), "mcpServers": []}
            )
            assert missing["error"]["code"] == -32002
        finally:
            second.close()
        last = srv.requests[-1].json
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds[0] == "user_message_chunk"
    assert replayed[0]["content"]["text"] == "fix add() please"
    assert kinds.count("tool_call") == 3 and kinds.count("tool_call_update") == 3
    assert "agent_thought_chunk" in kinds and kinds[-1] == "agent_message_chunk"
    typed = [user_text(str(m.get("content", ""))) for m in last["messages"] if m["role"] == "user"]
    assert "fix add() please" in typed  # the continued request carries the replayed turn
    check_schema(second)


def test_client_mcp_server_is_used_in_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = json.dumps({"text": "one two three"})
    script = [Turn.tools([ToolSpec("mcp__example__wordcount", args)]), Turn.text_only("3 words")]
    root = str(Path(__file__).resolve().parents[2])
    server = {
        "name": "example",
        "command": sys.executable,
        "args": ["-m", "reasonix", "mcp", "example-server"],
        "env": [{"name": "PYTHONPATH", "value": root}],
    }
    agent = AgentProcess()
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, '[permissions]\nallow = ["mcp__example"]\n')
        try:
            agent.initialize()
            sid = agent.new_session(ws, [server])
            assert agent.prompt(sid, "count")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
        offered = {t["function"]["name"] for t in srv.requests[0].json["tools"]}
    assert "mcp__example__wordcount" in offered
    end = [u for u in agent.updates(sid) if u.get("status") == "completed"][-1]
    assert '"words": 3' in end["content"][0]["content"]["text"]


def test_todo_write_becomes_the_plan(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    todos = {
        "todos": [
            {"content": "Read", "status": "completed"},
            {"content": "Fix", "status": "in_progress"},
        ]
    }
    script = [Turn.tools([ToolSpec("todo_write", json.dumps(todos))]), Turn.text_only("ok")]
    agent = AgentProcess()
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            agent.prompt(sid, "plan it")
        finally:
            agent.close()
    plans = [u for u in agent.updates(sid) if u["sessionUpdate"] == "plan"]
    assert plans == [
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read", "priority": "medium", "status": "completed"},
                {"content": "Fix", "priority": "medium", "status": "in_progress"},
            ],
        }
    ]
    check_schema(agent)
