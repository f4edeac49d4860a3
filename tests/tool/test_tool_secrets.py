"""Issue 32: every file tool refuses every Reasonix secret (the one list in config.paths).

The tool context comes from the composition root (``boot.permissions.tool_context``),
so these tests also prove the list reaches the tools: provider keys, the MCP OAuth
store, serve's password hash, remote serve's broker and login tokens, and a serve
``--token-file`` registered for the process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix import config
from reasonix.agent.session import Session
from reasonix.boot.permissions import tool_context
from reasonix.config import paths
from reasonix.tool import ToolContext
from reasonix.tool.builtin import edit_file, glob, grep, ls, move_file, read_file, write_file

# relative to the Reasonix home, except the token file (outside it, registered at run time)
SECRETS = {
    ".env": "DEEPSEEK_API_KEY=SECRET-ENV",
    "mcp-oauth/srv.json": '{"access_token": "SECRET-OAUTH"}',
    "serve-password": "pbkdf2_sha256$1$SECRET-HASH$x",
    "remote/serve/.env": "REASONIX_BROKER_TOKEN=SECRET-BROKER",
    "remote/serve/token": "SECRET-LOGIN-TOKEN-0123456789",
}


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolContext]:
    home = tmp_path / "rx"
    for rel, text in SECRETS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    (home / "config.toml").write_text("# ordinary-config\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "serve-token").write_text("SECRET-TOKEN-FILE-0123456789\n")  # --token-file ./serve-token
    (ws / "app.py").write_text("print('hi')\n")
    monkeypatch.setenv("REASONIX_HOME", str(home))
    monkeypatch.setattr(paths, "_registered", [])
    paths.register_secret(ws / "serve-token")
    with Session.create(ws) as session:
        yield tool_context(config.load(ws), ws, session, headless=True)


def _all_secret_paths(ctx: ToolContext) -> list[str]:
    home = paths.home_dir()
    return [str(home / rel) for rel in SECRETS] + [str(Path(ctx.workspace) / "serve-token")]


def test_read_file_refuses_each_secret(ctx: ToolContext) -> None:
    for path in [*_all_secret_paths(ctx), "serve-token", "../rx/.env"]:
        res = read_file.TOOL.execute(json.dumps({"path": path}), ctx)
        assert res.is_error, path
        assert "SECRET" not in res.content and "secrets" in res.content
    home = paths.home_dir()
    res = read_file.TOOL.execute(json.dumps({"path": str(home / "config.toml")}), ctx)
    assert not res.is_error and "ordinary-config" in res.content  # the rest of the home is not


def test_a_symlink_in_the_workspace_does_not_reach_a_secret(ctx: ToolContext) -> None:
    home, ws = paths.home_dir(), Path(ctx.workspace)
    (ws / "link.txt").symlink_to(home / "serve-password")
    (ws / "cfg").symlink_to(home)
    for path in ["link.txt", "cfg/.env", "cfg/remote/serve/token"]:
        res = read_file.TOOL.execute(json.dumps({"path": path}), ctx)
        assert res.is_error and "SECRET" not in res.content, path


def test_walking_tools_never_show_a_secret(ctx: ToolContext) -> None:
    home = str(paths.home_dir())
    for tool, args in [
        (grep.TOOL, {"pattern": "SECRET", "path": home}),
        (grep.TOOL, {"pattern": "SECRET", "path": str(ctx.workspace)}),
        (ls.TOOL, {"path": home}),
        (ls.TOOL, {"path": str(ctx.workspace)}),
        (glob.TOOL, {"pattern": "**/*", "path": home}),
    ]:
        res = tool.execute(json.dumps(args), ctx)
        text = res.content
        assert "SECRET" not in text, (tool.name, text)
        for name in ("serve-password", "mcp-oauth", "serve-token", "token"):
            assert name not in text.split(), (tool.name, text)


def test_writers_never_change_a_secret(ctx: ToolContext) -> None:
    for path in _all_secret_paths(ctx):
        before = Path(path).read_text()
        for tool, args in [
            (write_file.TOOL, {"path": path, "content": "x"}),
            (edit_file.TOOL, {"path": path, "old_string": "SECRET", "new_string": "x"}),
            (move_file.TOOL, {"source_path": path, "destination_path": "moved.txt"}),
        ]:
            assert tool.execute(json.dumps(args), ctx).is_error, (tool.name, path)
        assert Path(path).read_text() == before


def test_the_sandbox_masks_the_same_list(ctx: ToolContext) -> None:
    """bash and hooks run in ctx.sandbox: its masked paths hold every secret."""
    masked = {str(p) for p in ctx.sandbox.forbid_read}
    for path in _all_secret_paths(ctx):
        owner = Path(path) if Path(path).name != "srv.json" else Path(path).parent
        assert str(owner) in masked, path
    assert ctx.forbid_read == []  # the user's own forbid_read list is left as configured
