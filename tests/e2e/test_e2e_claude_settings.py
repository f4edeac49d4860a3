"""Claude Code project files through the built .pyz (issue 35, items 4 and 8).

A workspace set up for Claude Code: ``.claude/settings.json`` allows one command and
denies WebFetch; ``.mcp.json`` holds a server with an unknown transport, one whose
header needs a variable nobody set, and one switched off. Both files are written here
in the shapes Claude Code documents (code.claude.com/docs/en/settings ``permissions``,
code.claude.com/docs/en/mcp project-scope ``mcpServers``). The user's provider is in
the user's own ``<home>/config.toml``, so the untrusted run still reaches the model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, ToolSpec, Turn

SETTINGS = {
    "permissions": {
        "allow": ["Bash(echo from-claude-allow:*)"],
        "deny": ["WebFetch"],
    }
}
MCP = {
    "mcpServers": {
        "broken": {"type": "websocket", "url": "ws://127.0.0.1:9/mcp"},
        "needs-token": {
            "type": "http",
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${RX_E2E_SURELY_UNSET_TOKEN}"},
        },
        "retired": {"command": "no-such-server-binary", "disabled": True},
    }
}


def _workspace(tmp_path: Path, url: str, trusted: bool) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "rx"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'default_model = "fake"\n[[providers]]\nname = "fake"\nbase_url = "{url}"\n'
        'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )
    ws = tmp_path / "repo"
    (ws / ".claude").mkdir(parents=True, exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    (ws / ".mcp.json").write_text(json.dumps(MCP, indent=2))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),  # no ~/.claude of the machine's user
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(home),
        "FAKE_PROVIDER_KEY": "sk-fake",
    }
    if trusted:
        env["REASONIX_TRUST_WORKSPACE"] = "1"
    return ws, env


def _run(pyz: Path, trusted: bool, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    calls = [
        ToolSpec("bash", json.dumps({"command": "echo from-claude-allow 42"})),
        ToolSpec("bash", json.dumps({"command": "echo not-in-any-rule"})),
        ToolSpec("web_fetch", json.dumps({"url": "http://127.0.0.1:9/page"})),
    ]
    with FakeServer("openai", [Turn.tools(calls), Turn.text_only("done")]) as srv:
        ws, env = _workspace(tmp_path, srv.url, trusted)
        done = subprocess.run(
            [sys.executable, str(pyz), "run", "--output-format", "json", "go"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr  # a bad .mcp.json entry no longer exits 2
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        messages = srv.requests[1].json["messages"]
    return result, [m["content"] for m in messages if m["role"] == "tool"]


@pytest.mark.e2e
def test_claude_settings_permissions_and_a_bad_mcp_entry_in_a_trusted_workspace(
    pyz: Path, tmp_path: Path
) -> None:
    result, tools = _run(pyz, True, tmp_path)
    assert tools[0].startswith("from-claude-allow 42\n")  # the project's allow rule ran it
    assert tools[1].startswith("blocked: bash")  # no rule: refused headless
    assert "deny rule 'WebFetch'" in tools[2]
    warnings = result["warnings"]
    mcp_json = str(tmp_path / "repo" / ".mcp.json")
    broken = [w for w in warnings if "'broken' skipped" in w]
    token = [w for w in warnings if "'needs-token' skipped" in w]
    assert broken and broken[0].startswith(mcp_json) and "websocket" in broken[0]
    assert token and token[0].startswith(mcp_json) and "RX_E2E_SURELY_UNSET_TOKEN" in token[0]
    assert not any("retired" in w for w in warnings)  # "disabled": true is quiet


@pytest.mark.e2e
def test_an_untrusted_workspace_keeps_the_deny_and_names_the_allow_it_left_out(
    pyz: Path, tmp_path: Path
) -> None:
    result, tools = _run(pyz, False, tmp_path)
    assert tools[0].startswith("blocked: bash")  # the allow rule was left out
    assert "deny rule 'WebFetch'" in tools[2]  # deny rules always apply
    settings = str(tmp_path / "repo" / ".claude" / "settings.json")
    skipped = [w for w in result["warnings"] if w.startswith("untrusted workspace: skipped")]
    assert any("permissions.allow" in w and settings in w for w in skipped), result["warnings"]
