"""Issue 37 against the built .pyz: 10 stdio MCP servers with 300 tools cost the first
request (almost) nothing, a tool found by search is called, unused servers never start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Fault, Turn
from fakes.mcp_stdio import SERVERS, server_toml


def _run(pyz: Path, tmp: Path, script: list[Turn | Fault], pids: Path | None) -> list[bytes]:
    ws = tmp / "repo"
    ws.mkdir(exist_ok=True)
    with FakeServer("openai", script) as srv:
        text = (
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\n'
        )
        for name in SERVERS if pids is not None else ():
            text += server_toml(name, 30, "--pid-dir", str(pids))
        (ws / "reasonix.toml").write_text(text)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
            "HOME": str(tmp),
            "REASONIX_HOME": str(tmp / "rx"),
        }
        out = subprocess.run(
            [sys.executable, str(pyz), "run", "--yolo", "--output-format", "json", "go"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        bodies = [r.body for r in srv.requests]
    assert out.returncode == 0, out.stderr
    return bodies


def _results(body: bytes) -> list[str]:
    return [m["content"] for m in json.loads(body)["messages"] if m["role"] == "tool"]


@pytest.mark.e2e
def test_deferred_mcp_tools_through_the_pyz(pyz: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    (floor,) = _run(pyz, tmp_path, [Turn.text_only("ok")], None)
    (first,) = _run(pyz, tmp_path, [Turn.text_only("ok")], pids)  # learns the catalogues
    for p in pids.iterdir():
        p.unlink()
    search = '{"action": "search", "query": "create a refund"}'
    call = '{"action": "call", "tool": "mcp__billing__create_refund", "arguments": {"refund_id": "r1"}}'  # noqa: E501
    script = [
        Turn.tools([("use_capability", search)]),
        Turn.tools([("use_capability", call)]),
        Turn.text_only("done"),
    ]
    bodies = _run(pyz, tmp_path, script, pids)
    assert len(first) <= 1.2 * len(floor) and len(bodies[0]) <= 1.2 * len(floor)
    assert "mcp__billing__create_refund" in _results(bodies[1])[0]
    assert _results(bodies[2])[1] == 'billing.create_refund ok: {"refund_id": "r1"}'
    assert json.loads(bodies[2])["tools"] == json.loads(bodies[0])["tools"]
    assert {p.name for p in pids.iterdir()} == {"billing.pid"}
