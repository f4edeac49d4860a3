"""The workspace trust question over ACP: asked once, on the first prompt, as a permission request.

The user's provider lives in the user's config; the editor's folder declares a
``UserPromptSubmit`` hook in ``.claude/settings.json``. The request must parse
with the official ACP SDK's models.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import schema as acp_schema
from acp_client import AgentProcess, allow
from fakes import FakeServer, Turn

from reasonix.config import paths
from reasonix.config import trust as trust_store

pytestmark = pytest.mark.usefixtures("untrusted")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")


def clone(tmp_path: Path, url: str) -> Path:
    paths.user_config_path().write_text(
        'default_model = "fake"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )
    ws = tmp_path / "clone"
    (ws / ".claude").mkdir(parents=True)
    hook = {"hooks": [{"type": "command", "command": "touch hook-ran"}]}
    (ws / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [hook]}})
    )
    return ws


def trust_asks(agent: AgentProcess) -> list[dict[str, object]]:
    return [
        r["params"]
        for r in agent.requests
        if r["method"] == "session/request_permission"
        and r["params"]["toolCall"]["toolCallId"] == "reasonix-workspace-trust"
    ]


@pytest.mark.parametrize("answer", ["trust-always", "trust-once"])
def test_a_yes_applies_the_folders_hooks_from_the_first_prompt(tmp_path: Path, answer: str) -> None:
    agent = AgentProcess({"session/request_permission": allow(answer)})
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws = clone(tmp_path, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            first = agent.prompt(sid, "hello")
            assert (ws / "hook-ran").exists()
            (ws / "hook-ran").unlink()
            second = agent.prompt(sid, "again")
        finally:
            assert agent.close() == 0
    assert first["result"] == second["result"] == {"stopReason": "end_turn"}
    assert (ws / "hook-ran").exists()  # the rebuilt runtime keeps the hooks
    asks = trust_asks(agent)
    assert len(asks) == 1  # once
    acp_schema.RequestPermissionRequest.model_validate(asks[0])
    text = json.dumps(asks[0])
    assert "touch hook-ran" in text and str(ws) in text
    assert trust_store.is_trusted(ws) is (answer == "trust-always")
    assert len(srv.requests) == 2
    # both prompts went into the one transcript the editor knows
    assert srv.requests[1].json["messages"][1]["content"].endswith("hello") or any(
        "hello" in json.dumps(m) for m in srv.requests[1].json["messages"]
    )


def test_a_no_or_an_unanswerable_request_leaves_them_out(tmp_path: Path) -> None:
    agent = AgentProcess({"session/request_permission": allow("trust-no")})
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws = clone(tmp_path, srv.url)
        try:
            agent.initialize()
            sid = agent.new_session(ws)
            agent.prompt(sid, "hello")
            agent.prompt(sid, "again")
        finally:
            assert agent.close() == 0
    assert not (ws / "hook-ran").exists()
    assert len(trust_asks(agent)) == 1
    assert not trust_store.is_trusted(ws)
    thoughts = "".join(
        u["content"]["text"]
        for u in agent.updates(sid)
        if u["sessionUpdate"] == "agent_thought_chunk"
    )
    assert "untrusted workspace: skipped hook UserPromptSubmit" in thoughts


def test_a_trusted_or_plain_folder_is_not_asked(tmp_path: Path) -> None:
    agent = AgentProcess({"session/request_permission": allow("trust-always")})
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws = clone(tmp_path, srv.url)
        plain = tmp_path / "plain"
        plain.mkdir()
        trust_store.grant(ws)
        try:
            agent.initialize()
            agent.prompt(agent.new_session(ws), "hello")
            agent.prompt(agent.new_session(plain), "hello")
        finally:
            assert agent.close() == 0
    assert trust_asks(agent) == []
    assert (ws / "hook-ran").exists()
