"""Slash commands and ``@`` references through the real program (line chat and ``run``).

The chat reads its lines from a pipe (``--plain``); what reaches the model is
read back from the loopback fake provider's recorded requests. A real stdio
MCP server (``reasonix mcp example-server``) supplies a prompt.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e_task_env import clean_env, write_project
from fakes import FakeServer, Turn

REVIEW = (
    "---\ndescription: Review a file\nargument-hint: <file>\n---\nPlease review $1. Budget $$5.\n"
)


def workspace(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url)
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write(
            f'\n[[mcp.servers]]\nname = "example"\ncommand = {json.dumps(sys.executable)}\n'
            'args = ["-m", "reasonix", "mcp", "example-server"]\n'
        )
    (ws / "notes.txt").write_text("NOTE-CONTENT-0815\n")
    commands = ws / ".reasonix" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(REVIEW)
    (commands / "broken.md").write_text("---\ndescription: the fence never closes\n")
    return ws, clean_env(tmp_path)


def user_text(request: Any) -> str:
    text = str(
        next(m for m in reversed(request.json["messages"]) if m["role"] == "user")["content"]
    )
    return text.split("</skills>\n\n", 1)[-1]  # the host's skill index leads a first turn


def test_line_chat_commands_references_and_mcp_prompts(tmp_path: Path) -> None:
    script = [Turn.text_only("reviewed"), Turn.text_only("explained"), Turn.text_only("taught")]
    with FakeServer("openai", script) as srv:
        ws, env = workspace(tmp_path, srv.url)
        lines = [
            "/help",
            "/review notes.txt",
            "explain @notes.txt please",
            "/status",
            "/model",
            "1",
            "/clear",
            "n",
            "/mcp",
            "/mcp__example__explain recursion",
            "/clear",
            "y",
            "//etc/hosts is a path I typed",
            "/exit",
        ]
        out = subprocess.run(
            [sys.executable, "-m", "reasonix", "--plain"],
            cwd=ws,
            env=env,
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            timeout=90,
        )
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    screen = out.stdout
    assert "broken.md" in screen and "no closing" in screen  # skipped with a notice, app goes on
    assert "/review" in screen and "Review a file" in screen and "Ctrl-C cancels" in screen
    assert len(requests) == 4  # the custom command, the @ turn, the MCP prompt, the // line
    assert user_text(requests[0]).startswith("Please review notes.txt. Budget $5.")
    assert user_text(requests[1]).startswith(
        '<file path="notes.txt">\nNOTE-CONTENT-0815\n</file>\n\nexplain @notes.txt please'
    )
    assert "fake/fake-model" in screen and "context" in screen  # /status
    assert "Switch model" in screen and "1. fake/fake-model" in screen
    assert "Discard this conversation?" in screen and "nothing changed" in screen
    assert "example" in screen and "1 prompts" in screen  # /mcp
    assert user_text(requests[2]).startswith("Explain recursion to a beginner")
    assert "cleared; new session" in screen
    assert user_text(requests[3]).startswith("/etc/hosts is a path I typed")
    sessions = list((tmp_path / "rx" / "sessions").glob("*/*.jsonl"))
    assert len(sessions) == 1  # /clear discarded the conversation; the new session remains


def test_run_resolves_references_but_never_runs_a_command(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws, env = workspace(tmp_path, srv.url)
        (ws / "secret.txt").write_text("TOP-SECRET\n")
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write(f"\n[sandbox]\nforbid_read = [{json.dumps(str(ws / 'secret.txt'))}]\n")
        base = [sys.executable, "-m", "reasonix", "run", "--output-format", "json"]
        first = subprocess.run(
            [*base, "summarise @notes.txt and @secret.txt, ask bob@example.com"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        second = subprocess.run(
            [*base, "/review notes.txt"], cwd=ws, env=env, capture_output=True, text=True,
            timeout=90,
        )  # fmt: skip
        requests = list(srv.requests)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    sent = user_text(requests[0])
    assert sent.startswith('<file path="notes.txt">\nNOTE-CONTENT-0815\n</file>\n\nsummarise')
    assert "TOP-SECRET" not in sent and "bob@example.com" in sent
    assert user_text(requests[1]).startswith("/review notes.txt")  # CMD-9: literal text
