"""A second, independent implementation agrees: the TypeScript ACP SDK as the client.

npm ``@agentclientprotocol/sdk`` (the package formerly published as
``@zed-industries/agent-client-protocol``) drives one session of the built
archive through ``acp_ts_client.mjs``: initialize, session/new, a prompt that
edits a file after one permission question, end_turn, exit 0.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import ROOT, clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

SDK = ROOT / ".ci/cache/node/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js"
SCRIPT = Path(__file__).with_name("acp_ts_client.mjs")
CALC = "def add(a, b):\n    return a - b\n"


@pytest.mark.e2e
def test_typescript_sdk_client_runs_a_session(pyz: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("MISSING node: the TypeScript ACP SDK needs Node.js")
    if not SDK.is_file():
        pytest.skip(
            "MISSING @agentclientprotocol/sdk: run `npm install --prefix .ci/cache/node "
            "@agentclientprotocol/sdk`"
        )
    ws = tmp_path / "repo"
    fix = json.dumps({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], text="Looking."),
        Turn.tools([ToolSpec("edit_file", fix)]),
        Turn.text_only("Fixed."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "calc.py").write_text(CALC)
        env = {**clean_env(tmp_path, source_tree=False), "ACP_SDK": str(SDK)}
        proc = subprocess.run(
            [node, str(SCRIPT), sys.executable, str(pyz), str(ws)],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["init"]["protocolVersion"] == 1 and report["code"] == 0
    assert report["stopReason"] == "end_turn"
    assert len(report["permissions"]) == 1
    assert report["permissions"][0]["toolCall"]["content"][0]["type"] == "diff"
    kinds = [u["sessionUpdate"] for u in report["updates"]]
    assert kinds.count("tool_call") == 2 and "agent_message_chunk" in kinds
    ends = [
        u
        for u in report["updates"]
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    ]
    assert [u["status"] for u in ends] == ["completed", "completed"]
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
