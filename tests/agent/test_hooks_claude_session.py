"""Session hooks in Claude Code's shapes (issue 35, Deliver 7).

``transcript_path`` names a file in Claude's JSONL shape that a ralph-style Stop
hook can parse; Stop loops are bounded as Claude bounds them; SessionStart
matchers (startup, resume, clear, compact) are honoured; SessionEnd runs; in an
untrusted workspace the project's hooks of the new events do not run.

Real parts: the loopback fake provider, real hook scripts (tests/agent/claude_hooks)
run by /bin/sh, real settings files, the real runtime. Shapes:
code.claude.com/docs/en/hooks ("Stop and SubagentStop input", "SessionStart",
"SessionEnd") and the ralph-wiggum plugin's stop hook (anthropics/claude-code).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from hook_kit import save_stdin, settings

from reasonix.agent.events import Done, Event, Notice
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.config.paths import home_dir

HOOKS = Path(__file__).parent / "claude_hooks"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake-claude-session")
    for name in ("REASONIX_STOP_HOOK_BLOCK_CAP", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"):
        monkeypatch.delenv(name, raising=False)
    d = tmp_path / "ws"
    (d / ".claude").mkdir(parents=True)
    return d


def _project(ws: Path, url: str) -> None:
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n[sandbox]\nbash = "off"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )


def _group(command: str, matcher: str = "") -> dict[str, object]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}


def _payloads(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _users(body: dict[str, object]) -> list[str]:
    msgs = body["messages"]
    assert isinstance(msgs, list)
    return [str(m["content"]) for m in msgs if m["role"] == "user"]


def _notes(events: list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.kind == "hook"]


def test_a_ralph_style_stop_hook_reads_the_transcript_and_loops_until_the_promise(
    ws: Path,
) -> None:
    (ws / ".claude" / "loop.local.md").write_text(
        "---\niteration: 1\nmax_iterations: 0\ncompletion_promise: DONE\n---\n"
        "Make the failing test pass.\n"
    )
    settings(ws, {"Stop": [_group(f"sh {HOOKS / 'loop_stop.sh'}")]})
    script = [Turn.text_only("still red"), Turn.text_only("green now <promise>DONE</promise>")]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            events = list(rt.runner.run("start the loop", Cancel()))
            problems = list(rt.hooks.problems) if rt.hooks is not None else []
            transcript = Path(rt._hook_fields()["transcript_path"])
        finally:
            rt.close()
        assert len(srv.requests) == 2
        again = _users(srv.requests[1].json)[-1]
    assert again == "[Stop hook] Make the failing test pass."
    assert isinstance(events[-1], Done) and "green now" in events[-1].result
    assert "Stop hook: loop iteration 2" in _notes(events)  # its systemMessage
    assert not [p for p in problems if "loop:" in p]  # the hook found what it parses
    assert not (ws / ".claude" / "loop.local.md").exists()  # the promise ended the loop
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [(x["type"], x["message"]["role"]) for x in lines] == [
        ("user", "user"), ("assistant", "assistant"), ("user", "user"), ("assistant", "assistant")
    ]  # fmt: skip
    assert lines[1]["message"]["content"] == [{"type": "text", "text": "still red"}]
    assert lines[2]["parentUuid"] == lines[1]["uuid"] and lines[0]["parentUuid"] is None
    assert all(x["sessionId"] == lines[0]["sessionId"] and x["cwd"] == str(ws) for x in lines)
    assert transcript.suffix == ".jsonl" and "sessions" not in transcript.parts


def test_a_stop_hook_that_always_blocks_is_cut_off_as_claude_cuts_it_off(ws: Path) -> None:
    seen = ws.parent / "stop.jsonl"
    settings(ws, {"Stop": [_group(f"{save_stdin(seen)}; echo 'not yet' >&2; exit 2")]})
    script = [Turn.text_only(f"answer {i}") for i in range(20)]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            events = list(rt.runner.run("finish", Cancel()))
            problems = list(rt.hooks.problems) if rt.hooks is not None else []
        finally:
            rt.close()
        asked = len(srv.requests)
    assert asked == 9  # the first answer and 8 more after blocks: Claude's default cap
    stops = _payloads(seen)
    assert [p["stop_hook_active"] for p in stops] == [False] + [True] * 8
    assert stops[3]["last_assistant_message"] == "answer 3"
    capped = [n for n in _notes(events) if "9 times in a row" in n]
    assert len(capped) == 1 and capped[0] in problems
    assert isinstance(events[-1], Done) and events[-1].result == "answer 8"


def test_the_stop_cap_follows_claudes_environment_variable(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
    settings(ws, {"Stop": [_group("echo 'not yet' >&2; exit 2")]})
    with FakeServer("openai", [Turn.text_only(f"a{i}") for i in range(10)]) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("finish", Cancel()))
        finally:
            rt.close()
        assert len(srv.requests) == 3


def test_session_start_matchers_pick_the_source(ws: Path) -> None:
    settings(ws, {"SessionStart": [
        _group("echo STARTUP-CTX", "startup"), _group("echo RESUME-CTX", "resume"),
        _group("echo CLEAR-CTX", "clear"), _group("echo COMPACT-CTX", "compact"),
    ]})  # fmt: skip
    script = [Turn.text_only(f"r{i}") for i in range(4)]
    every = ("STARTUP-CTX", "RESUME-CTX", "CLEAR-CTX", "COMPACT-CTX")
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("one", Cancel()))
            rt.switch_model(rt.resolved.ref)  # /model: the same session goes on
            list(rt.runner.run("two", Cancel()))  # no SessionStart on a later turn
            rt.new_session()  # /new
            list(rt.runner.run("three", Cancel()))
            context = rt.context
            assert context is not None and context.before_summary is not None
            context.before_summary("manual", "")  # what the context manager calls first
            list(rt.runner.run("four", Cancel()))
        finally:
            rt.close()
        said = [_users(r.json)[-1] for r in srv.requests]
    assert [[m for m in every if m in text] for text in said] == [
        ["STARTUP-CTX"], [], ["CLEAR-CTX"], ["COMPACT-CTX"]
    ]  # fmt: skip


def test_resuming_runs_resume_hooks_only(ws: Path) -> None:
    settings(ws, {"SessionStart": [_group("echo STARTUP-CTX", "startup"),
                                    _group("echo RESUME-CTX", "resume")]})  # fmt: skip
    with FakeServer("openai", [Turn.text_only("a"), Turn.text_only("b")]) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("one", Cancel()))
        finally:
            rt.close()
        rt = build_runtime(RuntimeOptions(workspace=ws, resume=""))
        try:
            list(rt.runner.run("two", Cancel()))
        finally:
            rt.close()
        last = _users(srv.requests[1].json)[-1]
    assert "RESUME-CTX" in last and "STARTUP-CTX" not in last


def test_session_end_runs_on_new_and_on_close(ws: Path) -> None:
    seen = ws.parent / "end.jsonl"
    settings(ws, {"SessionEnd": [_group(save_stdin(seen))]})
    with FakeServer("openai", [Turn.text_only("a")]) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        first = rt.session.id
        list(rt.runner.run("one", Cancel()))
        rt.new_session()
        second = rt.session.id
        rt.close()
        rt.close()  # idempotent: SessionEnd once
    ends = _payloads(seen)
    assert [(p["reason"], p["session_id"]) for p in ends] == [("clear", first), ("other", second)]
    assert ends[0]["hook_event_name"] == "SessionEnd"


def test_an_untrusted_workspace_runs_none_of_its_new_hook_events(ws: Path, untrusted: None) -> None:
    ran = ws.parent / "ran.jsonl"
    settings(
        ws,
        {
            event: [_group(save_stdin(ran))]
            for event in ("SessionEnd", "PostToolUseFailure", "SubagentStart", "PermissionRequest")
        },
    )
    with FakeServer("openai", [Turn.text_only("a")]) as srv:
        _project(ws, srv.url)  # untrusted, the project's providers are left out: use home's
        home_dir().mkdir(parents=True, exist_ok=True)
        (home_dir() / "config.toml").write_text((ws / "reasonix.toml").read_text())
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            list(rt.runner.run("one", Cancel()))
            warned = "\n".join(rt.notices)
        finally:
            rt.close()
    assert not ran.exists()
    assert "SessionEnd" in warned and "PermissionRequest" in warned
