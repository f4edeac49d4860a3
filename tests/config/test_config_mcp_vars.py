"""D22 at load time: an unset ${VAR} in an enabled MCP declaration is a config error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.config import load
from reasonix.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
BROKEN = '[[mcp.servers]]\nname = "s"\ncommand = "echo"\nenv = { A = "${RX_SURELY_UNSET_VAR}" }\n'


def test_unset_variable_names_file_key_variable_and_server(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(BROKEN)
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    text = str(info.value)
    assert "reasonix.toml" in text and "env.A" in text
    assert "RX_SURELY_UNSET_VAR" in text and "'s'" in text


def test_defaults_disabled_servers_and_the_mcp_command_are_lenient(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(BROKEN + "enabled = false\n")
    assert load(tmp_path).mcp_servers[0].enabled is False
    (tmp_path / "reasonix.toml").write_text(BROKEN.replace("_VAR}", "_VAR:-fallback}"))
    assert load(tmp_path).mcp_servers[0].name == "s"
    (tmp_path / "reasonix.toml").write_text(BROKEN)
    assert load(tmp_path, check_mcp_vars=False).mcp_servers[0].name == "s"


def test_cli_exits_2_and_mcp_remove_still_repairs(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(BROKEN)
    env = dict(os.environ, PYTHONPATH=str(ROOT), REASONIX_HOME=str(tmp_path / "home"))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "reasonix", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    shown = cli("config", "compact-ratio")
    assert shown.returncode == 2 and "RX_SURELY_UNSET_VAR" in shown.stderr
    assert "Traceback" not in shown.stderr
    assert cli("mcp", "remove", "s").returncode == 0
    assert cli("config", "compact-ratio").returncode == 0


def test_workspace_variables_count_as_set(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[[mcp.servers]]\nname = "fs"\ncommand = "npx"\n'
        'args = ["${CLAUDE_PROJECT_DIR}", "${REASONIX_WORKSPACE_ROOT}"]\n'
    )
    assert load(tmp_path).mcp_servers[0].args[0] == "${CLAUDE_PROJECT_DIR}"
