"""move_file: single files, new parent dirs, refuses existing destinations and dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.move_file import TOOL


def move(ctx: ToolContext, src: str, dst: str) -> ToolResult:
    return TOOL.execute(json.dumps({"source_path": src, "destination_path": dst}), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def test_move_into_new_subdir(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A")
    res = move(ctx, "a.txt", "sub/dir/b.txt")
    assert not res.is_error, res.content
    assert (tmp_path / "sub" / "dir" / "b.txt").read_text() == "A"
    assert not (tmp_path / "a.txt").exists()
    assert res.content == "Moved a.txt -> sub/dir/b.txt."


def test_existing_destination_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A")
    (tmp_path / "b.txt").write_text("B")
    res = move(ctx, "a.txt", "b.txt")
    assert res.is_error and "already exists" in res.content
    assert (tmp_path / "b.txt").read_text() == "B" and (tmp_path / "a.txt").exists()


def test_directory_source_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    res = move(ctx, "d", "e")
    assert res.is_error and "directory" in res.content
    assert (tmp_path / "d").is_dir()


def test_missing_source(ctx: ToolContext) -> None:
    res = move(ctx, "ghost.txt", "x.txt")
    assert res.is_error and "source not found" in res.content
