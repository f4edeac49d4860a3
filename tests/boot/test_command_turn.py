"""A command file's turn: its ``allowed-tools`` and ``!`` shell lines (issue 35, items 2 and 3).

Real parts: the loopback fake provider, the real command registry, gate, bash tool
and sandbox. The command files are written here in the shape of Anthropic's
``commit-commands`` plugin (``commands/commit.md``: ``allowed-tools:
Bash(git add:*), …`` in the frontmatter, ``- Current git status: !`git status```
lines under ``## Context``) and ``ralph-wiggum`` (a ```` ```! ```` block running
the arguments), as Claude Code's slash-command docs describe them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, ToolSpec, Turn

from reasonix import config as config_mod
from reasonix.agent.events import ApprovalRequested, Done, Notice
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.command_turn import run_turn
from reasonix.boot.commands import build_commands
from reasonix.cancel import Cancel
from reasonix.permission import ApprovalChoice

STAMP = """---
description: Stamp the workspace
argument-hint: NAME
allowed-tools: Bash(touch:*), Bash(echo:*)
---

## Context

- Stamp: !`touch stamp.txt`
- Greeting: !`echo hello-$1`
- Not allowed: !`mkdir nope`
- Literal, no space before the bang: KEY=!`touch literal.txt`

```!
echo block-line-1
echo block-line-2
```

## Your task

Report what the context says.
"""


def _provider(url: str) -> str:
    return (
        'default_model = "fake/fake-model"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    (d / ".claude" / "commands").mkdir(parents=True)
    return d


def _bash(command: str) -> Turn:
    return Turn.tools([ToolSpec("bash", json.dumps({"command": command}))])


def _sent(request: Any) -> str:
    user = [m for m in request.json["messages"] if m["role"] == "user"][-1]
    return str(user["content"])


def _drive(events: Any, answers: dict[str, ApprovalChoice] | None = None) -> list[Any]:
    out = []
    for event in events:
        if isinstance(event, ApprovalRequested):
            command = str(event.request.args.get("command", ""))
            event.answer((answers or {}).get(command, ApprovalChoice.DENY))
        out.append(event)
    return out


def test_allowed_tools_run_the_lines_and_pre_approve_the_turn_only(ws: Path) -> None:
    (ws / ".claude" / "commands" / "stamp.md").write_text(STAMP)
    script = [_bash("touch model.txt"), Turn.text_only("stamped"),
              _bash("touch after.txt"), Turn.text_only("refused")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        (ws / "reasonix.toml").write_text(_provider(srv.url))
        rt = build_runtime(RuntimeOptions(workspace=ws))  # headless: nobody answers an ask
        try:
            result = build_commands(rt).run("/stamp now")
            assert result.turn is not None and result.turn.allow == (
                "Bash(touch:*)", "Bash(echo:*)",
            )  # fmt: skip
            # an @ attachment in front of the command's text is never searched for lines
            attached = '<file path="x.md">\n- !`touch attached.txt`\n</file>\n\n'
            events = _drive(run_turn(rt, attached + str(result.prompt), Cancel(), result.turn))
            assert rt.gate.turn_rules == ()  # gone with the turn
            later = _drive(run_turn(rt, "and once more", Cancel()))
            first, model_turn, second = srv.requests[0], srv.requests[1], srv.requests[3]
        finally:
            rt.close()
    sent = _sent(first)
    assert (ws / "stamp.txt").exists()
    assert '<command-output command="touch stamp.txt">\n(no output)\n[exit code 0]\n' in sent
    assert '<command-output command="echo hello-now">\nhello-now\n[exit code 0]\n' in sent
    assert "block-line-1\nblock-line-2\n[exit code 0]" in sent
    assert "KEY=!`touch literal.txt`" in sent and not (ws / "literal.txt").exists()
    assert "- !`touch attached.txt`" in sent and not (ws / "attached.txt").exists()
    assert "!`" not in sent.split("</file>", 1)[1].replace("KEY=!`touch literal.txt`", "")
    # outside allowed-tools: refused headless, with a line naming the command
    assert not (ws / "nope").exists()
    refusal = [e.text for e in events if isinstance(e, Notice) and "mkdir nope" in e.text]
    assert refusal and refusal[0].startswith("/stamp: `mkdir nope` was not run (denied")
    assert '<command-output command="mkdir nope" status="not run">\n/stamp: ' in sent
    assert "Report what the context says." in sent
    # the model's own call in the command's turn is pre-approved; in the next turn it is not
    assert (ws / "model.txt").exists() and "[exit code 0]" in _sent_tool(model_turn)
    assert not (ws / "after.txt").exists() and "needs approval" in _sent_tool(second)
    assert isinstance(events[-1], Done) and isinstance(later[-1], Done)


def _sent_tool(request: Any) -> str:
    return str([m for m in request.json["messages"] if m["role"] == "tool"][-1]["content"])


def test_a_deny_rule_beats_allowed_tools(ws: Path) -> None:
    (ws / ".claude" / "commands" / "stamp.md").write_text(STAMP)
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        (ws / "reasonix.toml").write_text(
            _provider(srv.url) + '[permissions]\ndeny = ["Bash(touch:*)"]\n'
        )
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            result = build_commands(rt).run("/stamp x")
            _drive(run_turn(rt, str(result.prompt), Cancel(), result.turn))
        finally:
            rt.close()
        sent = _sent(srv.requests[0])
    assert not (ws / "stamp.txt").exists()
    assert "/stamp: `touch stamp.txt` was not run (denied" in sent
    assert "hello-x\n[exit code 0]" in sent  # the echo rule still applies


def test_interactive_asks_for_lines_outside_allowed_tools(ws: Path) -> None:
    body = "---\nallowed-tools: Bash(echo:*)\n---\n- !`mkdir yes-dir`\n- !`mkdir no-dir`\n"
    (ws / ".claude" / "commands" / "ask.md").write_text(body)
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        (ws / "reasonix.toml").write_text(_provider(srv.url))
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            result = build_commands(rt).run("/ask")
            answers = {"mkdir yes-dir": ApprovalChoice.ONCE, "mkdir no-dir": ApprovalChoice.DENY}
            events = _drive(run_turn(rt, str(result.prompt), Cancel(), result.turn), answers)
        finally:
            rt.close()
        sent = _sent(srv.requests[0])
    asked = [e.request.args["command"] for e in events if isinstance(e, ApprovalRequested)]
    assert asked == ["mkdir yes-dir", "mkdir no-dir"]
    assert (ws / "yes-dir").is_dir() and not (ws / "no-dir").exists()
    assert "/ask: `mkdir no-dir` was not run (denied: the user declined this call)" in sent


@pytest.mark.usefixtures("untrusted")
def test_an_untrusted_workspace_skips_its_commands_lines_not_the_users(ws: Path) -> None:
    body = "---\nallowed-tools: Bash(touch:*)\n---\nContext: !`touch {0}.txt`\nGo.\n"
    (ws / ".claude" / "commands" / "proj.md").write_text(body.format("proj"))
    mine = Path(os.environ["REASONIX_HOME"]) / "commands"
    mine.mkdir(parents=True)
    (mine / "mine.md").write_text(body.format("mine"))
    with FakeServer("openai", [Turn.text_only("a"), Turn.text_only("b")]) as srv:
        # the provider is the user's own: an untrusted workspace may not declare one
        (Path(os.environ["REASONIX_HOME"]) / "config.toml").write_text(_provider(srv.url))
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            assert not rt.config.trust.trusted
            warned = [n for n in rt.notices if "command /proj" in n]
            commands = build_commands(rt)
            proj = commands.run("/proj")
            events = _drive(run_turn(rt, str(proj.prompt), Cancel(), proj.turn))
            own = commands.run("/mine")
            _drive(run_turn(rt, str(own.prompt), Cancel(), own.turn))
        finally:
            rt.close()
        first, second = _sent(srv.requests[0]), _sent(srv.requests[1])
    assert warned and warned[0].startswith(
        "untrusted workspace: skipped command /proj runs `touch proj.txt` before its turn; "
        "pre-approves Bash(touch:*) for its turn"
    )
    items = config_mod.workspace_trust(ws).items  # what `reasonix trust --show` lists
    assert [i.kind for i in items] == ["command"] and items[0].file.endswith("proj.md")
    assert not (ws / "proj.txt").exists()
    assert 'status="not run">\nnot run: this workspace is not trusted' in first
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert any(n.startswith("/proj: 1 shell line(s) not run") for n in notes)
    assert any(n.startswith("/proj: allowed-tools not applied") for n in notes)
    assert (ws / "mine.txt").exists() and "[exit code 0]" in second  # the user's own command


def test_a_commands_model_runs_its_turn_and_the_session_model_comes_back(ws: Path) -> None:
    (ws / ".claude" / "commands" / "quick.md").write_text(
        "---\ndescription: A quick answer\nmodel: fast-model\n---\nAnswer briefly.\n"
    )
    (ws / ".claude" / "commands" / "claude.md").write_text(
        "---\ndescription: Claude's alias\nmodel: haiku\n---\nAnswer.\n"
    )
    script = [Turn.text_only("quick"), Turn.text_only("normal"), Turn.text_only("alias")]
    with FakeServer("openai", script) as srv:
        (ws / "reasonix.toml").write_text(
            _provider(srv.url).replace('["fake-model"]', '["fake-model", "fast-model"]')
        )
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            commands = build_commands(rt)
            quick = commands.run("/quick")
            first = _drive(run_turn(rt, str(quick.prompt), Cancel(), quick.turn))
            assert rt.resolved.ref == "fake/fake-model"  # back after the turn
            _drive(run_turn(rt, "next", Cancel()))
            alias = commands.run("/claude")
            third = _drive(run_turn(rt, str(alias.prompt), Cancel(), alias.turn))
        finally:
            rt.close()
        models = [r.json["model"] for r in srv.requests]
    assert models == ["fast-model", "fake-model", "fake-model"]
    assert any(isinstance(e, Notice) and "runs on fake/fast-model" in e.text for e in first)
    assert any(isinstance(e, Notice) and "none of your providers" in e.text for e in third)
