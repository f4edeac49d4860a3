"""A new user on a machine with no config: ``python3 reasonix.pyz`` offers the setup
wizard, and a minute of typing later the chat answers from a loopback server.

Real parts: the built .pyz in a real terminal (tmux), the fake OpenAI-compatible
server (GET /models from its metadata routes, then a streamed chat answer).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from fakes import FakeServer, Turn

MODELS = {"data": [{"id": "local-coder"}]}


def _tmux(sock: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=10)
    return done.stdout


def _wait_for(sock: str, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux(sock, "capture-pane", "-p", "-t", "t")
        if needle in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{needle!r} never appeared; screen:\n{screen}")


@pytest.mark.e2e
def test_wizard_then_a_working_chat(pyz: Path, tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux MISSING (installed by .ci/run)")
    home, ws = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    ws.mkdir()
    sock = f"rx-{uuid.uuid4().hex[:8]}"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TERM": "xterm-256color",
           "REASONIX_HOME": str(home), "LANG": "C.UTF-8"}  # fmt: skip
    script = [Turn.text_only("Hello from the local server.")]
    with FakeServer("openai", script, meta={"GET /v1/models": MODELS}) as srv:
        cmd = " ".join(["env", "-i", *(f"{k}={v}" for k, v in env.items()),
                        sys.executable, str(pyz)])  # fmt: skip
        _tmux(sock, "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "-c", str(ws), cmd)
        try:
            _wait_for(sock, "Set one up now?")
            _tmux(sock, "send-keys", "-t", "t", "y", "Enter")
            _wait_for(sock, "number or name")
            _tmux(sock, "send-keys", "-t", "t", "7", "Enter")  # openai-compatible
            _wait_for(sock, "base URL")
            _tmux(sock, "send-keys", "-t", "t", f"{srv.url}/v1", "Enter")
            _wait_for(sock, "wire format")
            _tmux(sock, "send-keys", "-t", "t", "Enter")
            _wait_for(sock, "input hidden")
            _tmux(sock, "send-keys", "-t", "t", "sk-typed-secret", "Enter")
            screen = _wait_for(sock, "Default model")
            assert "sk-typed-secret" not in screen  # hidden input
            _tmux(sock, "send-keys", "-t", "t", "Enter")
            _wait_for(sock, "custom/local-coder")  # the chat view's footer names the model
            _tmux(sock, "send-keys", "-t", "t", "hi there", "Enter")
            _wait_for(sock, "Hello from the local server.")
        finally:
            _tmux(sock, "kill-server")
        assert srv.requests[0].header("authorization") == "Bearer sk-typed-secret"
        assert srv.requests[0].json["model"] == "local-coder"
    env_file = home / ".env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert "sk-typed-secret" in env_file.read_text()
    assert "sk-typed-secret" not in (home / "config.toml").read_text()
