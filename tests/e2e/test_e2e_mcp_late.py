"""Issue 37, prefix stability: an MCP server that connects late changes no byte already sent.

Two stdio servers (60 tools, so their schemas are deferred behind ``use_capability``);
``billing`` answers its handshake 5 s after it starts, past the session's start-up
wait. The model runs a 6 s command meanwhile, then searches, finds the late server's
tool and calls it. Every request of the run must extend the one before it byte for
byte (the simulated prompt cache serves all of it), and the late tools arrive only as
a tool result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from fakes.mcp_stdio import server_toml


@pytest.mark.e2e
@pytest.mark.slow
def test_a_server_connecting_late_rewrites_no_byte_already_sent(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    search = '{"action": "search", "query": "create a refund"}'
    call = '{"action": "call", "tool": "mcp__billing__create_refund", "arguments": {"refund_id": "r7"}}'  # noqa: E501
    script = [
        Turn.tools([("bash", json.dumps({"command": "sleep 6"}))]),
        Turn.tools([("use_capability", search)]),
        Turn.tools([("use_capability", call)]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        text = (
            'default_model = "fake/m"\n[sandbox]\nbash = "off"\n[[providers]]\nname = "fake"\n'
            f'kind = "openai"\nbase_url = "{srv.url}"\nmodels = ["m"]\n'
        )
        text += server_toml("weather", 30) + server_toml("billing", 30, "--delay", "5")
        (ws / "reasonix.toml").write_text(text)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
            "HOME": str(tmp_path),
            "REASONIX_HOME": str(tmp_path / "rx"),
        }
        out = subprocess.run(
            [sys.executable, str(pyz), "run", "--yolo", "--output-format", "json", "go"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        bodies = [json.loads(r.body) for r in srv.requests]
        extensions = srv.extensions()
    assert len(bodies) == 4
    tools = [[t["function"]["name"] for t in b["tools"]] for b in bodies]
    assert all(t == tools[0] for t in tools) and not any("billing" in n for n in tools[0])
    results = [m["content"] for m in bodies[3]["messages"] if m["role"] == "tool"]
    assert "mcp__billing__create_refund" in results[1]  # found once it had connected
    assert results[2] == 'billing.create_refund ok: {"refund_id": "r7"}'
    assert len(extensions) == 3 and all(e.ratio == 1.0 for e in extensions), extensions
