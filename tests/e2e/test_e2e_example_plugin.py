"""DOC-6 / ARCH-5: the built .pyz drives its own reference MCP plugin end to end.

The archive runs twice: once as the agent, once (as a child of the agent) as
the stdio plugin `reasonix mcp example-server`. The model's first request must
offer built-in tools and the plugin's tools side by side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn


@pytest.mark.e2e
def test_agent_calls_the_example_plugin(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    args = json.dumps({"text": "one two three\nfour"})
    script = [
        Turn.tools([ToolSpec("mcp__example__wordcount", args)]),
        Turn.text_only("Four words."),
    ]
    with FakeServer("openai", script) as srv:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\n\n'
            f'[[mcp.servers]]\nname = "example"\ncommand = {json.dumps(sys.executable)}\n'
            f'args = [{json.dumps(str(pyz))}, "mcp", "example-server"]\n'
        )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
            "HOME": str(tmp_path),
            "REASONIX_HOME": str(tmp_path / "rx"),
        }
        out = subprocess.run(
            [sys.executable, str(pyz), "run", "--output-format", "json", "count the words"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = [r.json for r in srv.requests]
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["result"] == "Four words." and result["tool_calls"] == 1
    offered = {t["function"]["name"] for t in requests[0]["tools"]}
    assert {"read_file", "bash", "mcp__example__echo", "mcp__example__wordcount"} <= offered
    tool_msg = next(m for m in requests[1]["messages"] if m["role"] == "tool")
    assert json.loads(tool_msg["content"]) == {"words": 4, "lines": 2, "characters": 18}
