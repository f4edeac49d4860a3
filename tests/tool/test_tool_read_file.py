"""read_file on real files: paging, line numbers, binary refusal, encodings, huge output."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from reasonix.tool import CONTENT_LIMIT_BYTES, ToolContext, ToolResult
from reasonix.tool.builtin.read_file import TOOL


def read(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def test_numbers_lines_cat_n_style(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    res = read(ctx, path="a.txt")
    assert not res.is_error
    assert res.content == "     1\talpha\n     2\tbeta"
    assert TOOL.read_only is True


def test_default_page_is_2000_lines_with_hint(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"l{i}\n" for i in range(1, 3001)))
    res = read(ctx, path="big.txt")
    lines = res.content.splitlines()
    assert lines[0] == "     1\tl1"
    assert lines[1999] == "  2000\tl2000"
    assert "offset=2000" in lines[-1] and "3000" in lines[-1]
    nxt = read(ctx, path="big.txt", offset=2000)
    assert nxt.content.splitlines()[0] == "  2001\tl2001"
    assert nxt.content.splitlines()[-1] == "[end of file: 3000 lines]"


def test_offset_and_limit(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nc\nd\n")
    res = read(ctx, path="f.txt", offset=1, limit=2)
    assert res.content.splitlines()[:2] == ["     2\tb", "     3\tc"]
    assert "continue with offset=3" in res.content
    past = read(ctx, path="f.txt", offset=10)
    assert past.is_error and "past the end" in past.content and "4 lines" in past.content


def test_long_lines_are_cut(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\n")
    res = read(ctx, path="min.js")
    assert "line cut: 5000 characters" in res.content
    assert len(res.content) < 2200


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "PNG image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF document"),
        (b"\xff\xd8\xff\xe0" + b"\x00" * 10, "JPEG image"),
        (b"abc\x00def", "binary data"),
    ],
)
def test_binary_files_are_refused(ctx: ToolContext, tmp_path: Path, data: bytes, kind: str) -> None:
    (tmp_path / "blob").write_bytes(data)
    res = read(ctx, path="blob")
    assert res.is_error
    assert "binary file" in res.content and kind in res.content


def test_encodings(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    assert read(ctx, path="bom.txt").content == "     1\thello\n     2\tworld"
    (tmp_path / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert read(ctx, path="latin.txt").content == "     1\tcafé"
    (tmp_path / "u16.txt").write_bytes("héllo\n".encode("utf-16"))
    assert read(ctx, path="u16.txt").content == "     1\théllo"


def test_missing_file_and_directory(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("x")
    res = read(ctx, path="config.yml")
    assert res.is_error and "file not found" in res.content and "config.yaml" in res.content
    (tmp_path / "d").mkdir()
    res = read(ctx, path="d")
    assert res.is_error and "directory" in res.content and "ls" in res.content


def test_empty_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    assert read(ctx, path="e.txt").content == "(empty file: e.txt)"


def test_bad_arguments(ctx: ToolContext) -> None:
    assert read(ctx).is_error
    assert TOOL.execute("{bad", ctx).is_error
    assert read(ctx, path="x", offset=-1).is_error


def test_special_files_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    # Root ignores chmod 000, so use cases that fail for root too: a FIFO (which
    # would block a naive read forever) and a socket.
    os.mkfifo(tmp_path / "pipe")
    res = read(ctx, path="pipe")
    assert res.is_error and "not a regular file" in res.content
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(str(tmp_path / "s.sock"))
        res = read(ctx, path="s.sock")
    finally:
        srv.close()
    assert res.is_error and "not a regular file" in res.content


def test_huge_page_keeps_model_view_bounded_and_raw_complete(
    ctx: ToolContext, tmp_path: Path
) -> None:
    line = "y" * 1000
    (tmp_path / "huge.txt").write_text((line + "\n") * 2000)
    res = read(ctx, path="huge.txt")
    assert len(res.content.encode("utf-8")) <= CONTENT_LIMIT_BYTES
    shown = [ln for ln in res.content.splitlines() if "\t" in ln]
    assert 20 < len(shown) < 40
    assert f"continue with offset={len(shown)}" in res.content
    assert "output size limit" in res.content
    raw_lines = res.raw_content.splitlines()
    assert len(raw_lines) == 2000  # every requested line kept locally
    assert raw_lines[-1] == f"  2000\t{line}"
