"""The interactive line chat under a pseudo-terminal: Ctrl-C cancels only the turn
(LOOP-6), approval prompts answer through the permission gate and "always allow"
is saved into ./reasonix.toml (D3), /help, /new and /exit work."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

pty = pytest.importorskip("pty")
_CTTY = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class Term:
    """A child process on a pty; ``expect`` reads until a text appears."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        # A new session whose controlling terminal is the pty, so ^C becomes SIGINT
        # (done by a tiny exec wrapper: no preexec_fn in a threaded test process).
        wrapper = [sys.executable, "-c", _CTTY, *argv]
        self.proc = subprocess.Popen(
            wrapper, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 15) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"did not see {text!r}; screen so far:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError(f"terminal closed before {text!r}:\n{self.seen}")
                self.seen += data.decode("utf-8", "replace")
        head, _, self.seen = self.seen.partition(text)
        return head

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=15)
        finally:
            os.close(self.master)


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
