"""``reasonix mcp auth`` / ``reasonix mcp logout`` as functions, against the SDK-built AS/RS."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from oauth_server.harness import Browser, OAuthServer, running

from reasonix.cli.mcp_auth import auth, logout
from reasonix.plugin.mcp import oauth_store

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def srv() -> Iterator[OAuthServer]:
    with running("--public") as server:
        yield server


def _declare(cwd: Path, body: str) -> None:
    (cwd / "reasonix.toml").write_text(body, encoding="utf-8")


def test_auth_then_logout(
    srv: OAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTES_HOST", srv.base)
    _declare(
        tmp_path, '[[mcp.servers]]\nname = "notes"\ntype = "http"\nurl = "${NOTES_HOST}/mcp"\n'
    )
    browser, out, err = Browser(), io.StringIO(), io.StringIO()
    assert auth("notes", tmp_path, open_url=browser, timeout=20, out=out, err=err) == 0, (
        err.getvalue()
    )
    browser.join()
    assert "Authorized MCP server 'notes'" in out.getvalue()
    assert browser.query()["resource"] == srv.mcp_url  # ${VAR} expanded
    path = oauth_store.state_path("notes")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.resolve().is_relative_to(tmp_path.resolve())  # not in the workspace
    assert oauth_store.load("notes", srv.mcp_url) is not None

    out = io.StringIO()
    assert logout("notes", tmp_path, out=out) == 0
    assert "Removed" in out.getvalue()
    assert not path.exists()
    out = io.StringIO()
    assert logout("notes", tmp_path, out=out) == 0
    assert "No OAuth credentials" in out.getvalue()


def test_auth_refuses_what_oauth_does_not_apply_to(tmp_path: Path) -> None:
    _declare(
        tmp_path,
        '[[mcp.servers]]\nname = "local"\ncommand = "true"\n\n'
        '[[mcp.servers]]\nname = "keyed"\ntype = "http"\nurl = "https://s.example/mcp"\n'
        'headers = { Authorization = "Bearer k" }\n',
    )
    err = io.StringIO()
    assert auth("missing", tmp_path, open_url=print, err=err) == 2
    assert "no MCP server named 'missing'" in err.getvalue()
    err = io.StringIO()
    assert auth("local", tmp_path, open_url=print, err=err) == 2
    assert "stdio server" in err.getvalue()
    err = io.StringIO()
    assert auth("keyed", tmp_path, open_url=print, err=err) == 2
    assert "static Authorization header" in err.getvalue()


def test_auth_reports_an_unreachable_server(tmp_path: Path) -> None:
    _declare(
        tmp_path, '[[mcp.servers]]\nname = "dead"\ntype = "http"\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    err = io.StringIO()
    assert auth("dead", tmp_path, open_url=print, err=err) == 1
    assert "reasonix mcp auth: dead: cannot reach" in err.getvalue()


def _reasonix(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real entry point; ``BROWSER`` names a script that plays the browser."""
    visit = Path(__file__).resolve().parent / "oauth_server" / "visit.py"
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "BROWSER": f"{sys.executable} {visit} %s",
    }
    return subprocess.run(
        [sys.executable, "-m", "reasonix", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_reasonix_mcp_auth_end_to_end(srv: OAuthServer, tmp_path: Path) -> None:
    _declare(tmp_path, f'[[mcp.servers]]\nname = "notes"\nurl = "{srv.mcp_url}"\n')
    done = _reasonix(tmp_path, "mcp", "auth", "notes")
    assert done.returncode == 0, done.stderr
    assert "Authorize Reasonix for MCP server 'notes'" in done.stdout
    assert "Authorized MCP server 'notes' (scopes: read write)" in done.stdout
    assert oauth_store.load("notes", srv.mcp_url) is not None
    done = _reasonix(tmp_path, "mcp", "logout", "notes")
    assert done.returncode == 0, done.stderr
    assert "Removed the OAuth credentials" in done.stdout
    assert not oauth_store.state_path("notes").exists()
