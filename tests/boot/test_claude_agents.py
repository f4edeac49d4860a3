"""Issue 35 item 1 in a runtime: ``.claude/agents/*.md`` are listed to the model, run
through ``task`` by name and by the user as ``/<name> TASK``; a broken one is a notice.

Real parts: loopback fakes, runtimes from ``build_runtime``, real agent files in the
shape of Anthropic's feature-dev plugin (tests/claude_agent_files.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_agent_files import IMPLEMENTER, REVIEWER
from fakes import FakeServer, Turn
from subagent_kit import call, calls, first_user, project, run, system, tool_names

from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands

READ_ONLY_KEPT = {"glob", "grep", "ls", "read_file", "web_fetch", "todo_write", "bash_output",
                  "use_capability"}  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    agents = d / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "code-reviewer.md").write_text(REVIEWER, encoding="utf-8")
    (agents / "implementer.md").write_text(IMPLEMENTER, encoding="utf-8")
    (agents / "broken.md").write_text("---\nname: broken\ndescription: no end\n", "utf-8")
    (d / "app.py").write_text("print('hi')\n")
    return d


def test_the_model_sees_the_agents_and_runs_one_by_name(ws: Path) -> None:
    script = [
        calls(call("task", prompt="review app.py", profile="code-reviewer")),
        calls(call("read_file", path="app.py")),
        Turn.text_only("app.py:1 prints; nothing to fix"),
        Turn.text_only("the reviewer found nothing"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "review my change")
            notices = list(rt.notices)
        finally:
            rt.close()
        parent, child = srv.requests[0], srv.requests[1]
    index = first_user(parent)
    assert "- code-reviewer [subagent] — Looks over changed code" in index
    assert "- implementer [subagent] — Makes the change" in index
    assert "code-reviewer" not in system(parent)  # the index rides in the turn, not the prefix
    assert "code-reviewer" not in json.dumps(parent.json["tools"])
    assert system(child).startswith("You are REVIEWER-PROMPT")  # the body is the prompt
    assert set(tool_names(child)) == READ_ONLY_KEPT  # its tools, read-only: no contract
    assert "app.py:1 prints" in srv.requests[3].json["messages"][-1]["content"]
    assert any(str(ws / ".claude" / "agents" / "broken.md") in n for n in notices)


def test_the_user_runs_an_agent_as_a_command(ws: Path) -> None:
    script = [Turn.text_only("REVIEW-RESULT: looks fine"), Turn.text_only("noted")]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            reg = build_commands(rt)
            help_text = reg.run("/help").text or ""
            completed = [c.text for c in reg.complete("/code-r")]
            result = reg.run("/code-reviewer look at app.py")
            run(rt, "thanks")
        finally:
            rt.close()
        follow_up = srv.requests[1]
    assert "sub-agents:" in help_text and "/code-reviewer" in help_text
    assert help_text.index("sub-agents:") < help_text.index("/code-reviewer")
    assert completed == ["/code-reviewer"]
    assert not result.error and "REVIEW-RESULT: looks fine" in (result.text or "")
    assert system(srv.requests[0]).startswith("You are REVIEWER-PROMPT")
    users = [m["content"] for m in follow_up.json["messages"] if m["role"] == "user"]
    assert users[0].endswith("/code-reviewer look at app.py")


@pytest.mark.usefixtures("untrusted")
def test_agents_are_declarations_and_load_in_an_untrusted_workspace(ws: Path) -> None:
    from reasonix.config.trust import decide

    assert decide(ws) == (False, "")  # so this test can tell
    from reasonix.config.paths import home_dir

    script = [Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        home_dir().mkdir(parents=True, exist_ok=True)
        project(home_dir(), {"p": srv.url})  # the user's own provider: always in force
        (home_dir() / "reasonix.toml").rename(home_dir() / "config.toml")
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "hello")
        finally:
            rt.close()
    assert "- code-reviewer [subagent] — " in first_user(srv.requests[0])
