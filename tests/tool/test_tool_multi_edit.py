"""multi_edit: sequential in-memory edits, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.multi_edit import TOOL


def multi(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def test_edits_apply_in_sequence(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def old():\n    return old_value\n\nold()\n")
    res = multi(
        ctx,
        path="m.py",
        edits=[
            {"old_string": "old", "new_string": "new", "replace_all": True},
            {"old_string": "new_value", "new_string": "42"},  # sees edit 1's result
        ],
    )
    assert not res.is_error, res.content
    assert f.read_text() == "def new():\n    return 42\n\nnew()\n"
    assert "2 edits applied" in res.content and "4 replacements" in res.content


def test_failure_leaves_file_untouched(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "m.txt"
    f.write_text("a\nb\nc\n")
    res = multi(
        ctx,
        path="m.txt",
        edits=[
            {"old_string": "a", "new_string": "A"},
            {"old_string": "b", "new_string": "B"},
            {"old_string": "zzz", "new_string": "Z"},
        ],
    )
    assert res.is_error
    assert "edit #3 of 3 failed" in res.content and "unchanged" in res.content
    assert f.read_text() == "a\nb\nc\n"


def test_ambiguous_step_names_the_step(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("x x\n")
    res = multi(ctx, path="m.txt", edits=[{"old_string": "x", "new_string": "y"}])
    assert res.is_error and "edit #1" in res.content and "matches 2 times" in res.content


@pytest.mark.parametrize(
    "edits",
    [[], [{"old_string": "a"}], ["not an object"], [{"old_string": 1, "new_string": "b"}]],
)
def test_malformed_edits(ctx: ToolContext, tmp_path: Path, edits: list[object]) -> None:
    (tmp_path / "m.txt").write_text("a\n")
    res = multi(ctx, path="m.txt", edits=edits)
    assert res.is_error
    assert (tmp_path / "m.txt").read_text() == "a\n"


def test_crlf_preserved(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"a\r\nb\r\n")
    res = multi(ctx, path="w.txt", edits=[{"old_string": "a\nb", "new_string": "c\nd"}])
    assert not res.is_error
    assert f.read_bytes() == b"c\r\nd\r\n"
