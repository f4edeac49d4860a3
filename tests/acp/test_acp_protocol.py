"""Protocol edges: errors with codes, modes and config options, cancelled questions, close."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import schema as acp_schema
from acp_client import AgentProcess, project
from fakes import FakeServer, ToolSpec, Turn

FIX = json.dumps({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")


def test_wrong_methods_and_params_are_errors_not_crashes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agent = AgentProcess()
    with FakeServer("openai", []) as srv:
        project(ws, srv.url)
        try:
            agent.initialize()
            assert agent.request("session/fly", {})["error"]["code"] == -32601
            assert agent.request("session/new", {"mcpServers": []})["error"]["code"] == -32602
            rel = agent.request("session/new", {"cwd": "relative/dir", "mcpServers": []})
            assert rel["error"]["code"] == -32602
            gone = agent.request("session/new", {"cwd": str(tmp_path / "nope"), "mcpServers": []})
            assert gone["error"]["code"] == -32602 and "not a directory" in gone["error"]["message"]
            bad_mcp = agent.request("session/new", {"cwd": str(ws), "mcpServers": [{"name": 5}]})
            assert bad_mcp["error"]["code"] == -32602
            unknown = agent.request("session/prompt", {"sessionId": "x", "prompt": []})
            assert unknown["error"]["code"] == -32002
            sid = agent.new_session(ws)
            empty = agent.request("session/prompt", {"sessionId": sid, "prompt": []})
            assert empty["error"]["code"] == -32602
            shape = agent.request("session/prompt", {"sessionId": sid, "prompt": [{"text": 1}]})
            assert shape["error"]["code"] == -32602
            assert (
                agent.request("session/set_mode", {"sessionId": sid, "modeId": "wild"})["error"][
                    "code"
                ]
                == -32602
            )
            agent.notify("session/cancel", {"sessionId": "no-such-session"})  # ignored
            agent.notify("no/such/notification", {})  # ignored, never answered
            failed = agent.prompt(sid, "hello")  # the exhausted script answers HTTP 400
            assert failed["error"]["code"] == -32603 and "400" in failed["error"]["message"]
        finally:
            assert agent.close() == 0
    assert "Traceback" not in agent.log.getvalue()
    for message in agent.messages:
        assert message["jsonrpc"] == "2.0"
        if "method" not in message:  # a response: exactly one of result and error
            assert ("result" in message) != ("error" in message)


def test_modes_and_config_options(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agent = AgentProcess()
    with FakeServer("openai", [Turn.text_only("hi")]) as srv:
        project(ws, srv.url)
        try:
            agent.initialize()
            created = agent.request("session/new", {"cwd": str(ws), "mcpServers": []})["result"]
            acp_schema.NewSessionResponse.model_validate(created)
            sid = created["sessionId"]
            assert created["modes"]["currentModeId"] == "ask"
            ids = [m["id"] for m in created["modes"]["availableModes"]]
            assert ids == ["ask", "acceptEdits", "auto", "plan", "dontAsk", "bypassPermissions"]
            options = {o["id"]: o for o in created["configOptions"]}
            assert options["model"]["currentValue"] == "fake/fake-model"
            assert {"fake/fake-model", "fake/other-model"} <= {
                v["value"] for v in options["model"]["options"]
            }
            assert (
                agent.request("session/set_mode", {"sessionId": sid, "modeId": "plan"})["result"]
                == {}
            )
            agent.wait_for(
                lambda m: (
                    m.get("method") == "session/update"
                    and m["params"]["update"].get("currentModeId") == "plan"
                )
            )
            changed = agent.request(
                "session/set_config_option",
                {"sessionId": sid, "configId": "model", "value": "fake/other-model"},
            )
            values = {o["id"]: o["currentValue"] for o in changed["result"]["configOptions"]}
            assert values == {"mode": "plan", "model": "fake/other-model", "effort": "default"}
            effort = agent.request(
                "session/set_config_option",
                {"sessionId": sid, "configId": "effort", "value": "high"},
            )
            assert {o["id"]: o["currentValue"] for o in effort["result"]["configOptions"]}[
                "effort"
            ] == "high"
            bad = agent.request(
                "session/set_config_option",
                {"sessionId": sid, "configId": "model", "value": "evil/none"},
            )
            assert bad["error"]["code"] == -32602
            agent.prompt(sid, "hi")
            assert agent.request("session/close", {"sessionId": sid})["result"] == {}
            after = agent.request(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "x"}]}
            )
            assert after["error"]["code"] == -32002
        finally:
            agent.close()
        assert srv.requests[0].json["model"] == "other-model"


def test_a_cancelled_or_failed_question_is_a_deny(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outcomes = iter([{"outcome": {"outcome": "cancelled"}}, {"nonsense": True}])
    agent = AgentProcess({"session/request_permission": lambda p: next(outcomes)})
    script = [
        Turn.tools([ToolSpec("edit_file", FIX)]),
        Turn.tools([ToolSpec("edit_file", FIX)]),
        Turn.text_only("gave up"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            assert agent.prompt(sid, "fix")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
    assert "a - b" in (ws / "calc.py").read_text()
    ends = [u for u in agent.updates(sid) if u.get("status") == "failed"]
    assert len(ends) == 2 and all("declined" in e["content"][0]["content"]["text"] for e in ends)


def test_prompt_content_blocks_and_a_busy_session(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    slow = Turn(text=[f"w{i} " for i in range(100)], delay=0.05)
    agent = AgentProcess()
    with FakeServer("openai", [slow]) as srv:
        project(ws, srv.url)
        (ws / "notes.md").write_text("linked file body\n")
        blocks = [
            {"type": "text", "text": "look at these"},
            {"type": "resource_link", "uri": (ws / "notes.md").as_uri(), "name": "notes.md"},
            {
                "type": "resource",
                "resource": {"uri": "file:///elsewhere/x.py", "text": "embedded unsaved text"},
            },
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        ]
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            first = agent.start("session/prompt", {"sessionId": sid, "prompt": blocks})
            agent.wait_for(
                lambda m: (
                    m.get("method") == "session/update"
                    and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                )
            )
            busy = agent.request("session/prompt", {"sessionId": sid, "prompt": blocks})
            assert busy["error"]["code"] == -32600
            agent.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": first}}
            )
            assert agent.wait_response(first)["result"]["stopReason"] == "cancelled"
        finally:
            agent.close()
        sent = srv.requests[0].json["messages"][-1]["content"]
    assert "look at these" in sent and "linked file body" in sent
    assert '<file path="notes.md">' in sent and "embedded unsaved text" in sent
    assert "data" not in sent and "AAAA" not in sent
    notes = [
        u["content"]["text"]
        for u in agent.updates(sid)
        if u["sessionUpdate"] == "agent_thought_chunk"
    ]
    assert any("image content is not supported" in n for n in notes)


def test_authenticate_checks_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    monkeypatch.chdir(tmp_path)
    project(ws, "http://127.0.0.1:9")
    agent = AgentProcess()
    try:
        init = agent.initialize()
        assert init["authMethods"][0]["id"] == "provider-key"
        monkeypatch.delenv("FAKE_PROVIDER_KEY")
        monkeypatch.chdir(ws)
        missing = agent.request("session/new", {"cwd": str(ws), "mcpServers": []})
        assert missing["error"]["code"] == -32000  # authentication required
        assert (
            agent.request("authenticate", {"methodId": "provider-key"})["error"]["code"] == -32000
        )
        monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-now")
        assert agent.request("authenticate", {"methodId": "provider-key"})["result"] == {}
        assert agent.request("authenticate", {"methodId": "other"})["error"]["code"] == -32602
    finally:
        agent.close()


def test_cancel_while_a_question_is_open_ends_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    asked = threading.Event()
    release = threading.Event()
    answered = threading.Event()

    def slow_answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        release.wait()  # the editor answers only when the test lets it (after the turn ended)
        answered.set()
        return {"outcome": {"outcome": "cancelled"}}

    agent = AgentProcess({"session/request_permission": slow_answer})
    script = [Turn.tools([ToolSpec("edit_file", FIX)]), Turn.text_only("next turn")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            pending = agent.start(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
            )
            assert asked.wait(30)
            agent.notify("session/cancel", {"sessionId": sid})
            assert agent.wait_response(pending, 30)["result"] == {"stopReason": "cancelled"}
            # the cancel ended the turn by itself: the editor has still not answered
            assert not answered.is_set()
            release.set()
            agent.wait_for(lambda m: m.get("method") == "$/cancel_request")
            assert agent.prompt(sid, "again")["result"]["stopReason"] == "end_turn"
        finally:
            release.set()
            agent.close()
    assert "a - b" in (ws / "calc.py").read_text()


def test_auto_and_bypass_postures_decide_as_in_run(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agent = AgentProcess()  # it answers no permission question: none may be asked
    script = [Turn.tools([ToolSpec("edit_file", FIX)]), Turn.text_only("done")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            agent.request("session/set_mode", {"sessionId": sid, "modeId": "auto"})
            assert agent.prompt(sid, "fix")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
    assert agent.requests == [] and "a + b" in (ws / "calc.py").read_text()


def test_slash_commands_come_from_the_command_layer(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".reasonix" / "commands").mkdir(parents=True)
    (ws / ".reasonix" / "commands" / "greet.md").write_text(
        "---\ndescription: say hello\n---\nSay hello to $ARGUMENTS\n"
    )
    agent = AgentProcess()
    with FakeServer("openai", [Turn.text_only("hello Ada")]) as srv:
        project(ws, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            agent.wait_for(
                lambda m: (
                    m.get("method") == "session/update"
                    and m["params"]["update"]["sessionUpdate"] == "available_commands_update"
                )
            )
            assert agent.prompt(sid, "/greet Ada")["result"]["stopReason"] == "end_turn"
            assert agent.prompt(sid, "/status")["result"]["stopReason"] == "end_turn"
            assert agent.prompt(sid, "/new")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
        sent = srv.requests[0].json["messages"][-1]["content"]
    listed = next(
        u for u in agent.updates(sid) if u["sessionUpdate"] == "available_commands_update"
    )
    names = {c["name"] for c in listed["availableCommands"]}
    assert {"greet", "status", "compact"} <= names and not names & {"exit", "new", "clear"}
    assert "Say hello to Ada" in sent and len(srv.requests) == 1  # /status, /new: no model call
    texts = [
        u["content"]["text"]
        for u in agent.updates(sid)
        if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert any("fake/fake-model" in t for t in texts)  # /status shows the model
    assert any("editor" in t for t in texts)  # /new is the editor's business


def test_plan_mode_plan_is_shown_and_approved_in_the_editor(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    plan = "# Fix add\n## Steps\n- Read calc.py\n- Replace a - b with a + b\n"
    agent = AgentProcess(
        {
            "session/request_permission": lambda p: {
                "outcome": {"outcome": "selected", "optionId": "allow-once"}
            }
        }
    )
    script = [
        Turn.tools([ToolSpec("exit_plan_mode", json.dumps({"plan": plan}))]),
        Turn.text_only("Carrying out the plan."),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            agent.request("session/set_mode", {"sessionId": sid, "modeId": "plan"})
            assert agent.prompt(sid, "fix add")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
    asks = [r["params"] for r in agent.requests if r["method"] == "session/request_permission"]
    assert len(asks) == 1
    call = asks[0]["toolCall"]
    assert (
        call["kind"] == "switch_mode" and "Replace a - b" in call["content"][0]["content"]["text"]
    )
    plans = [u for u in agent.updates(sid) if u["sessionUpdate"] == "plan"]
    assert [e["content"] for e in plans[0]["entries"]] == [
        "Read calc.py",
        "Replace a - b with a + b",
    ]
    modes = [
        u["currentModeId"]
        for u in agent.updates(sid)
        if u["sessionUpdate"] == "current_mode_update"
    ]
    assert modes[0] == "plan" and modes[-1] != "plan"  # approving the plan left Plan mode
    check = [
        u for u in agent.updates(sid) if u["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]
    assert check[-1]["status"] == "completed"


def test_a_planner_plan_becomes_the_editor_plan(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    answer = "<plan>\n# Fix add\n## Steps\n- Read calc.py\n- Fix the sign\n</plan>"
    agent = AgentProcess()
    with FakeServer("openai", [Turn.text_only(answer)]) as srv:
        project(ws, srv.url, '[agent]\nplanner_model = "fake/other-model"\n')
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            done = agent.prompt(sid, "plan only: fix add() in calc.py")
            assert done["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
        assert srv.requests[0].json["model"] == "other-model"  # the planner answered
    plans = [u for u in agent.updates(sid) if u["sessionUpdate"] == "plan"]
    assert [e["content"] for e in plans[-1]["entries"]] == ["Read calc.py", "Fix the sign"]
