"""The editor's file system and terminals, when the client offers them.

The test client is a small editor: ``fs/*`` answers from its unsaved buffers
(falling back to disk), ``terminal/*`` runs real subprocesses. The agent's
path confinement, forbid_read and permission checks must hold on these paths
exactly as on the local ones.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import schema as acp_schema
from acp_client import AgentProcess, project
from fakes import FakeServer, ToolSpec, Turn

CALC = "def add(a, b):\n    return a - b\n"
UNSAVED = "def add(a, b):\n    return a - b  # unsaved edit in the editor\n"
FS_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")


class Editor:
    """Buffers over the disk, plus terminals that run real processes."""

    def __init__(self) -> None:
        self.buffers: dict[str, str] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.terminals: dict[str, subprocess.Popen[bytes]] = {}
        self.outputs: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._host = threading.Thread(target=self._spawner, daemon=True)
        self._host.start()

    def handlers(self) -> dict[str, Any]:
        def log(name: str, fn: Any) -> Any:
            def wrapped(params: dict[str, Any]) -> Any:
                self.calls.append((name, params))
                return fn(params)

            return wrapped

        return {
            "fs/read_text_file": log("fs/read_text_file", self.read),
            "fs/write_text_file": log("fs/write_text_file", self.write),
            "terminal/create": log("terminal/create", self.create),
            "terminal/wait_for_exit": log("terminal/wait_for_exit", self.wait),
            "terminal/output": log("terminal/output", self.output),
            "terminal/kill": log("terminal/kill", self.kill),
            "terminal/release": log("terminal/release", self.release),
            "session/request_permission": log("permission", self.permission),
        }

    def permission(self, params: dict[str, Any]) -> dict[str, Any]:
        """Edits of workspace files are fine; widening the writable roots is not."""
        title = params["toolCall"].get("title", "")
        choice = "reject-once" if "writable" in title else "allow-once"
        return {"outcome": {"outcome": "selected", "optionId": choice}}

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        path = params["path"]
        if path in self.buffers:
            return {"content": self.buffers[path]}
        try:
            return {"content": Path(path).read_text()}
        except FileNotFoundError:
            raise LookupError(f"no such file {path}") from None

    def write(self, params: dict[str, Any]) -> None:
        self.buffers[params["path"]] = params["content"]

    def _spawn(self, params: dict[str, Any]) -> subprocess.Popen[bytes]:
        """Start the command from one long-lived thread, as an editor's terminal host does.

        (bwrap's --die-with-parent follows the spawning *thread*: a process started from a
        short-lived handler thread would be killed the moment that thread ends.)
        """
        env = {e["name"]: e["value"] for e in params.get("env", [])}
        argv = [params["command"], *params.get("args", [])]
        started: queue.Queue[subprocess.Popen[bytes]] = queue.Queue()

        def spawn() -> None:
            started.put(
                subprocess.Popen(
                    argv,
                    cwd=params.get("cwd"),
                    env={**os.environ, **env},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            )

        self._jobs.put(spawn)
        return started.get(timeout=10)

    def _spawner(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def stop(self) -> None:
        self._jobs.put(None)
        self._host.join(10)

    def create(self, params: dict[str, Any]) -> dict[str, Any]:
        proc = self._spawn(params)
        tid = f"term-{len(self.terminals) + 1}"
        self.terminals[tid] = proc
        self.outputs[tid] = b""

        def pump() -> None:
            assert proc.stdout is not None
            for chunk in iter(lambda: proc.stdout.read1(4096), b""):  # type: ignore[union-attr]
                with self._lock:
                    self.outputs[tid] += chunk
            proc.stdout.close()

        threading.Thread(target=pump, daemon=True).start()
        return {"terminalId": tid}

    def wait(self, params: dict[str, Any]) -> dict[str, Any]:
        code = self.terminals[params["terminalId"]].wait()
        return {"exitCode": code if code >= 0 else None, "signal": None if code >= 0 else "SIGTERM"}

    def output(self, params: dict[str, Any]) -> dict[str, Any]:
        proc = self.terminals[params["terminalId"]]
        proc.wait(5)
        with self._lock:
            text = self.outputs[params["terminalId"]].decode()
        status = {
            "exitCode": proc.returncode if proc.returncode >= 0 else None,
            "signal": None if proc.returncode >= 0 else "SIGKILL",
        }
        return {"output": text, "truncated": False, "exitStatus": status}

    def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        self.terminals[params["terminalId"]].kill()
        return {}

    def release(self, params: dict[str, Any]) -> dict[str, Any]:
        proc = self.terminals.pop(params["terminalId"])
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        return {}

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def test_files_go_through_the_editor_buffers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    editor = Editor()
    fix = json.dumps({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]),
        Turn.tools([ToolSpec("edit_file", fix)]),
        Turn.tools(
            [ToolSpec("write_file", json.dumps({"path": "../outside.txt", "content": "x"}))]
        ),
        Turn.tools([ToolSpec("read_file", '{"path": "private/key.txt"}')]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, '[sandbox]\nforbid_read = ["private"]\n')
        (ws / "calc.py").write_text(CALC)
        (ws / "private").mkdir()
        (ws / "private" / "key.txt").write_text("secret")
        editor.buffers[str(ws / "calc.py")] = UNSAVED
        agent = AgentProcess(editor.handlers())
        try:
            agent.initialize(FS_CAPS)
            sid = agent.new_session(ws)
            assert agent.prompt(sid, "fix")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
            editor.stop()
        bodies = [json.dumps(r.json) for r in srv.requests]
    assert "unsaved edit in the editor" in bodies[1]  # read_file saw the buffer
    assert editor.buffers[str(ws / "calc.py")] == UNSAVED.replace("a - b", "a + b")
    assert (ws / "calc.py").read_text() == CALC  # the disk is the editor's business
    assert "not allowed" in bodies[3] and str(tmp_path / "outside.txt") not in editor.buffers
    assert not (tmp_path / "outside.txt").exists()
    assert "forbid_read" in bodies[4]
    writes = [p["path"] for name, p in editor.calls if name == "fs/write_text_file"]
    assert writes == [str(ws / "calc.py")]  # the refused write never reached the editor
    reads = [p["path"] for name, p in editor.calls if name == "fs/read_text_file"]
    assert str(ws / "private" / "key.txt") not in reads  # forbid_read holds on this path too
    ask = next(p for name, p in editor.calls if name == "permission")
    diff = ask["toolCall"]["content"][0]
    assert diff["oldText"] == UNSAVED and diff["newText"] == UNSAVED.replace("a - b", "a + b")


def test_bash_runs_in_the_editor_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    editor = Editor()
    command = "echo hello from the terminal; exit 3"
    script = [
        Turn.tools([ToolSpec("bash", json.dumps({"command": command}))]),
        Turn.text_only("ran it"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, f"[permissions]\nallow = [{json.dumps('Bash=' + command)}]\n")
        agent = AgentProcess(editor.handlers())
        try:
            agent.initialize({"terminal": True})
            sid = agent.new_session(ws)
            assert agent.prompt(sid, "run")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
            editor.stop()
        result_body = json.dumps(srv.requests[1].json)
    assert "hello from the terminal" in result_body and "[exit code 3]" in result_body
    names = editor.names()
    assert names.index("terminal/create") < names.index("terminal/wait_for_exit")
    assert names[-1] == "terminal/release" and "permission" not in names
    created = next(p for n, p in editor.calls if n == "terminal/create")
    assert created["cwd"] == str(ws.resolve())
    argv = [created["command"], *created["args"]]
    assert argv[-1] == command and "FAKE_PROVIDER_KEY" in argv  # the key is unset (env -u)
    updates = [
        u for u in agent.updates(sid) if u["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]
    assert any(c.get("type") == "terminal" for u in updates for c in u.get("content", []))
    assert updates[-1]["status"] == "failed"  # exit code 3
    for u in updates:
        acp_schema.SessionNotification.model_validate({"sessionId": sid, "update": u})


def test_a_terminal_command_past_the_timeout_is_killed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    editor = Editor()
    command = f"{sys.executable} -c 'import time; time.sleep(30)'"
    script = [
        Turn.tools([ToolSpec("bash", json.dumps({"command": command}))]),
        Turn.text_only("ok"),
    ]
    allow = json.dumps("Bash=" + command)
    extra = f"[permissions]\nallow = [{allow}]\n[tools]\nbash_timeout_seconds = 1\n"
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, extra)
        agent = AgentProcess(editor.handlers())
        try:
            agent.initialize({"terminal": True})
            sid = agent.new_session(ws)
            assert agent.prompt(sid, "sleep")["result"]["stopReason"] == "end_turn"
        finally:
            agent.close()
            editor.stop()
        result_body = json.dumps(srv.requests[1].json)
    assert "timed out after 1 s" in result_body
    assert "terminal/kill" in editor.names() and editor.names()[-1] == "terminal/release"
