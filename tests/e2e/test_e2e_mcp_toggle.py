"""Issue 37, prefix stability: ``/mcp disable`` and ``/mcp enable`` change no byte already sent.

The line chat of the built .pyz (``--plain``, lines on stdin) with a loopback stdio
MCP server and the scripted fake model: a turn, ``/mcp disable weather``, a turn
whose model calls a weather tool (it gets the disabled error), ``/mcp enable
weather``, a turn whose call works. Every request extends the one before it byte
for byte, the tool list never changes, and what the model learns of each change is
a note at the head of the next user message.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, Turn
from fakes.mcp_stdio import server_toml

CALL = ("mcp__weather__get_forecast", '{"forecast_id": "f1"}')
DISABLED_NOTE = (
    "<mcp-servers>\nThe user disabled MCP server weather: its tools (mcp__weather__*) refuse "
    "every call until the user enables it again; do not call them.\n</mcp-servers>\n\n"
)
ENABLED_NOTE = (
    "<mcp-servers>\nThe user enabled MCP server weather again: its tools can be called.\n"
    "</mcp-servers>\n\n"
)


def _wait(srv: FakeServer, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while len(srv.requests) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(srv.requests) >= n, len(srv.requests)


def _send(proc: subprocess.Popen[str], srv: FakeServer, line: str, n: int) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    _wait(srv, n)
    time.sleep(0.5)  # the answer streams and the turn ends (or the command runs)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie awaiting its parent counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


@pytest.mark.e2e
@pytest.mark.slow
def test_mcp_disable_and_enable_rewrite_no_byte_already_sent(pyz: Path, tmp_path: Path) -> None:
    script = [
        Turn.text_only("answer one"),
        Turn.tools([CALL]),
        Turn.text_only("weather is off"),
        Turn.tools([CALL]),
        Turn.text_only("forecast f1 found"),
    ]
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    pids = tmp_path / "pids"
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write('[mcp]\ndefer_tools = "never"\n')
            fh.write(server_toml("weather", 3, "--pid-dir", str(pids)))
        log = (tmp_path / "chat.log").open("w")
        proc = subprocess.Popen([sys.executable, str(pyz), "--plain", "--yolo"], cwd=ws,
                                env=env, stdin=subprocess.PIPE, stdout=log, stderr=log,
                                text=True)  # fmt: skip
        try:
            _send(proc, srv, "one", 1)
            first_pid = int((pids / "weather.pid").read_text())
            (pids / "weather.pid").unlink()
            _send(proc, srv, "/mcp disable weather", 1)
            _send(proc, srv, "two", 3)
            stopped = not _running(first_pid)
            restarted_while_disabled = (pids / "weather.pid").exists()
            _send(proc, srv, "/mcp enable weather", 3)
            _send(proc, srv, "three", 5)
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0, (tmp_path / "chat.log").read_text()[-3000:]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
        bodies = [r.json for r in srv.requests]
        extensions = srv.extensions()
    screen = (tmp_path / "chat.log").read_text()
    assert len(bodies) == 5, screen[-3000:]
    assert stopped and not restarted_while_disabled
    assert "MCP server weather disabled" in screen and "MCP server weather enabled" in screen
    tools = [[t["function"]["name"] for t in b["tools"]] for b in bodies]
    assert all(t == tools[0] for t in tools) and CALL[0] in tools[0]
    users = [[m["content"] for m in b["messages"] if m["role"] == "user"][-1] for b in bodies]
    assert "<mcp-servers>" not in users[0]
    assert users[1] == DISABLED_NOTE + "two"
    assert users[3] == ENABLED_NOTE + "three"
    results = [m["content"] for m in bodies[4]["messages"] if m["role"] == "tool"]
    assert results == [
        "MCP server weather is disabled (/mcp enable weather)",
        'weather.get_forecast ok: {"forecast_id": "f1"}',
    ]
    assert len(extensions) == 4 and all(e.ratio == 1.0 for e in extensions), extensions
