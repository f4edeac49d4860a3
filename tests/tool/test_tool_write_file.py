"""write_file: creates parents, overwrites, reports which, writes atomically."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix.tool import ToolContext
from reasonix.tool.builtin.write_file import TOOL


def test_creates_parents_and_reports_created(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    res = TOOL.execute(json.dumps({"path": "a/b/c.txt", "content": "hi\nthere\n"}), ctx)
    assert not res.is_error, res.content
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "hi\nthere\n"
    assert res.content.startswith("Created a/b/c.txt (2 lines, 9 bytes)")
    assert res.metadata["created"] is True
    assert TOOL.read_only is False


def test_overwrites_and_reports_it(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    (tmp_path / "f.txt").write_text("old content\n")
    res = TOOL.execute(json.dumps({"path": "f.txt", "content": "new"}), ctx)
    assert res.content.startswith("Overwrote f.txt (1 lines, 3 bytes)")
    assert (tmp_path / "f.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_directory_target_and_missing_args(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    (tmp_path / "d").mkdir()
    res = TOOL.execute(json.dumps({"path": "d", "content": "x"}), ctx)
    assert res.is_error and "directory" in res.content
    assert "missing required" in TOOL.execute(json.dumps({"path": "x"}), ctx).content


def test_unicode_content_is_utf8(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    TOOL.execute(json.dumps({"path": "u.txt", "content": "中文 ✓"}), ctx)
    assert (tmp_path / "u.txt").read_bytes() == "中文 ✓".encode()


def test_os_errors_become_error_results(tmp_path: Path) -> None:
    # Fails for root too (tests run as root, so chmod 000 would not): the parent is a file.
    ctx = ToolContext(workspace=tmp_path)
    (tmp_path / "plain").write_text("x")
    res = TOOL.execute(json.dumps({"path": "plain/child.txt", "content": "y"}), ctx)
    assert res.is_error and res.content.startswith("write_file: ")
    assert (tmp_path / "plain").read_text() == "x"
