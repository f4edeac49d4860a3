"""delete_range: unique anchor lines, inclusive/exclusive, CRLF kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.delete_range import TOOL

TEXT = "keep 1\nBEGIN\nx\ny\nEND\nkeep 2\n"


def delete(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "f.txt").write_text(TEXT)
    return ToolContext(workspace=tmp_path)


def test_inclusive_delete_returns_diff(ctx: ToolContext, tmp_path: Path) -> None:
    res = delete(ctx, path="f.txt", start_anchor="BEGIN", end_anchor="END")
    assert not res.is_error, res.content
    assert (tmp_path / "f.txt").read_text() == "keep 1\nkeep 2\n"
    assert "Deleted lines 2-5 (4 lines)" in res.content
    assert "-BEGIN" in res.content and "--- a/f.txt" in res.content


def test_exclusive_delete_keeps_anchors(ctx: ToolContext, tmp_path: Path) -> None:
    res = delete(ctx, path="f.txt", start_anchor="BEGIN", end_anchor="END", inclusive=False)
    assert not res.is_error, res.content
    assert (tmp_path / "f.txt").read_text() == "keep 1\nBEGIN\nEND\nkeep 2\n"


@pytest.mark.parametrize(
    ("start", "end", "needle"),
    [
        ("keep", "END", "matches no line"),
        ("BEGIN", "nothing", "matches no line"),
        ("END", "BEGIN", "comes after"),
        ("", "END", "single non-empty line"),
    ],
)
def test_bad_anchors(ctx: ToolContext, tmp_path: Path, start: str, end: str, needle: str) -> None:
    res = delete(ctx, path="f.txt", start_anchor=start, end_anchor=end)
    assert res.is_error and needle in res.content
    assert (tmp_path / "f.txt").read_text() == TEXT


def test_ambiguous_anchor(tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_text("}\na\n}\n")
    res = delete(ToolContext(workspace=tmp_path), path="g.txt", start_anchor="a", end_anchor="}")
    assert res.is_error and "matches 2 lines (1, 3)" in res.content


def test_crlf_file(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"a\r\nb\r\nc\r\n")
    res = delete(ToolContext(workspace=tmp_path), path="w.txt", start_anchor="b", end_anchor="b")
    assert not res.is_error
    assert f.read_bytes() == b"a\r\nc\r\n"
