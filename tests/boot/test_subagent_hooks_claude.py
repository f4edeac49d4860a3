"""SubagentStart and SubagentStop in Claude Code's shapes (issue 35, Deliver 7).

SubagentStart (matcher: the agent type) adds context to the child's task;
SubagentStop gets ``agent_type``, ``last_assistant_message`` and an
``agent_transcript_path`` in Claude's JSONL shape, and a hook that always blocks
is cut off after the cap (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP), with a warning.

Real parts: loopback fakes, runtimes from ``build_runtime``, real hook commands
(python) from real settings files. Shapes: code.claude.com/docs/en/hooks
("SubagentStart", "SubagentStop").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from subagent_kit import call, calls, first_user, project, run

from reasonix.boot import RuntimeOptions, build_runtime


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
    monkeypatch.delenv("REASONIX_STOP_HOOK_BLOCK_CAP", raising=False)
    d = tmp_path / "ws"
    (d / ".claude").mkdir(parents=True)
    return d


def test_subagent_start_adds_context_and_a_blocking_subagent_stop_is_capped(
    ws: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "stop.jsonl"
    start = {"hookSpecificOutput": {"hookEventName": "SubagentStart",
                                    "additionalContext": "CHILD-CONTEXT-35"}}  # fmt: skip
    stop = tmp_path / "stop_hook.py"
    stop.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "path = data['agent_transcript_path']\n"
        'last = [json.loads(x) for x in open(path) if \'"role":"assistant"\' in x][-1]\n'
        "blocks = last['message']['content']\n"
        "data['last_text'] = [b['text'] for b in blocks if b['type'] == 'text']\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        "sys.stderr.write('check again')\n"
        "sys.exit(2)\n"
    )
    say = f"print({json.dumps(json.dumps(start))})"
    hooks = {
        "SubagentStart": [{"matcher": "task", "hooks": [
            {"type": "command", "command": f"{sys.executable} -c {json.dumps(say)}"}]},
            {"matcher": "reviewer", "hooks": [{"type": "command", "command": "echo OTHER-TYPE"}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": f"{sys.executable} {stop}"}]}],
    }  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    script = [calls(call("read_only_task", prompt="look")), Turn.text_only("looked once"),
              Turn.text_only("looked twice"), Turn.text_only("looked thrice"),
              Turn.text_only("parent done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url}, extra='[sandbox]\nbash = "off"\n')
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "go")
            problems = list(rt.hooks.problems) if rt.hooks is not None else []
        finally:
            rt.close()
        assert len(srv.requests) == 5  # the child's first answer and two more, then the parent
        child_task = first_user(srv.requests[1])
    assert "CHILD-CONTEXT-35" in child_task  # SubagentStart's context joins the task
    assert "OTHER-TYPE" not in child_task  # matcher: the agent type
    payloads = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [p["stop_hook_active"] for p in payloads] == [False, True, True]
    assert [p["last_text"] for p in payloads] == [["looked once"], ["looked twice"],
                                                  ["looked thrice"]]  # fmt: skip
    assert payloads[0]["agent_type"] == "task" and payloads[2]["last_assistant_message"] == (
        "looked thrice"
    )
    capped = [p for p in problems if "SubagentStop hook blocked the end 3 times" in p]
    assert len(capped) == 1
