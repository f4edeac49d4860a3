"""The interactive line chat under a pseudo-terminal: Ctrl-C cancels only the turn
(LOOP-6), approval prompts answer through the permission gate and "always allow"
is saved into ./reasonix.toml (D3), /help, /new and /exit work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from e2e_term import Term
from fakes import FakeServer, ToolSpec, Turn

pytest.importorskip("pty")


def test_chat_cancel_approve_always_and_exit(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    touch = json.dumps({"command": "touch made-by-chat"})
    script = [
        Turn.text_only("once upon a time " * 200, delay=0.02),
        Turn.tools([ToolSpec("bash", touch)]),
        Turn.text_only("made it"),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        env = {**clean_env(tmp_path), "TERM": "dumb"}
        term = Term([sys.executable, "-m", "reasonix", "--plain"], ws, env)
        try:
            term.expect("› ")
            term.send("/help\r")
            term.expect("/new")
            term.expect("› ")
            term.send("tell me a story\r")
            term.expect("once upon")
            term.send("\x03")  # Ctrl-C: the tty sends SIGINT to the foreground group
            term.expect("cancelled")
            term.expect("› ")
            assert term.proc.poll() is None, "Ctrl-C during a turn must not exit the chat"
            term.send("make a file\r")
            term.expect("allow bash")
            term.expect("choice")
            term.send("3\r")
            term.expect("would approve")  # the rule simulator speaks before saving
            term.expect("save this rule?")
            term.send("y\r")
            term.expect("made it")
            term.expect("› ")
            term.send("/new\r")
            term.expect("new session")
            term.send("/exit\r")
            code = term.close()
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
                term.proc.wait()
    assert code == 0
    assert (ws / "made-by-chat").exists()
    assert "Bash(touch" in (ws / "reasonix.toml").read_text()
    sessions = list((tmp_path / "rx" / "sessions").glob("*/*.jsonl"))
    assert len(sessions) == 2  # the story session and the one /new started
