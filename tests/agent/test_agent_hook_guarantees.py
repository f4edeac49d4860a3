"""Hook guarantees a deliberate break once left unnoticed (issue 34, item 7).

A PreToolUse "allow" never passes an explicit ``ask`` rule; SessionStart and
Notification hooks run at all (with their payloads); a hook never sees a
provider key in its environment. Real parts: the loopback fake provider, real
hook commands run by /bin/sh, real settings files, the real runtime and gate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn
from hook_kit import hook, project, save_stdin, settings

from reasonix.agent.events import ApprovalRequested, Done, Event
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel

KEY = "sk-fake-hook-guarantees-7f3a"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", KEY)
    monkeypatch.setenv("REASONIX_TEST_MARKER", "plain-variable-passes")
    d = tmp_path / "ws"
    (d / ".claude").mkdir(parents=True)
    return d


def _payloads(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _run_answering(ws: Path, text: str, answer: object = None) -> tuple[list[Event], list[str]]:
    """One interactive turn; every approval question is answered ``answer`` (None: deny)."""
    rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
    events: list[Event] = []
    asked: list[str] = []
    try:
        for ev in rt.runner.run(text, Cancel()):
            events.append(ev)
            if isinstance(ev, ApprovalRequested):
                asked.append(f"{ev.request.tool_name} {ev.request.summary}")
                ev.answer(answer)
    finally:
        rt.close()
    return events, asked


def _edit(path: str) -> ToolSpec:
    args = {"path": path, "old_string": "old", "new_string": "new"}
    return ToolSpec("edit_file", json.dumps(args))


def test_a_hook_allow_never_passes_an_explicit_ask_rule(ws: Path) -> None:
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    settings(ws, {"PreToolUse": hook(f"echo '{allow}'", "Edit")})
    (ws / "guarded.txt").write_text("old\n")
    (ws / "free.txt").write_text("old\n")
    script = [
        Turn.tools([_edit("free.txt")]),
        Turn.tools([_edit("guarded.txt")]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, '\n[permissions]\nask = ["Edit(guarded.txt)"]\n')
        events, asked = _run_answering(ws, "edit both")
        assert isinstance(events[-1], Done)
        results = [m["content"] for m in srv.requests[2].json["messages"] if m["role"] == "tool"]
    # the hook's allow stood in for the ordinary question about free.txt ...
    assert (ws / "free.txt").read_text() == "new\n"
    # ... but the explicit ask rule still put guarded.txt to the human, who said no
    assert len(asked) == 1 and "guarded.txt" in asked[0], asked
    assert (ws / "guarded.txt").read_text() == "old\n"
    assert str(results[-1]).startswith("blocked: edit_file was not run")


def test_session_start_hook_runs_once_and_its_stdout_is_context(ws: Path) -> None:
    seen = ws.parent / "session-start.jsonl"
    settings(ws, {"SessionStart": hook(f"{save_stdin(seen)}; echo SESSION-CONTEXT-31")})
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("first", Cancel()))
            list(rt.runner.run("second", Cancel()))
        finally:
            rt.close()
        first, second = srv.requests[0].json, srv.requests[1].json
    payloads = _payloads(seen)
    assert [p["hook_event_name"] for p in payloads] == ["SessionStart"]  # once per process
    assert payloads[0]["source"] == "startup" and payloads[0]["cwd"] == str(ws)
    users = [m["content"] for m in first["messages"] if m["role"] == "user"]
    assert "SESSION-CONTEXT-31" in users[-1] and "first" in users[-1]
    assert first["messages"][0] == second["messages"][0]  # never in the system prompt


def test_session_start_says_resume_for_a_continued_session(ws: Path) -> None:
    seen = ws.parent / "session-start.jsonl"
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("first", Cancel()))
        finally:
            rt.close()
        settings(ws, {"SessionStart": hook(save_stdin(seen))})
        rt = build_runtime(RuntimeOptions(workspace=ws, continue_latest=True))
        try:
            list(rt.runner.run("second", Cancel()))
        finally:
            rt.close()
    assert [p["source"] for p in _payloads(seen)] == ["resume"]


def test_a_notification_hook_runs_when_a_question_waits(ws: Path) -> None:
    seen = ws.parent / "notification.jsonl"
    settings(ws, {"Notification": hook(save_stdin(seen))})
    (ws / "a.txt").write_text("old\n")
    script = [Turn.tools([_edit("a.txt")]), Turn.text_only("done")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _, asked = _run_answering(ws, "edit a.txt")
    assert len(asked) == 1
    payloads = _payloads(seen)
    assert [p["hook_event_name"] for p in payloads] == ["Notification"]
    assert "permission" in str(payloads[0]["message"]) and "a.txt" in str(payloads[0]["message"])
    assert payloads[0]["session_id"]


def test_hooks_never_see_provider_keys(ws: Path) -> None:
    dump = ws.parent / "hook-env.json"
    code = f"import json, os; json.dump(dict(os.environ), open({str(dump)!r}, 'w'))"
    settings(ws, {"UserPromptSubmit": hook(f"{sys.executable} -c {json.dumps(code)}")})
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("hello", Cancel()))
        finally:
            rt.close()
        assert srv.requests[0].header("Authorization") == f"Bearer {KEY}"  # the key is in use
    env = json.loads(dump.read_text())
    assert env.get("REASONIX_TEST_MARKER") == "plain-variable-passes"  # the hook got an env
    assert "FAKE_PROVIDER_KEY" not in env
    assert KEY not in json.dumps(env)  # under no other name either
