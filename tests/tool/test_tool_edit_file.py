"""edit_file on real files: unique match, errors with hints, line endings, encodings."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.edit_file import TOOL


def edit(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def test_unique_match_is_replaced(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("def f():\n    return 1\n")
    res = edit(ctx, path="a.py", old_string="return 1", new_string="return 2")
    assert not res.is_error, res.content
    assert f.read_text() == "def f():\n    return 2\n"
    assert "replaced 1 occurrence" in res.content and "return 2" in res.content
    assert TOOL.read_only is False


def test_two_matches_error_and_file_unchanged(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x = 1\ny = 2\nx = 1\n")
    res = edit(ctx, path="a.txt", old_string="x = 1", new_string="x = 3")
    assert res.is_error
    assert "matches 2 times" in res.content and "lines 1, 3" in res.content
    assert "replace_all" in res.content and "context" in res.content
    assert f.read_text() == "x = 1\ny = 2\nx = 1\n"


def test_replace_all(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("foo foo\nfoo\n")
    res = edit(ctx, path="a.txt", old_string="foo", new_string="bar", replace_all=True)
    assert "replaced 3 occurrences" in res.content
    assert f.read_text() == "bar bar\nbar\n"


def test_not_found_lists_near_matches_and_whitespace_hint(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("def main():\n\treturn compute(1, 2)\n")
    res = edit(ctx, path="a.py", old_string="    return compute(1, 2)", new_string="pass")
    assert res.is_error
    assert "not found" in res.content
    assert "whitespace is ignored" in res.content
    assert "2: \treturn compute(1, 2)" in res.content
    res = edit(ctx, path="a.py", old_string="return compute(1, 3)", new_string="x")
    assert "Closest lines" in res.content and "2:" in res.content
    assert f.read_text() == "def main():\n\treturn compute(1, 2)\n"


def test_identical_and_empty_strings_are_errors(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc\n")
    assert "identical" in edit(ctx, path="a.txt", old_string="abc", new_string="abc").content
    assert "write_file" in edit(ctx, path="a.txt", old_string="", new_string="x").content


def test_missing_file(ctx: ToolContext) -> None:
    res = edit(ctx, path="nope.txt", old_string="a", new_string="b")
    assert res.is_error and "file not found" in res.content


def test_crlf_is_preserved(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    res = edit(ctx, path="win.txt", old_string="one\ntwo", new_string="uno\ndos\nmas")
    assert not res.is_error, res.content
    assert f.read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"


def test_bom_and_latin1_are_preserved(ctx: ToolContext, tmp_path: Path) -> None:
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfname = 'x'\n")
    assert not edit(ctx, path="bom.txt", old_string="'x'", new_string="'y'").is_error
    assert bom.read_bytes() == b"\xef\xbb\xbfname = 'y'\n"
    lat = tmp_path / "lat.txt"
    lat.write_bytes("caf\xe9 = 1\n".encode("latin-1"))
    assert not edit(ctx, path="lat.txt", old_string="= 1", new_string="= 2").is_error
    assert lat.read_bytes() == "caf\xe9 = 2\n".encode("latin-1")


def test_file_mode_is_kept(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("echo a\n")
    os.chmod(f, 0o755)
    edit(ctx, path="run.sh", old_string="echo a", new_string="echo b")
    assert stat.S_IMODE(f.stat().st_mode) == 0o755
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]  # no temp file left


def test_binary_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    res = edit(ctx, path="img.png", old_string="PNG", new_string="JPG")
    assert res.is_error and "binary" in res.content


def test_mixed_line_endings_match_as_given(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "mixed.txt"
    f.write_bytes(b"a\r\nb\r\nc\nd\n")  # mostly CRLF, with an LF tail
    res = edit(ctx, path="mixed.txt", old_string="c\nd", new_string="C\nD")
    assert not res.is_error, res.content
    assert f.read_bytes() == b"a\r\nb\r\nC\nD\n"


def test_line_number_prefix_hint(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    res = edit(ctx, path="a.txt", old_string="     1\talpha", new_string="beta")
    assert res.is_error and "line-number prefixes" in res.content
