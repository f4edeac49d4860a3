"""Issue 12 item 8: header names and values are checked at load, not at the first request.

A header that would inject another header or break the request is a
ConfigError naming the file and the key (exit 2) — in ``reasonix.toml``
MCP servers, ``.mcp.json`` servers, ``[[providers]]``, and after ``${VAR}``
expansion. Before the fix it surfaced as a connection failure (exit 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.config import load
from reasonix.config.expand import environ_lookup
from reasonix.config.layers import header_problem
from reasonix.config.mcp import expand_server
from reasonix.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
BAD = [
    ("X-A", "a\nInjected: 1"),
    ("X-A", "a\r\nInjected: 1"),
    ("X-A", "nul\x00byte"),
    ("X-A", "esc\x1b[2J"),
    ("X-A", "del\x7f"),
    ("X A", "v"),
    ("X-A:", "v"),
    ("", "v"),
    ("X-\u00e9", "v"),
    ("Bad\nName", "v"),
]
GOOD = [("X-A", "plain"), ("Authorization", "Bearer abc.def"), ("X-Tab", "a\tb"),
        ("X-Utf8", "café"), ("x_y.z~!", "")]  # fmt: skip


@pytest.mark.parametrize(("name", "value"), BAD)
def test_bad_headers_are_named(name: str, value: str) -> None:
    assert header_problem(name, value) is not None


@pytest.mark.parametrize(("name", "value"), GOOD)
def test_good_headers_pass(name: str, value: str) -> None:
    assert header_problem(name, value) is None


def _toml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string for these


@pytest.mark.parametrize(("name", "value"), BAD)
@pytest.mark.parametrize("where", ["mcp-toml", "mcp-json", "provider"])
def test_load_refuses_a_bad_header(tmp_path: Path, where: str, name: str, value: str) -> None:
    header = f"{_toml_str(name)} = {_toml_str(value)}"
    if where == "mcp-toml":
        (tmp_path / "reasonix.toml").write_text(
            f'[[mcp.servers]]\nname = "s"\nurl = "http://127.0.0.1:9/mcp"\n'
            f"headers = {{ {header} }}\n"
        )
        target = "reasonix.toml"
    elif where == "mcp-json":
        doc = {"mcpServers": {"s": {"url": "http://127.0.0.1:9/mcp", "headers": {name: value}}}}
        (tmp_path / ".mcp.json").write_text(json.dumps(doc))
        target = ".mcp.json"
    else:
        (tmp_path / "reasonix.toml").write_text(
            '[[providers]]\nname = "p"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
            f'models = ["m"]\nheaders = {{ {header} }}\n'
        )
        target = "reasonix.toml"
    if where == "mcp-json":  # one bad .mcp.json entry is skipped, naming it (issue 35)
        cfg = load(tmp_path)
        assert cfg.mcp_servers == []
        assert any(target in w and "'s' skipped" in w and "header" in w for w in cfg.warnings)
        return
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert target in str(info.value) and "header" in str(info.value)
    assert (info.value.key or "").startswith(("headers", "mcp", "providers"))


def test_a_variable_that_brings_a_newline_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[[mcp.servers]]\nname = "s"\nurl = "http://127.0.0.1:9/mcp"\n'
        'headers = { "X-Token" = "${RX_TOKEN}" }\n'
    )
    monkeypatch.setenv("RX_TOKEN", "abc\nInjected: 1")
    (server,) = load(tmp_path, check_mcp_vars=False).mcp_servers
    with pytest.raises(ConfigError, match="X-Token"):
        expand_server(server, environ_lookup)


def test_run_reports_a_bad_header_as_exit_2(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        'default_model = "p/m"\n[[providers]]\nname = "p"\nkind = "openai"\n'
        'base_url = "http://127.0.0.1:9/v1"\nmodels = ["m"]\napi_key_env = "RX_K"\n'
        'headers = { "X-A" = "a\\nInjected: 1" }\n'
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), REASONIX_HOME=str(tmp_path / "h"), RX_K="k")
    out = subprocess.run(
        [sys.executable, "-m", "reasonix", "run", "--json", "hi"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2, out.stdout
    result = json.loads(out.stdout)
    assert result["error"]["type"] == "ConfigError" and "X-A" in result["error"]["message"]
