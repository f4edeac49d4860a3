"""Tool hooks in Claude Code's shapes (issue 35, Deliver 7).

Hook input carries ``tool_use_id``, absolute paths, Claude's ``permission_mode``
names and per-tool ``tool_response`` objects; PreToolUse ``updatedInput`` is
applied after the permission check sees it; PreToolUse ``additionalContext``
reaches the model; PostToolUseFailure and PermissionRequest run; a hook's
``systemMessage`` and unreadable JSON reach the user.

Real parts: the loopback fake provider, real hook scripts (tests/agent/claude_hooks,
written in the shapes of Anthropic's hook examples) run by /bin/sh and python,
real settings files, the real runtime and gate. Shapes: code.claude.com/docs/en/hooks
("Hook input", "PostToolUse input", "PreToolUse decision control", "PermissionRequest").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn
from hook_kit import hook, project, save_stdin, settings

from reasonix.agent.events import Done, Event, Notice
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel

HOOKS = Path(__file__).parent / "claude_hooks"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake-claude-shapes")
    d = tmp_path / "ws"
    (d / ".claude").mkdir(parents=True)
    return d


def _reply(obj: object) -> str:
    """A hook command printing ``obj`` as its JSON answer."""
    return f"{sys.executable} -c {json.dumps(f'print({json.dumps(json.dumps(obj))})')}"


def _payloads(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _run(ws: Path, text: str, **opts: object) -> tuple[list[Event], list[str]]:
    rt = build_runtime(RuntimeOptions(workspace=ws, **opts))  # type: ignore[arg-type]
    try:
        events = list(rt.runner.run(text, Cancel()))
        return events, list(rt.hooks.problems) if rt.hooks is not None else []
    finally:
        rt.close()


def _tool_texts(body: dict[str, object]) -> list[str]:
    msgs = body["messages"]
    assert isinstance(msgs, list)
    return [str(m["content"]) for m in msgs if m["role"] == "tool"]


def test_the_bash_validator_blocks_grep_and_the_model_reads_why(ws: Path) -> None:
    settings(ws, {"PreToolUse": hook(f"{sys.executable} {HOOKS / 'validate_bash.py'}", "Bash")})
    calls = [ToolSpec("bash", '{"command": "grep -r TODO ."}', id="toolu_01A")]
    script = [Turn.tools(calls), Turn.tools([ToolSpec("bash", '{"command": "echo fine"}')]),
              Turn.text_only("ok")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        events, _ = _run(ws, "find the todos", yolo=True)
        blocked = _tool_texts(srv.requests[1].json)[0]
        ran = _tool_texts(srv.requests[2].json)[-1]
    assert isinstance(events[-1], Done)
    assert blocked.startswith("blocked: bash was not run (PreToolUse hook:")
    assert "Use 'rg' (ripgrep) instead of 'grep'" in blocked
    assert "fine" in ran  # a command the validator accepts runs


def test_tool_input_carries_tool_use_id_absolute_paths_and_claude_mode_names(ws: Path) -> None:
    seen = ws.parent / "pre.jsonl"
    settings(ws, {"PreToolUse": hook(save_stdin(seen), "Write|Read")})
    (ws / "src").mkdir()
    (ws / "src" / "a.txt").write_text("alpha\n")
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "src/a.txt"}', id="toolu_read_7")]),
        Turn.tools([ToolSpec("write_file", '{"path": "src/b.txt", "content": "b"}', id="w_8")]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _run(ws, "go", permission_mode="acceptEdits")
    read, write = _payloads(seen)
    assert read["tool_use_id"] == "toolu_read_7" and write["tool_use_id"] == "w_8"
    assert read["tool_name"] == "Read" and write["tool_name"] == "Write"
    assert read["tool_input"]["file_path"] == str(ws / "src" / "a.txt")
    assert write["tool_input"]["file_path"] == str(ws / "src" / "b.txt")
    assert read["permission_mode"] == write["permission_mode"] == "acceptEdits"


def test_ask_mode_is_called_default_as_in_claude_code(ws: Path) -> None:
    seen = ws.parent / "prompt.jsonl"
    settings(ws, {"UserPromptSubmit": hook(save_stdin(seen))})
    with FakeServer("openai", [Turn.text_only("hi")]) as srv:
        project(ws, srv.url)
        _run(ws, "hello")
    assert _payloads(seen)[0]["permission_mode"] == "default"


def test_post_tool_use_gets_claudes_tool_response_objects(ws: Path) -> None:
    seen = ws.parent / "post.jsonl"
    settings(ws, {"PostToolUse": hook(save_stdin(seen))})
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    script = [
        Turn.tools([ToolSpec("bash", '{"command": "echo out; echo err >&2"}', id="b1")]),
        Turn.tools([ToolSpec("edit_file", json.dumps(
            {"path": "notes.txt", "old_string": "two", "new_string": "TWO"}), id="e1")]),
        Turn.tools([ToolSpec("write_file", '{"path": "new.txt", "content": "fresh\\n"}', id="w1")]),
        Turn.tools([ToolSpec("read_file", '{"path": "notes.txt", "offset": 1}', id="r1")]),
        Turn.text_only("done"),
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _run(ws, "go", yolo=True)
    by_id = {str(p["tool_use_id"]): p["tool_response"] for p in _payloads(seen)}
    bash = by_id["b1"]
    assert isinstance(bash, dict)
    assert bash["stdout"] in ("out\nerr\n", "err\nout\n") and bash["stderr"] == ""
    assert bash["interrupted"] is False and "[exit code" not in bash["stdout"]
    edit = by_id["e1"]
    assert isinstance(edit, dict)
    assert edit["filePath"] == str(ws / "notes.txt")
    assert (edit["oldString"], edit["newString"]) == ("two", "TWO")
    assert edit["originalFile"] == "one\ntwo\nthree\n" and edit["replaceAll"] is False
    hunk = edit["structuredPatch"][0]
    assert "-two" in hunk["lines"] and "+TWO" in hunk["lines"] and hunk["oldStart"] == 1
    write = by_id["w1"]
    assert write == {"type": "create", "filePath": str(ws / "new.txt"), "content": "fresh\n",
                     "structuredPatch": write["structuredPatch"], "originalFile": None}  # fmt: skip
    read = by_id["r1"]
    assert isinstance(read, dict) and read["type"] == "text"
    assert read["file"] == {"filePath": str(ws / "notes.txt"), "content": "TWO\nthree\n",
                            "numLines": 2, "startLine": 2, "totalLines": 3}  # fmt: skip


def test_a_failed_call_goes_to_post_tool_use_failure_not_post_tool_use(ws: Path) -> None:
    post, failed = ws.parent / "post.jsonl", ws.parent / "failed.jsonl"
    context = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                                      "additionalContext": "FAILURE-HINT-35"}}  # fmt: skip
    settings(ws, {
        "PostToolUse": hook(save_stdin(post), "Bash"),
        "PostToolUseFailure": hook(f"{save_stdin(failed)}; {_reply(context)}", "Bash"),
    })  # fmt: skip
    script = [Turn.tools([ToolSpec("bash", '{"command": "echo no >&2; exit 3"}', id="f1")]),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _run(ws, "go", yolo=True)
        result = _tool_texts(srv.requests[1].json)[0]
    assert _payloads(post) == []
    (payload,) = _payloads(failed)
    assert payload["hook_event_name"] == "PostToolUseFailure" and payload["tool_use_id"] == "f1"
    assert "exit code 3" in str(payload["error"]) and payload["is_interrupt"] is False
    assert result.endswith("FAILURE-HINT-35")


def test_updated_input_is_applied_and_the_model_reads_pre_tool_context(ws: Path) -> None:
    answer = {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "updatedInput": {"command": "echo rewritten-by-hook"},
        "additionalContext": "PRE-CONTEXT-35"}}  # fmt: skip
    settings(ws, {"PreToolUse": hook(_reply(answer), "Bash")})
    script = [Turn.tools([ToolSpec("bash", '{"command": "echo original"}')]),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _run(ws, "go")  # headless ask mode: the hook's allow stands in for the prompt
        result = _tool_texts(srv.requests[1].json)[0]
    assert "rewritten-by-hook" in result and "original" not in result
    assert result.endswith("PRE-CONTEXT-35")


def test_updated_input_passes_the_permission_rules_again(ws: Path) -> None:
    answer = {"hookSpecificOutput": {"permissionDecision": "allow",
                                     "updatedInput": {"command": "rm -rf data"}}}  # fmt: skip
    settings(ws, {"PreToolUse": hook(_reply(answer), "Bash")})
    (ws / "data").mkdir()
    script = [Turn.tools([ToolSpec("bash", '{"command": "echo harmless"}')]),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, '[permissions]\ndeny = ["Bash(rm:*)"]\n')
        _run(ws, "go", yolo=True)
        result = _tool_texts(srv.requests[1].json)[0]
    assert result.startswith("blocked: bash was not run (denied")
    assert (ws / "data").is_dir()


def test_permission_request_hooks_answer_the_question_a_human_would_get(ws: Path) -> None:
    seen = ws.parent / "perm.jsonl"
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                    "decision": {"behavior": "allow"}}}  # fmt: skip
    deny = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                   "decision": {"behavior": "deny",
                                                "message": "no network from here"}}}  # fmt: skip
    settings(ws, {"PermissionRequest": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command":
            f"{save_stdin(seen)}; if grep -q curl {seen}; then {_reply(deny)}; "
            f"else {_reply(allow)}; fi"}]}]})  # fmt: skip
    script = [
        Turn.tools([ToolSpec("bash", '{"command": "touch made-by-bash"}', id="p1")]),
        Turn.tools([ToolSpec("bash", '{"command": "curl http://example.invalid"}', id="p2")]),
        Turn.tools([ToolSpec("read_file", '{"path": "made-by-bash"}')]),  # never asks
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _run(ws, "go")  # headless ask mode: without the hook both calls would be refused
        second = _tool_texts(srv.requests[2].json)[-1]
    assert (ws / "made-by-bash").exists()
    assert second == "blocked: bash was not run (PermissionRequest hook: no network from here)"
    payloads = _payloads(seen)
    assert [p["tool_use_id"] for p in payloads] == ["p1", "p2"]  # read_file asked nobody
    assert payloads[0]["permission_mode"] == "default"
    assert payloads[0]["permission_suggestions"][0]["behavior"] == "allow"


def test_a_permission_request_allow_never_replaces_a_fresh_approval(ws: Path) -> None:
    allow = {"hookSpecificOutput": {"decision": {"behavior": "allow"}}}
    settings(ws, {"PermissionRequest": hook(_reply(allow), "Bash")})
    script = [Turn.tools([ToolSpec("bash", '{"command": "bash -c \\"touch nested\\""}')]),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        _run(ws, "go")
        result = _tool_texts(srv.requests[1].json)[0]
    assert result.startswith("blocked: bash was not run") and not (ws / "nested").exists()


def test_system_message_and_invalid_json_reach_the_user(ws: Path) -> None:
    settings(ws, {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": _reply({"systemMessage": "formatted 3 files"})},
        {"type": "command", "command": "echo '{\"decision\": block}'"},
    ]}]})  # fmt: skip
    script = [Turn.tools([ToolSpec("bash", '{"command": "true"}')]), Turn.text_only("done")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        events, problems = _run(ws, "go", yolo=True)
    notes = [e.text for e in events if isinstance(e, Notice) and e.kind == "hook"]
    assert "PostToolUse hook: formatted 3 files" in notes
    bad = [n for n in notes if "printed invalid JSON" in n]
    assert len(bad) == 1 and "PostToolUse hook (matcher 'Bash', command 'echo" in bad[0]
    assert "settings.json" in bad[0] and "line 1 column 14" in bad[0]
    assert "PostToolUse hook: formatted 3 files" in problems and bad[0] in problems
