"""ls tool: flat and recursive listings, caps, forbid_read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin import ls as ls_mod
from reasonix.tool.builtin.ls import TOOL


def run(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ctx)


def make_tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "m.py").write_text("abc")
    (root / "src" / "z.py").write_text("")
    (root / "b.txt").write_text("hello")
    (root / ".env").write_text("S=1")
    for heavy in (".git", "node_modules", "__pycache__", ".venv"):
        (root / heavy).mkdir()
        (root / heavy / "junk").write_text("x")
    os.symlink("b.txt", root / "link")


def test_flat_listing(tmp_path: Path) -> None:
    make_tree(tmp_path)
    res = run(ToolContext(workspace=tmp_path))
    assert res.content == (
        ".env\t3\n.git/\n.venv/\n__pycache__/\nb.txt\t5\nlink -> b.txt\nnode_modules/\nsrc/"
    )
    assert TOOL.read_only


def test_recursive_listing_skips_heavy_dirs(tmp_path: Path) -> None:
    make_tree(tmp_path)
    res = run(ToolContext(workspace=tmp_path), path=".", recursive=True)
    assert res.content.splitlines() == [
        ".env\t3",
        ".git/",
        ".venv/",
        "__pycache__/",
        "b.txt\t5",
        "link -> b.txt",
        "node_modules/",
        "src/",
        "src/pkg/",
        "src/pkg/m.py\t3",
        "src/z.py\t0",
    ]


def test_forbid_read_and_errors(tmp_path: Path) -> None:
    make_tree(tmp_path)
    ctx = ToolContext(workspace=tmp_path, forbid_read=[tmp_path / "src", tmp_path / ".env"])
    listing = run(ctx, recursive=True).content
    assert "src" not in listing and ".env" not in listing and "b.txt\t5" in listing
    assert run(ctx, path="src").is_error
    missing = run(ctx, path="nope")
    assert missing.is_error and "does not exist" in missing.content
    (tmp_path / "empty").mkdir()
    assert run(ctx, path="empty").content == "(empty directory)"
    assert run(ctx, path="b.txt").content == "b.txt\t5"
    assert run(ctx, recursive="yes").is_error


def test_cap_note(tmp_path: Path, monkeypatch: object) -> None:
    for i in range(30):
        (tmp_path / f"f{i:02}").write_text("")
    old = ls_mod.MAX_ENTRIES
    ls_mod.MAX_ENTRIES = 10
    try:
        res = run(ToolContext(workspace=tmp_path))
        rec = run(ToolContext(workspace=tmp_path), recursive=True)
    finally:
        ls_mod.MAX_ENTRIES = old
    assert res.content.splitlines()[-1] == "[20 more entries not shown; list a subdirectory]"
    assert len(res.content.splitlines()) == 11
    assert rec.content.splitlines()[-1].startswith("[20 more entries")
