"""QA regressions for the file tools: check-then-write races, odd paths, delete_symbol.

The race tests plant a symlink *after* the path check (what a concurrent
process could do between resolve_write and the write) and insist the write
is refused and nothing outside the workspace changes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from unprivileged import run_python

from reasonix.errors import PathDenied
from reasonix.tool import ToolContext
from reasonix.tool.builtin import (
    delete_symbol,
    edit_file,
    move_file,
    read_file,
    todo_write,
    write_file,
)
from reasonix.tool.builtin._files import atomic_write, load_text
from reasonix.tool.paths import is_read_forbidden, resolve_write

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symlink races are POSIX")


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    return ws, outside


def _swap_for_link(directory: Path, target: Path) -> None:
    """Replace ``directory`` by a symlink to ``target`` (the attacker's move)."""
    for child in directory.iterdir():
        child.unlink()
    directory.rmdir()
    directory.symlink_to(target, target_is_directory=True)


@posix_only
def test_symlink_planted_after_the_check_is_not_followed(dirs: tuple[Path, Path]) -> None:
    ws, outside = dirs
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("old\n")
    real = resolve_write(ToolContext(workspace=ws), "sub/a.txt")
    _swap_for_link(ws / "sub", outside)
    with pytest.raises(PathDenied, match="symlink"):
        atomic_write(real, b"pwned\n")
    assert list(outside.iterdir()) == []


@posix_only
def test_symlink_planted_in_a_missing_parent_is_not_followed(dirs: tuple[Path, Path]) -> None:
    ws, outside = dirs
    real = resolve_write(ToolContext(workspace=ws), "new/deeper/a.txt")
    (ws / "new").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathDenied):
        atomic_write(real, b"pwned\n")
    assert list(outside.iterdir()) == []


@posix_only
def test_edit_after_swap_leaves_outside_untouched(dirs: tuple[Path, Path]) -> None:
    ws, outside = dirs
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("old\n")
    (outside / "a.txt").write_text("old\n")
    tf = load_text(resolve_write(ToolContext(workspace=ws), "sub/a.txt"), "sub/a.txt")
    (ws / "sub" / "a.txt").unlink()
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathDenied):
        tf.save("new\n")
    assert (outside / "a.txt").read_text() == "old\n"


@posix_only
def test_atomic_write_keeps_mode_and_creates_parents(dirs: tuple[Path, Path]) -> None:
    ws, _ = dirs
    script = ws / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o751)
    atomic_write(script, b"echo ho\n")
    assert script.read_text() == "echo ho\n"
    assert script.stat().st_mode & 0o777 == 0o751
    atomic_write(ws / "a" / "b" / "c.txt", b"x")
    assert (ws / "a" / "b" / "c.txt").read_bytes() == b"x"
    assert [p.name for p in ws.iterdir() if p.name.endswith(".tmp")] == []


@posix_only
def test_write_into_a_file_path_is_an_error(dirs: tuple[Path, Path]) -> None:
    ws, _ = dirs
    (ws / "f.txt").write_text("x\n")
    res = write_file.TOOL.execute(
        json.dumps({"path": "f.txt/inner.txt", "content": "y"}), ToolContext(workspace=ws)
    )
    assert res.is_error
    assert (ws / "f.txt").read_text() == "x\n"


@posix_only
def test_move_file_still_works_through_descriptors(dirs: tuple[Path, Path]) -> None:
    ws, outside = dirs
    (ws / "a.txt").write_text("a\n")
    ctx = ToolContext(workspace=ws)
    res = move_file.TOOL.execute(
        json.dumps({"source_path": "a.txt", "destination_path": "x/y/b.txt"}), ctx
    )
    assert not res.is_error, res.content
    assert (ws / "x" / "y" / "b.txt").read_text() == "a\n"
    assert not (ws / "a.txt").exists()
    assert list(outside.iterdir()) == []


def test_lone_surrogate_path_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    res = write_file.TOOL.execute('{"path": "bad\\udcff.txt", "content": "x"}', ctx)
    assert res.is_error
    assert "not valid Unicode" in res.content
    assert list(tmp_path.iterdir()) == []
    res = edit_file.TOOL.execute(
        '{"path": "bad\\udcff.txt", "old_string": "a", "new_string": "b"}', ctx
    )
    assert res.is_error
    assert "internal error" not in res.content


def test_delete_only_module_statement_leaves_an_empty_module(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    res = delete_symbol.TOOL.execute(
        json.dumps({"path": "m.py", "name": "f"}), ToolContext(workspace=tmp_path)
    )
    assert not res.is_error, res.content
    assert (tmp_path / "m.py").read_text() == ""


def test_delete_only_class_member_still_keeps_pass(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("class C:\n    def f(self):\n        return 1\n")
    res = delete_symbol.TOOL.execute(
        json.dumps({"path": "m.py", "name": "C.f"}), ToolContext(workspace=tmp_path)
    )
    assert not res.is_error, res.content
    assert (tmp_path / "m.py").read_text() == "class C:\n    pass\n"
    assert os.path.getsize(tmp_path / "m.py") > 0


_WRITE_THEN_MOVE = """
import json, sys
from pathlib import Path
from reasonix.tool import ToolContext
from reasonix.tool.builtin import move_file, write_file
ctx = ToolContext(workspace=Path(sys.argv[1]))
a = write_file.TOOL.execute(json.dumps({"path": "a.txt", "content": "x\\n"}), ctx)
b = move_file.TOOL.execute(json.dumps({"source_path": "a.txt", "destination_path": "d/b.txt"}), ctx)
print(json.dumps([[a.is_error, a.content], [b.is_error, b.content]]))
"""


@posix_only
def test_search_only_parent_does_not_block_writes(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    ws = locked / "ws"
    ws.mkdir(parents=True)
    locked.chmod(0o311)  # search and write, no read: like a 0711 home directory
    try:  # in a child with permission bits enforced: CI runs as root
        out = run_python(_WRITE_THEN_MOVE, str(ws))
        assert out.returncode == 0, out.stderr
        for is_error, content in json.loads(out.stdout):
            assert not is_error, content
        assert (ws / "d" / "b.txt").read_text() == "x\n"
        probe = run_python("import os, sys; os.listdir(sys.argv[1])", str(locked))
        assert probe.returncode != 0  # the parent really was unreadable to the tools
    finally:
        locked.chmod(0o755)


def test_latin1_file_refuses_characters_it_cannot_hold(tmp_path: Path) -> None:
    (tmp_path / "l1.txt").write_bytes(b"caf\xe9\n")
    ctx = ToolContext(workspace=tmp_path)
    res = edit_file.TOOL.execute(
        json.dumps({"path": "l1.txt", "old_string": "caf", "new_string": "\u20ac caf"}), ctx
    )
    assert res.is_error
    assert "internal error" not in res.content
    assert "U+20AC" in res.content
    assert (tmp_path / "l1.txt").read_bytes() == b"caf\xe9\n"
    res = edit_file.TOOL.execute(
        json.dumps({"path": "l1.txt", "old_string": "caf", "new_string": "t\u00eate"}), ctx
    )
    assert not res.is_error, res.content
    assert (tmp_path / "l1.txt").read_bytes() == b"t\xeate\xe9\n"


def test_lone_surrogate_content_is_a_tool_error(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    res = write_file.TOOL.execute('{"path": "a.txt", "content": "x\\ud800y"}', ctx)
    assert res.is_error
    assert "surrogate" in res.content
    assert not (tmp_path / "a.txt").exists()
    (tmp_path / "b.txt").write_text("abc")
    res = edit_file.TOOL.execute(
        '{"path": "b.txt", "old_string": "b", "new_string": "\\ud800"}', ctx
    )
    assert res.is_error
    assert "surrogate" in res.content
    assert (tmp_path / "b.txt").read_text() == "abc"


def test_todo_auto_ids_never_collide_with_given_ones(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    todos = [
        {"content": "a", "status": "pending"},
        {"content": "b", "status": "pending", "id": "1"},
    ]
    res = todo_write.TOOL.execute(json.dumps({"todos": todos}), ctx)
    assert not res.is_error, res.content
    ids = [t["id"] for t in ctx.extra["todos"]]
    assert ids[1] == "1"
    assert len(set(ids)) == 2
    res = todo_write.TOOL.execute(
        json.dumps({"todos": [{"content": "a", "status": "pending", "id": True}]}), ctx
    )
    assert res.is_error


def _secrets_of(home: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The one list of secret files (config.paths), for a home at ``home``."""
    from reasonix.config.paths import secret_paths

    monkeypatch.setenv("REASONIX_HOME", str(home))
    return secret_paths()


def test_state_and_secrets_are_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / ".reasonix"
    (home / "sessions" / "proj").mkdir(parents=True)
    (home / "sessions" / "proj" / "s.jsonl").write_text('{"role": "user"}\n')
    (home / ".env").write_text("DEEPSEEK_API_KEY=sk\n")
    # A run started in the home directory: the workspace contains the state too.
    ctx = ToolContext(
        workspace=tmp_path / "home",
        state_dir=home,
        config_dir=home,
        secrets=_secrets_of(home, monkeypatch),
    )
    for target in [
        "home/.reasonix/sessions/proj/s.jsonl",
        ".reasonix/sessions/proj/s.jsonl",
        ".reasonix/memory/facts.json",
        ".reasonix/archive/x.jsonl",
        ".reasonix/.env",
        ".reasonix/mcp-oauth/srv.json",
        ".reasonix/serve-password",
    ]:
        with pytest.raises(PathDenied, match="never"):
            resolve_write(ctx, target if not target.startswith("home/") else str(tmp_path / target))
    res = edit_file.TOOL.execute(
        json.dumps({"path": ".reasonix/.env", "old_string": "sk", "new_string": "stolen"}),
        ctx,
    )
    assert res.is_error
    assert (home / ".env").read_text() == "DEEPSEEK_API_KEY=sk\n"
    # The rest of the config directory stays writable (config.toml, commands/).
    assert resolve_write(ctx, ".reasonix/config.toml") == home / "config.toml"
    assert resolve_write(ctx, ".reasonix/commands/x.md") == home / "commands" / "x.md"
    # An explicit --add-dir for the memory directory lifts the guard for it only.
    ctx.write_roots = [home / "memory"]
    assert resolve_write(ctx, ".reasonix/memory/f.json") == home / "memory" / "f.json"
    with pytest.raises(PathDenied):
        resolve_write(ctx, ".reasonix/sessions/proj/s.jsonl")


def test_secrets_are_never_read_or_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / ".reasonix"
    (home / "mcp-oauth").mkdir(parents=True)
    (home / "mcp-oauth" / "srv.json").write_text('{"access_token": "TOKEN123"}')
    (home / ".env").write_text("DEEPSEEK_API_KEY=sk-SECRET\n")
    (home / "config.toml").write_text("[agent]\n")
    ctx = ToolContext(workspace=tmp_path, config_dir=home, secrets=_secrets_of(home, monkeypatch))
    for path in [".reasonix/.env", str(home / ".env"), ".reasonix/mcp-oauth/srv.json"]:
        res = read_file.TOOL.execute(json.dumps({"path": path}), ctx)
        assert res.is_error
        assert "SECRET" not in res.content and "TOKEN123" not in res.content
    assert is_read_forbidden(ctx, ".reasonix/.env")
    assert not is_read_forbidden(ctx, ".reasonix/config.toml")
    res = read_file.TOOL.execute(json.dumps({"path": ".reasonix/config.toml"}), ctx)
    assert not res.is_error, res.content
