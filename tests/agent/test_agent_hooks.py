"""User hooks in Claude Code's format, run for real around a real runtime.

Real parts: the loopback fake provider, real hook scripts run by /bin/sh (and
bubblewrap, where the sandbox applies), real settings files in the workspace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.events import Done, Error, Notice
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.config import load
from reasonix.config.paths import sessions_dir
from reasonix.errors import ConfigError


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake-hooks")
    d = tmp_path / "ws"
    (d / ".claude").mkdir(parents=True)
    return d


def _project(ws: Path, url: str, extra: str = "") -> None:
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n[sandbox]\nbash = "off"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n' + extra
    )


def _settings(ws: Path, hooks: dict[str, object]) -> None:
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def _hook(matcher: str, command: str) -> list[dict[str, object]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def _run(ws: Path, text: str, **opts: object) -> list[object]:
    rt = build_runtime(RuntimeOptions(workspace=ws, **opts))  # type: ignore[arg-type]
    try:
        return list(rt.runner.run(text, Cancel()))
    finally:
        rt.close()


def _tool_texts(body: dict[str, object]) -> list[str]:
    msgs = body["messages"]
    assert isinstance(msgs, list)
    return [str(m["content"]) for m in msgs if m["role"] == "tool"]


def test_pre_tool_use_exit_2_blocks_bash_rm_and_the_model_sees_why(ws: Path) -> None:
    guard = ws / "guard.sh"
    guard.write_text(
        '#!/bin/sh\ncmd=$(python3 -c "import json,sys; print(json.load(sys.stdin)'
        "['tool_input']['command'])\")\n"
        'case "$cmd" in rm*) echo "rm is not allowed here" >&2; exit 2;; esac\nexit 0\n'
    )
    guard.chmod(0o755)
    _settings(ws, {"PreToolUse": _hook("Bash", f"{guard}")})
    (ws / "keep.txt").write_text("precious")
    script = [Turn.tools([ToolSpec("bash", '{"command": "rm keep.txt"}')]), Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        events = _run(ws, "clean up", yolo=True)
        assert isinstance(events[-1], Done)
        tool = _tool_texts(srv.requests[1].json)[0]
    assert "PreToolUse hook: rm is not allowed here" in tool
    assert (ws / "keep.txt").read_text() == "precious"


def test_post_tool_use_sees_the_result_on_stdin(ws: Path) -> None:
    seen = ws / "seen.json"
    _settings(ws, {"PostToolUse": _hook("Read|read_file", f"cat > {seen}")})
    (ws / "a.txt").write_text("alpha beta\n")
    script = [Turn.tools([ToolSpec("read_file", '{"path": "a.txt"}')]), Turn.text_only("done")]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        _run(ws, "read a.txt")
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PostToolUse" and payload["tool_name"] == "Read"
    assert payload["tool_input"]["file_path"] == str(ws / "a.txt")  # absolute, as Claude's
    assert payload["tool_input"]["path"] == "a.txt"  # our own name, as the model wrote it
    assert payload["tool_response"]["file"]["content"] == "alpha beta\n"  # Read's shape
    assert payload["session_id"] and payload["cwd"] == str(ws)


def test_user_prompt_context_reaches_the_request_but_not_the_system_prompt(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("a"), Turn.text_only("b")]) as srv:
        _project(ws, srv.url)
        _run(ws, "first")
        reply = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                        "additionalContext": "HOOK-CONTEXT-42"}}  # fmt: skip
        _settings(ws, {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": f"echo '{json.dumps(reply)}'"}]}]})  # fmt: skip
        _run(ws, "second")
        plain, hooked = srv.requests[0].json, srv.requests[1].json
    assert plain["messages"][0] == hooked["messages"][0]  # the system prompt, byte for byte
    assert plain["messages"][0]["role"] == "system"
    users = [m["content"] for m in hooked["messages"] if m["role"] == "user"]
    assert "HOOK-CONTEXT-42" in users[-1] and "second" in users[-1]


def test_user_prompt_exit_2_blocks_the_prompt_and_keeps_it_out(ws: Path) -> None:
    _settings(ws, {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'no secrets in prompts' >&2; exit 2"}]}]})  # fmt: skip
    with FakeServer("openai", []) as srv:
        _project(ws, srv.url)
        events = _run(ws, "my password is hunter2")
        assert not srv.requests  # nothing was sent
    assert isinstance(events[-1], Error) and "no secrets in prompts" in events[-1].message
    transcripts = list(sessions_dir(ws.resolve()).glob("*.jsonl"))
    assert transcripts  # the session exists, but the blocked prompt never reached it
    assert all("hunter2" not in t.read_text() for t in transcripts)


def test_a_hook_allow_never_replaces_a_fresh_approval(ws: Path) -> None:
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    _settings(ws, {"PreToolUse": _hook("Bash", f"echo '{allow}'")})
    script = [
        Turn.tools([ToolSpec("bash", '{"command": "echo plain-ok"}')]),
        Turn.tools([ToolSpec("bash", '{"command": "bash -c \\"echo nested\\""}')]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        _run(ws, "go")  # headless, ask mode: no human to answer
        first, second = _tool_texts(srv.requests[1].json)[0], _tool_texts(srv.requests[2].json)[1]
    assert "plain-ok" in first  # the hook's allow stood in for an ordinary prompt
    assert second.startswith("blocked: bash was not run")


def test_stop_hook_keeps_the_turn_going_once(ws: Path) -> None:
    flag = ws / "stopped-once"
    once = f'test -e {flag} && exit 0; touch {flag}; echo "run the tests first" >&2; exit 2'
    _settings(ws, {"Stop": [{"hooks": [{"type": "command", "command": once}]}]})
    with FakeServer("openai", [Turn.text_only("all done"), Turn.text_only("tests ran")]) as srv:
        _project(ws, srv.url)
        events = _run(ws, "finish")
        assert len(srv.requests) == 2
        last_user = [m for m in srv.requests[1].json["messages"] if m["role"] == "user"][-1]
    assert "run the tests first" in last_user["content"]
    assert isinstance(events[-1], Done) and events[-1].result == "tests ran"


def test_a_slow_or_failing_hook_is_a_notice_not_a_failure(ws: Path) -> None:
    _project(ws, "http://127.0.0.1:9")
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "sleep 5", "timeout": 0.3},
                   {"type": "command", "command": "exit 1"}]}]}}))  # fmt: skip
    with FakeServer("openai", [Turn.text_only("fine")]) as srv:
        _project(ws, srv.url)
        events = _run(ws, "hello")
    notes = [e.text for e in events if isinstance(e, Notice) and e.kind == "hook"]
    assert any("timed out" in n for n in notes) and any("failed" in n for n in notes)
    assert isinstance(events[-1], Done) and events[-1].result == "fine"


def test_hooks_run_inside_the_bash_sandbox(ws: Path, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap MISSING (installed by .ci/run)")
    outside = tmp_path / "outside"
    outside.mkdir()
    escape = f"touch {outside}/escaped; touch inside.txt"
    _settings(ws, {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": escape}]}]})
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        _project(ws, srv.url)
        text = (ws / "reasonix.toml").read_text().replace('bash = "off"', 'bash = "enforce"')
        (ws / "reasonix.toml").write_text(text)
        _run(ws, "hi")
    assert (ws / "inside.txt").exists() and not (outside / "escaped").exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": ""}]}]}}',
         "non-empty command"),
        ('{"hooks": {"Stop": {"not": "a list"}}}', "expected a list"),
        ('{"hooks": [1, 2]}', "expected a table"),
        ('{"hooks": {"PreToolUse": [{"hooks": [{"command": "x", "timeout": -1}]}]}}', "> 0"),
        ('{\n  "hooks": {,\n}', "invalid JSON"),
    ],
)  # fmt: skip
def test_a_malformed_settings_file_names_the_file(ws: Path, content: str, needle: str) -> None:
    (ws / ".claude" / "settings.local.json").write_text(content)
    with pytest.raises(ConfigError, match=needle) as info:
        load(ws)
    assert info.value.file is not None and info.value.file.endswith("settings.local.json")


def test_toml_hooks_and_unknown_events(ws: Path) -> None:
    _project(ws, "http://127.0.0.1:9", '[[hooks.PreToolUse]]\nmatcher = "Edit"\n'
             'hooks = [{ type = "command", command = "true", timeout = 5 }]\n'
             '[[hooks.NoSuchEvent]]\nhooks = []\n')  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}'
    )
    cfg = load(ws)
    assert [(h.event, h.matcher, h.timeout) for h in cfg.hooks] == [("PreToolUse", "Edit", 5.0)]
    assert any("NoSuchEvent" in w for w in cfg.warnings)
    assert any("'prompt' is not supported" in w for w in cfg.warnings)
    assert cfg.hooks[0].matches(("edit_file", "Edit")) and not cfg.hooks[0].matches(("bash",))
