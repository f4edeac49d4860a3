"""Issue 35 items 1 and 9 through the built .pyz: a Claude Code project's agents and its
sub-folder commands work unchanged.

The files are ours, in the shapes Claude Code projects use: agents as in Anthropic's
``plugins/feature-dev/agents/*.md`` (see tests/claude_agent_files.py), a command
in ``.claude/commands/frontend/`` as on Claude Code's "Slash commands" page. The archive
runs in a subprocess with a clean environment against a scripted loopback model; what
reached the model is read back from the fake's recorded requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_agent_files import EXPLORER, REVIEWER
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

pytestmark = pytest.mark.e2e

COMPONENT = """\
---
description: Scaffold a UI component
argument-hint: <name>
---
Scaffold the component $1 under src/components with a story and a test.
"""


def _project(tmp_path: Path, url: str) -> Path:
    ws = tmp_path / "repo"
    write_project(ws, url)
    agents = ws / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "code-reviewer.md").write_text(REVIEWER, encoding="utf-8")
    (agents / "bad.md").write_text("---\nname: bad\ndescription: never closed\n", "utf-8")
    user_agents = tmp_path / ".claude" / "agents"  # HOME is tmp_path: ~/.claude/agents
    user_agents.mkdir(parents=True)
    (user_agents / "code-explorer.md").write_text(EXPLORER, encoding="utf-8")
    commands = ws / ".claude" / "commands" / "frontend"
    commands.mkdir(parents=True)
    (commands / "component.md").write_text(COMPONENT, encoding="utf-8")
    (ws / "app.py").write_text("def main():\n    return 1\n")
    return ws


def _messages(request: Any, role: str) -> list[str]:
    return [str(m["content"]) for m in request.json["messages"] if m["role"] == role]


def test_run_delegates_to_a_claude_agent_by_name(pyz: Path, tmp_path: Path) -> None:
    script = [
        Turn.tools([ToolSpec("task", json.dumps({"prompt": "x", "profile": "code-reviewer"}))]),
        Turn.tools([ToolSpec("read_file", json.dumps({"path": "app.py"}))]),
        Turn.text_only("app.py:2 returns a constant; fine"),
        Turn.text_only("reviewed: fine"),
    ]
    with FakeServer("openai", script) as srv:
        ws = _project(tmp_path, srv.url)
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "-y", "review my change"],
            cwd=ws, env=clean_env(tmp_path, source_tree=False),
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        requests = list(srv.requests)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = json.loads(proc.stdout)
    assert out["result"] == "reviewed: fine" and out["subagent_runs"] == 1
    assert any("bad.md" in w and "skipped" in w for w in out["warnings"]), out["warnings"]
    parent, child = requests[0], requests[1]
    first = _messages(parent, "user")[0]
    assert "- code-reviewer [subagent] — Looks over changed code" in first
    assert "- code-explorer [subagent] — Traces how" in first  # the user's ~/.claude/agents
    assert "code-reviewer" not in _messages(parent, "system")[0]
    assert _messages(child, "system")[0].startswith("You are REVIEWER-PROMPT")
    child_tools = {t["function"]["name"] for t in child.json["tools"]}
    assert "read_file" in child_tools and not {"bash", "write_file", "edit_file"} & child_tools
    assert "app.py:2 returns a constant" in _messages(requests[3], "tool")[-1]


def test_chat_runs_an_agent_command_and_a_subfolder_command(pyz: Path, tmp_path: Path) -> None:
    script = [Turn.text_only("EXPLORED: main returns 1"), Turn.text_only("scaffolded")]
    with FakeServer("openai", script) as srv:
        ws = _project(tmp_path, srv.url)
        lines = ["/help", "/code-explorer how does main work?", "/component Button", "/exit"]
        proc = subprocess.run(
            [sys.executable, str(pyz), "--plain"],
            cwd=ws, env=clean_env(tmp_path, source_tree=False),
            input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        requests = list(srv.requests)
    assert proc.returncode == 0, proc.stderr
    screen = proc.stdout
    help_part = screen[: screen.index("EXPLORED")]
    assert "sub-agents:" in help_part and "/code-explorer" in help_part
    assert "/component" in help_part and "Scaffold a UI component (frontend)" in help_part
    assert "/frontend:component" not in help_part
    assert "EXPLORED: main returns 1" in screen
    assert _messages(requests[0], "system")[0].startswith("You are EXPLORER-PROMPT")
    sent = _messages(requests[1], "user")
    assert any(u.endswith("/code-explorer how does main work?") for u in sent)
    assert (
        sent[-1]
        .rstrip()
        .endswith("Scaffold the component Button under src/components with a story and a test.")
    )
