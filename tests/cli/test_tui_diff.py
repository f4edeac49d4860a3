"""The diff an edit call is about to make, computed from its arguments and the file."""

from __future__ import annotations

from pathlib import Path

from reasonix.cli.tui.diff import call_diff, diff_rows, diff_stats, proposed_diff
from reasonix.cli.tui.width import line_width, plain


def _body(lines: list[str] | None) -> list[str]:
    assert lines is not None
    return [ln for ln in lines if not ln.startswith(("---", "+++", "@@"))]


def test_edit_file_diffs_against_the_file_with_context(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\n")
    args = {"path": "app.py", "old_string": "b = 2", "new_string": "b = 20"}
    lines = proposed_diff("edit_file", args, tmp_path)
    assert lines is not None
    assert lines[:2] == ["--- a/app.py", "+++ b/app.py"]
    assert lines[2].startswith("@@ -1,4 +1,4 @@")
    assert _body(lines) == [" a = 1", "-b = 2", "+b = 20", " c = 3", " d = 4"]
    assert diff_stats(lines) == (1, 1)
    assert (tmp_path / "app.py").read_text() == "a = 1\nb = 2\nc = 3\nd = 4\n"  # untouched


def test_replace_all_and_crlf_files(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"x\r\ny\r\nx\r\n")
    args = {
        "path": str(tmp_path / "w.txt"),
        "old_string": "x",
        "new_string": "z",
        "replace_all": True,
    }
    assert _body(proposed_diff("edit_file", args, tmp_path)) == ["-x", "+z", " y", "-x", "+z"]


def test_multi_edit_applies_in_order(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("one\ntwo\n")
    edits = [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "1\ntwo", "new_string": "1\n2"},
    ]
    lines = proposed_diff("multi_edit", {"path": "m.txt", "edits": edits}, tmp_path)
    assert _body(lines) == ["-one", "-two", "+1", "+2"]


def test_write_file_new_and_existing(tmp_path: Path) -> None:
    lines = proposed_diff("write_file", {"path": "new.txt", "content": "hi\nthere\n"}, tmp_path)
    assert _body(lines) == ["+hi", "+there"]
    (tmp_path / "old.txt").write_text("keep\ndrop\n")
    lines = proposed_diff("write_file", {"path": "old.txt", "content": "keep\nadd\n"}, tmp_path)
    assert _body(lines) == [" keep", "-drop", "+add"]


def test_claude_style_names_with_file_path(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("old\n")
    lines = proposed_diff(
        "Edit", {"file_path": "c.txt", "old_string": "old", "new_string": "new"}, tmp_path
    )
    assert _body(lines) == ["-old", "+new"]


def test_delete_range(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("a\nstart\nb\nend\nc\n")
    args = {"path": "d.txt", "start_anchor": "start", "end_anchor": "end"}
    assert _body(proposed_diff("delete_range", args, tmp_path)) == [
        " a",
        "-start",
        "-b",
        "-end",
        " c",
    ]


def test_an_edit_that_already_ran_is_shown_the_right_way_round(tmp_path: Path) -> None:
    # The tool may write the file before the view reads it (auto mode): undo it in memory.
    (tmp_path / "r.txt").write_text("x\nnew\ny\n")
    args = {"path": "r.txt", "old_string": "old", "new_string": "new"}
    assert _body(proposed_diff("edit_file", args, tmp_path)) == [" x", "-old", "+new", " y"]


def test_missing_text_or_unreadable_file_falls_back_to_the_call_strings(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    args = {"path": "bin.dat", "old_string": "a\nb", "new_string": "a\nc"}
    assert _body(proposed_diff("edit_file", args, tmp_path)) == [" a", "-b", "+c"]
    (tmp_path / "t.txt").write_text("nothing here\n")
    args = {"path": "t.txt", "old_string": "gone", "new_string": "back"}
    assert _body(proposed_diff("edit_file", args, tmp_path)) == ["-gone", "+back"]
    assert _body(call_diff("edit_file", args)) == ["-gone", "+back"]


def test_other_tools_have_no_diff(tmp_path: Path) -> None:
    assert proposed_diff("bash", {"command": "ls"}, tmp_path) is None
    assert proposed_diff("edit_file", {"old_string": "a"}, tmp_path) is None  # no path
    assert call_diff("write_file", {"path": "x", "content": ""}) is None


def test_rows_are_coloured_and_fit() -> None:
    lines = ["--- a/x", "+++ b/x", "@@ -1 +1 @@", "-old line", "+new line", " same"]
    rows = diff_rows(lines, 14)
    styles = [r[-1][1] for r in rows]
    assert styles[:6] == ["meta", "meta", "hunk", "del", "add", "text"]
    assert plain(rows[3]) == "  -old line"
    narrow = diff_rows(lines, 8)
    assert all(line_width(r) <= 8 for r in narrow) and len(narrow) > len(rows)


def test_a_fifo_or_huge_file_is_not_read_for_a_preview(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")  # reading it would block forever
    args = {"path": "pipe", "old_string": "a", "new_string": "b"}
    assert _body(proposed_diff("edit_file", args, tmp_path)) == ["-a", "+b"]
    (tmp_path / "big.txt").write_bytes(b"a\n" * 1_500_000)  # over the preview cap
    args = {"path": "big.txt", "old_string": "a", "new_string": "b"}
    assert _body(proposed_diff("edit_file", args, tmp_path)) == ["-a", "+b"]
