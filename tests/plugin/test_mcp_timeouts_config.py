"""MCP-20: per-server call_timeout_seconds and per-tool tool_timeout_seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.config import load
from reasonix.errors import ConfigError
from reasonix.plugin.mcp.connect import ConnectOptions
from reasonix.plugin.mcp.runtime import ServerRuntime

DECL = (
    '[[mcp.servers]]\nname = "s"\ncommand = "srv"\n'
    "call_timeout_seconds = {call}\ntool_timeout_seconds = {{ slow = {slow}, quick = 0 }}\n"
)


def runtime_for(tmp_path: Path, call: float, slow: float) -> ServerRuntime:
    (tmp_path / "reasonix.toml").write_text(DECL.format(call=call, slow=slow))
    server = load(tmp_path).mcp_servers[0]
    return ServerRuntime(
        server,
        lookup=lambda name: None,
        options=ConnectOptions(),
        startup_timeout=30,
        call_timeout=300,
        notice=lambda text: None,
    )


@pytest.mark.parametrize(
    ("call", "slow", "server_cap", "slow_cap", "quick_cap"),
    [(45, 900, 45.0, 900.0, 45.0), (0, 10, 300.0, 10.0, 300.0)],
)
def test_caps_resolve_per_server_and_tool(
    tmp_path: Path, call: float, slow: float, server_cap: float, slow_cap: float, quick_cap: float
) -> None:
    rt = runtime_for(tmp_path, call, slow)
    assert rt.call_timeout == server_cap
    assert float(rt.tool_timeouts.get("slow") or rt.call_timeout) == slow_cap
    assert float(rt.tool_timeouts.get("quick") or rt.call_timeout) == quick_cap  # 0 = default


def test_negative_caps_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(DECL.format(call=-1, slow=5))
    with pytest.raises(ConfigError, match="call_timeout_seconds"):
        load(tmp_path)
    (tmp_path / "reasonix.toml").write_text(DECL.format(call=5, slow=-2))
    with pytest.raises(ConfigError, match="tool_timeout_seconds"):
        load(tmp_path)
