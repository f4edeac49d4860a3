"""``reasonix mcp list|add|remove|auth|logout`` through the real CLI entry point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp_servers import need_module, sdk_argv

from reasonix.cli.main import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    return proj


def test_add_list_remove_keep_the_rest_of_the_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = project / "reasonix.toml"
    toml.write_text("# keep me\n[agent]\nmax_steps = 5  # and me\n")
    assert main(["mcp", "add", "fs", "--", "npx", "-y", "@scope/server", "/tmp"]) == 0
    assert main(["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-Key=${K}",
                 "--concurrency", "serial"]) == 0  # fmt: skip
    assert main(["mcp", "add", "web", "--url", "http://other"]) == 2  # duplicate
    text = toml.read_text()
    assert text.startswith("# keep me\n[agent]\nmax_steps = 5  # and me\n")
    assert 'args = ["-y", "@scope/server", "/tmp"]' in text
    assert 'headers = { X-Key = "${K}" }' in text
    capsys.readouterr()
    assert main(["mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert f"fs\tstdio\t{toml}" in out and "web\thttp" in out
    assert main(["mcp", "remove", "fs"]) == 0
    text = toml.read_text()
    assert "fs" not in text and 'name = "web"' in text and "# and me" in text


def test_remove_reveals_the_lower_declaration(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"x": {"command": "a"}, "y": {"command": "b"}}})
    )
    assert main(["mcp", "add", "x", "--", "from-toml"]) == 0
    capsys.readouterr()
    assert main(["mcp", "remove", "x"]) == 0
    assert "still declared in" in capsys.readouterr().out
    assert main(["mcp", "remove", "y"]) == 0
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"x": {"command": "a"}}
    }
    assert main(["mcp", "remove", "nope"]) == 2


def test_usage_errors(project: Path) -> None:
    assert main(["mcp", "add", "bad"]) == 2
    assert main(["mcp", "add", "bad", "--type", "sse"]) == 2
    assert main(["mcp"]) == 2


def test_list_check_connects(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    need_module("mcp")
    assert main(["mcp", "add", "sdk", "--", sys.executable, *sdk_argv("stdio")[1:]]) == 0
    assert main(["mcp", "add", "broken", "--", sys.executable, "-c", "pass"]) == 0
    capsys.readouterr()
    assert main(["mcp", "list", "--check", "--timeout", "15"]) == 1
    out = capsys.readouterr().out
    assert "sdk: ready" in out and "  - echo" in out
    assert "broken: failed" in out


@pytest.mark.usefixtures("untrusted")
def test_an_untrusted_workspaces_servers_are_named_not_started(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".mcp.json").write_text(
        '{"mcpServers": {"clone": {"url": "http://127.0.0.1:9/mcp"}}}'
    )
    assert main(["mcp", "list"]) == 0
    out, err = capsys.readouterr()
    assert "no MCP servers declared" in out
    assert "MCP server 'clone' connects to http://127.0.0.1:9/mcp" in err
    assert "not trusted" in err and "reasonix trust" in err
    assert main(["mcp", "auth", "clone"]) == 2
    assert "not trusted" in capsys.readouterr().err
    assert main(["mcp", "add", "mine", "--", "my-server"]) == 0
    assert "not trusted" in capsys.readouterr().err
    assert main(["mcp", "remove", "clone"]) == 0  # removing narrows: no trust needed
    assert "clone" not in (project / ".mcp.json").read_text()
    assert main(["trust"]) == 0
    capsys.readouterr()
    assert main(["mcp", "list"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("mine\tstdio") and err == ""
