"""``python3 dist/reasonix.pyz acp`` driven by the official ACP Python SDK as the editor.

The SDK (PyPI ``agent-client-protocol``, a test-only dependency) spawns the
archive and speaks to it as Zed would: it offers its file system and
terminals, answers permission questions, cancels, and loads a session in a
second process. The model is the loopback fake; the MCP server the client
brings is our own ``reasonix mcp example-server``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

acp = pytest.importorskip("acp", reason="MISSING: pip install agent-client-protocol")
from acp import schema  # noqa: E402

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('calc test ok')\n"
FIX = json.dumps({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})
TEST_CMD = f"{sys.executable} test_calc.py"
LIMIT = 50 * 1024 * 1024


class Editor:
    """An ACP client with buffers, terminals and a permission policy, recording everything."""

    def __init__(self, answer: str = "allow-once") -> None:
        self.answer = answer
        self.updates: list[dict[str, Any]] = []
        self.permissions: list[dict[str, Any]] = []
        self.fs: list[tuple[str, str]] = []
        self.terminal_calls: list[str] = []
        self.terminals: dict[
            str, tuple[asyncio.subprocess.Process, bytearray, asyncio.Task[None]]
        ] = {}

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kw: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(
            {
                "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [o.model_dump(by_alias=True) for o in options],
            }
        )
        outcome = {"outcome": "selected", "optionId": self.answer}
        return schema.RequestPermissionResponse.model_validate({"outcome": outcome})

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(
            {"sessionId": session_id, **update.model_dump(by_alias=True, exclude_none=True)}
        )

    async def read_text_file(
        self, session_id: str, path: str, **kw: Any
    ) -> schema.ReadTextFileResponse:
        self.fs.append(("read", path))
        return schema.ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> None:
        self.fs.append(("write", path))
        Path(path).write_text(content)  # this editor saves at once

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        **kw: Any,
    ) -> schema.CreateTerminalResponse:
        self.terminal_calls.append("create")
        extra = {e.name: e.value for e in env or []}
        proc = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={**os.environ, **extra},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out = bytearray()

        async def pump() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(4096):
                out.extend(chunk)

        tid = f"t{len(self.terminals) + 1}"
        self.terminals[tid] = (proc, out, asyncio.ensure_future(pump()))
        return schema.CreateTerminalResponse(terminal_id=tid)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> schema.WaitForTerminalExitResponse:
        self.terminal_calls.append("wait")
        proc, _, task = self.terminals[terminal_id]
        code = await proc.wait()
        await task
        return schema.WaitForTerminalExitResponse(exit_code=code if code >= 0 else None)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> schema.TerminalOutputResponse:
        self.terminal_calls.append("output")
        proc, out, task = self.terminals[terminal_id]
        await proc.wait()
        await task
        status = schema.TerminalExitStatus(exit_code=proc.returncode)
        return schema.TerminalOutputResponse(
            output=out.decode(), truncated=False, exit_status=status
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.terminal_calls.append("kill")
        with contextlib.suppress(ProcessLookupError):
            self.terminals[terminal_id][0].kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.terminal_calls.append("release")
        proc, _, task = self.terminals.pop(terminal_id)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        await task

    def kinds(self, session_id: str) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates if u["sessionId"] == session_id]


FULL_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


async def _session(
    pyz: Path, ws: Path, env: dict[str, str], editor: Editor, stderr: Any, body: Any
) -> int:
    """Spawn the archive, initialize, run ``body(conn)``, close stdin; the exit code."""
    async with acp.spawn_agent_process(
        editor,
        sys.executable,
        str(pyz),
        "acp",
        cwd=ws,
        env=env,
        transport_kwargs={"limit": LIMIT, "stderr": stderr.fileno(), "shutdown_timeout": 20},
    ) as (conn, proc):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities.model_validate(FULL_CAPS),
            client_info=schema.Implementation(name="sdk-test", version="1"),
        )
        assert init.protocol_version == 1 and init.agent_capabilities.load_session
        await body(conn)
    return int(proc.returncode if proc.returncode is not None else -1)


def _project(ws: Path, url: str) -> None:
    write_project(ws, url)
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write(f"[permissions]\nallow = [{json.dumps('Bash=' + TEST_CMD)}]\n")
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)


def _text(blocks: list[Any]) -> list[Any]:
    return [acp.text_block(b) if isinstance(b, str) else b for b in blocks]


@pytest.mark.e2e
def test_sdk_task_permission_cancel_and_load(pyz: Path, tmp_path: Path) -> None:
    """Acceptance: read → edit → test with one permission question (options + diff),
    tool calls ending completed, end_turn; cancel within 1 s; load replays in process 2."""
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], text="Reading calc.py."),
        Turn.tools([ToolSpec("edit_file", FIX)], reasoning="add subtracts; fix it"),
        Turn.tools([ToolSpec("bash", json.dumps({"command": TEST_CMD}))]),
        Turn.text_only("Fixed add(); test_calc.py passes."),
        Turn(text=[f"word{i} " for i in range(300)], delay=0.05),  # the slow stream to cancel
        Turn.text_only("still here"),
        Turn.text_only("after the reload"),
    ]
    editor = Editor()
    result: dict[str, Any] = {}

    async def first(conn: Any) -> None:
        s = await conn.new_session(cwd=str(ws), mcp_servers=[])
        result["sid"] = sid = s.session_id
        r = await conn.prompt(session_id=sid, prompt=_text(["fix add() and run its test"]))
        result["task"] = r.stop_reason
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=_text(["talk a lot"])))
        while not any(
            u["sessionUpdate"] == "agent_message_chunk" and u["content"]["text"].startswith("word")
            for u in editor.updates
        ):
            await asyncio.sleep(0.02)
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        result["cancelled"] = (await turn).stop_reason
        result["cancel_seconds"] = time.monotonic() - started
        result["after"] = (await conn.prompt(session_id=sid, prompt=_text(["ok?"]))).stop_reason

    reload_editor = Editor()

    async def second(conn: Any) -> None:
        await conn.load_session(cwd=str(ws), session_id=result["sid"], mcp_servers=[])
        result["replayed"] = list(reload_editor.updates)
        r = await conn.prompt(session_id=result["sid"], prompt=_text(["and now?"]))
        result["reloaded"] = r.stop_reason

    with FakeServer("openai", script) as srv, (tmp_path / "stderr.txt").open("w+") as err:
        _project(ws, srv.url)
        assert asyncio.run(_session(pyz, ws, env, editor, err, first)) == 0
        assert asyncio.run(_session(pyz, ws, env, reload_editor, err, second)) == 0
        err.seek(0)
        log = err.read()
        requests = [r.json for r in srv.requests]
    assert "Traceback" not in log, log
    sid = result["sid"]
    assert result["task"] == "end_turn"
    assert len(editor.permissions) == 1
    ask = editor.permissions[0]
    assert [o["kind"] for o in ask["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    diff = ask["toolCall"]["content"][0]
    assert diff["type"] == "diff" and diff["oldText"] == CALC
    assert diff["newText"] == CALC.replace("a - b", "a + b")
    calls: dict[str, list[dict[str, Any]]] = {}
    for u in editor.updates[: editor.kinds(sid).index("agent_message_chunk", 3)]:
        if u["sessionUpdate"] in ("tool_call", "tool_call_update"):
            calls.setdefault(u["toolCallId"], []).append(u)
    assert len(calls) == 3 and all(us[-1]["status"] == "completed" for us in calls.values())
    assert [us[0]["kind"] for us in calls.values()] == ["read", "edit", "execute"]
    assert any(
        c["type"] == "terminal" for us in calls.values() for u in us for c in u.get("content", [])
    )
    assert ("read", str(ws / "calc.py")) in editor.fs and (
        "write",
        str(ws / "calc.py"),
    ) in editor.fs
    assert editor.terminal_calls[0] == "create" and editor.terminal_calls[-1] == "release"
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert "calc test ok" in json.dumps(requests[3])
    assert result["cancelled"] == "cancelled" and result["cancel_seconds"] < 1.0
    assert result["after"] == "end_turn" and result["reloaded"] == "end_turn"
    replayed = [u["sessionUpdate"] for u in result["replayed"]]
    assert replayed[0] == "user_message_chunk"
    assert result["replayed"][0]["content"]["text"] == "fix add() and run its test"
    assert replayed.count("tool_call") == 3 and "agent_thought_chunk" in replayed
    assert "fix add() and run its test" in json.dumps(requests[-1])


@pytest.mark.e2e
def test_sdk_client_mcp_server_is_used(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    args = json.dumps({"text": "one two three\nfour"})
    script = [Turn.tools([ToolSpec("mcp__example__wordcount", args)]), Turn.text_only("4 words")]
    editor = Editor()
    out: dict[str, Any] = {}

    async def body(conn: Any) -> None:
        server = schema.McpServerStdio(
            name="example", command=sys.executable, args=[str(pyz), "mcp", "example-server"], env=[]
        )
        s = await conn.new_session(cwd=str(ws), mcp_servers=[server])
        out["stop"] = (
            await conn.prompt(session_id=s.session_id, prompt=_text(["count"]))
        ).stop_reason

    with FakeServer("openai", script) as srv, (tmp_path / "stderr.txt").open("w+") as err:
        write_project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write('[permissions]\nallow = ["mcp__example"]\n')
        assert asyncio.run(_session(pyz, ws, env, editor, err, body)) == 0
        requests = [r.json for r in srv.requests]
    assert out["stop"] == "end_turn"
    offered = {t["function"]["name"] for t in requests[0]["tools"]}
    assert {"mcp__example__echo", "mcp__example__wordcount"} <= offered
    tool_msg = next(m for m in requests[1]["messages"] if m["role"] == "tool")
    assert json.loads(tool_msg["content"]) == {"words": 4, "lines": 2, "characters": 18}
    done = [u for u in editor.updates if u.get("status") == "completed"]
    assert done and '"words": 4' in done[-1]["content"][0]["content"]["text"]
