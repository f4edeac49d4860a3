"""MCP declarations: TOML tables, .mcp.json, precedence (D16, MCP-21/22) and expansion (D22)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.config import load, paths
from reasonix.config.mcp import expand_server
from reasonix.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_project_toml_over_json_over_global(tmp_path: Path) -> None:
    user = write(
        paths.user_config_path(),
        '[[mcp.servers]]\nname = "a"\ncommand = "global-a"\n'
        '[[mcp.servers]]\nname = "b"\ncommand = "global-b"\n'
        '[[plugins]]\nname = "c"\ncommand = "global-c"\n',
    )
    mcp_json = write(
        tmp_path / ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "a": {"command": "json-a", "args": ["x"], "env": {"K": "${K}"}},
                    "b": {"type": "sse", "url": "http://b/sse", "headers": {"H": "v"}},
                }
            }
        ),
    )
    project = write(
        tmp_path / "reasonix.toml",
        '[[mcp.servers]]\nname = "a"\ntransport = "streamable-http"\nurl = "http://a/mcp"\n',
    )
    servers = {s.name: s for s in load(tmp_path).mcp_servers}
    assert servers["a"].type == "streamable-http"
    assert servers["a"].source == str(project)  # reasonix.toml beats .mcp.json
    assert servers["b"].type == "sse"
    assert servers["b"].headers == {"H": "v"}
    assert servers["b"].source == str(mcp_json)  # project beats global
    assert servers["c"].command == "global-c"  # [[plugins]] alias
    assert servers["c"].type == "stdio"
    assert servers["c"].source == str(user)


def test_removing_higher_declaration_reveals_lower(tmp_path: Path) -> None:
    write(paths.user_config_path(), '[[mcp.servers]]\nname = "a"\ncommand = "global"\n')
    write(tmp_path / ".mcp.json", '{"mcpServers": {"a": {"command": "json"}}}')
    assert load(tmp_path).mcp_servers[0].command == "json"
    (tmp_path / ".mcp.json").unlink()
    assert load(tmp_path).mcp_servers[0].command == "global"


def test_type_defaults(tmp_path: Path) -> None:
    write(
        tmp_path / ".mcp.json",
        '{"mcpServers": {"s": {"command": "x"}, "h": {"url": "http://h"}}}',
    )
    servers = {s.name: s.type for s in load(tmp_path).mcp_servers}
    assert servers == {"s": "stdio", "h": "http"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[mcp.servers]]\nname = "a"\ntype = "grpc"\ncommand = "x"\n', "grpc"),
        ('[[mcp.servers]]\nname = "a"\n', "command"),
        ('[[mcp.servers]]\ncommand = "x"\n', "name"),
        ('[[mcp.servers]]\nname = "a"\ntype = "http"\n', "url"),
        ('[[mcp.servers]]\nname = "a"\ncommand = "x"\nargs = "y"\n', "list of strings"),
    ],
)
def test_toml_errors_name_file(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path / "reasonix.toml", text)
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert str(path) in str(info.value)
    assert needle in str(info.value)


def test_json_errors_name_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", '{\n  "mcpServers": {\n    "a": {"command": }\n  }\n}')
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert info.value.line == 3
    assert str(path) in str(info.value)
    write(tmp_path / ".mcp.json", '{"mcpServers": {"a": {"type": "ws", "url": "u"}}}')
    cfg = load(tmp_path)  # a bad entry only skips itself (issue 35)
    assert cfg.mcp_servers == []
    assert any(str(path) in w and "'a' skipped" in w and "ws" in w for w in cfg.warnings)


def test_no_expansion_at_load_then_expand_server(tmp_path: Path) -> None:
    write(
        tmp_path / "reasonix.toml",
        '[[mcp.servers]]\nname = "gh"\ncommand = "${BIN:-npx}"\nargs = ["${ROOT}"]\n'
        'env = { TOKEN = "${GH_TOKEN}" }\nurl = ""\n',
    )
    server = load(tmp_path, check_mcp_vars=False).mcp_servers[0]
    assert server.args == ["${ROOT}"]  # kept verbatim: expansion happens per session
    expanded = expand_server(server, {"ROOT": "/w", "GH_TOKEN": "t"})
    assert expanded.command == "npx"
    assert expanded.args == ["/w"]
    assert expanded.env == {"TOKEN": "t"}
    assert server.args == ["${ROOT}"]  # the original is untouched
    with pytest.raises(ConfigError) as info:
        expand_server(server, {"ROOT": "/w"})
    assert "GH_TOKEN" in str(info.value)
    assert "'gh'" in str(info.value)


def test_one_bad_mcp_json_server_skips_only_itself(tmp_path: Path) -> None:
    """Issue 35, item 8: as Claude Code does, a bad or unresolvable ``.mcp.json`` server is
    left out with a warning naming it and the file; ``"disabled": true`` is skipped quietly.
    The entries are in the ``mcpServers`` shape Claude Code documents (code.claude.com/docs/
    en/mcp, "Project scope")."""
    path = write(
        tmp_path / ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": "npx", "args": ["-y", "some-fs-server", "."]},
                    "grpc": {"type": "grpc", "url": "http://127.0.0.1:9"},
                    "github": {
                        "type": "http",
                        "url": "https://api.example.com/mcp",
                        "headers": {"Authorization": "Bearer ${RX_SURELY_UNSET_TOKEN}"},
                    },
                    "db": {
                        "command": "db-mcp",
                        "env": {"URL": "${RX_SURELY_UNSET_DB:-sqlite://x}"},
                    },
                    "old": {"command": "old-server", "disabled": True},
                    "half": {"disabled": True},
                }
            },
            indent=2,
        ),
    )
    cfg = load(tmp_path)
    assert [s.name for s in cfg.mcp_servers] == ["files", "db"]
    skipped = [w for w in cfg.warnings if "skipped" in w]
    assert len(skipped) == 2, cfg.warnings
    grpc = next(w for w in skipped if "'grpc'" in w)
    assert grpc.startswith(f"{path}: MCP server 'grpc' skipped") and "unknown MCP transport" in grpc
    github = next(w for w in skipped if "'github'" in w)
    assert github.startswith(f"{path}: MCP server 'github' skipped")
    assert "RX_SURELY_UNSET_TOKEN" in github and "headers.Authorization" in github
    assert not any("'old'" in w or "'half'" in w for w in cfg.warnings)  # disabled: quiet


def test_a_bad_server_in_our_own_toml_stays_an_error(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", '{"mcpServers": {"ok": {"command": "x"}}}')
    write(
        tmp_path / "reasonix.toml",
        '[[mcp.servers]]\nname = "t"\ncommand = "y"\nenv = { A = "${RX_SURELY_UNSET_VAR}" }\n',
    )
    with pytest.raises(ConfigError, match="RX_SURELY_UNSET_VAR"):
        load(tmp_path)
