"""Every writing tool refuses paths that escape the write roots; readers honour forbid_read.

Escapes tried: ``../x``, an absolute path outside, a symlinked directory in the
workspace pointing out, a symlinked file pointing out, a symlinked parent
deeper in the tree, and ``/proc/self/root/...``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reasonix.tool import ToolContext
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin import (
    delete_range,
    delete_symbol,
    edit_file,
    move_file,
    multi_edit,
    notebook_edit,
    read_file,
    write_file,
)

VICTIM = "x = 1\nBEGIN\nEND\n"

ESCAPES = [
    "../outside/victim.py",
    "../outside/brand_new.py",
    "{outside}/victim.py",
    "link_out/victim.py",
    "file_link.py",
    "nested/deeper/link/victim.py",
    "/proc/self/root{outside}/victim.py",
]

ArgsFor = Callable[[str], dict[str, Any]]


def _move_from(path: str) -> dict[str, Any]:
    return {"source_path": path, "destination_path": "moved.py"}


def _move_to(path: str) -> dict[str, Any]:
    return {"source_path": "mine.py", "destination_path": path}


WRITERS: list[tuple[FunctionTool, ArgsFor]] = [
    (write_file.TOOL, lambda p: {"path": p, "content": "pwned"}),
    (edit_file.TOOL, lambda p: {"path": p, "old_string": "x = 1", "new_string": "x = 2"}),
    (multi_edit.TOOL, lambda p: {"path": p, "edits": [{"old_string": "x", "new_string": "y"}]}),
    (move_file.TOOL, _move_from),
    (move_file.TOOL, _move_to),
    (delete_range.TOOL, lambda p: {"path": p, "start_anchor": "BEGIN", "end_anchor": "END"}),
    (delete_symbol.TOOL, lambda p: {"path": p, "name": "x"}),
    (notebook_edit.TOOL, lambda p: {"path": p, "cell_number": 0, "new_source": "x"}),
]


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "victim.py").write_text(VICTIM)
    (ws / "mine.py").write_text(VICTIM)
    (ws / "link_out").symlink_to(outside)
    (ws / "file_link.py").symlink_to(outside / "victim.py")
    (ws / "nested" / "deeper").mkdir(parents=True)
    (ws / "nested" / "deeper" / "link").symlink_to(outside)
    return {"ws": ws, "outside": outside}


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("raw", ESCAPES)
@pytest.mark.parametrize(("tool", "args_for"), WRITERS, ids=lambda v: getattr(v, "name", ""))
def test_writers_refuse_escapes(
    tree: dict[str, Path], tool: FunctionTool, args_for: ArgsFor, raw: str
) -> None:
    ctx = ToolContext(workspace=tree["ws"])
    before = _snapshot(tree["outside"])
    mine = (tree["ws"] / "mine.py").read_text()
    res = tool.execute(json.dumps(args_for(raw.format(outside=tree["outside"]))), ctx)
    assert res.is_error, res.content
    assert "not allowed" in res.content and "outside the writable roots" in res.content
    assert _snapshot(tree["outside"]) == before
    assert (tree["ws"] / "mine.py").read_text() == mine


@pytest.mark.parametrize(("tool", "args_for"), WRITERS, ids=lambda v: getattr(v, "name", ""))
def test_writers_accept_allow_write_roots(
    tree: dict[str, Path], tool: FunctionTool, args_for: ArgsFor
) -> None:
    # With the outside dir granted (allow_write / --add-dir), the refusal is gone;
    # the call may still fail for tool reasons (e.g. not a notebook), never for the path.
    ctx = ToolContext(workspace=tree["ws"], write_roots=[tree["outside"]])
    res = tool.execute(json.dumps(args_for(str(tree["outside"] / "victim.py"))), ctx)
    assert "not allowed" not in res.content


FORBIDDEN_READS = [*ESCAPES, "{outside}"]


@pytest.mark.parametrize("raw", FORBIDDEN_READS)
def test_read_file_honours_forbid_read(tree: dict[str, Path], raw: str) -> None:
    ctx = ToolContext(workspace=tree["ws"], forbid_read=[tree["outside"]])
    res = read_file.TOOL.execute(json.dumps({"path": raw.format(outside=tree["outside"])}), ctx)
    assert res.is_error and "forbid_read" in res.content
    assert "x = 1" not in res.content


# Editors show content back; move_file's source could be moved somewhere readable.
EDITORS = [w for w in WRITERS if w[0] is not write_file.TOOL and w[1] is not _move_to]


@pytest.mark.parametrize(("tool", "args_for"), EDITORS, ids=lambda v: getattr(v, "name", ""))
def test_editors_honour_forbid_read_inside_write_roots(
    tree: dict[str, Path], tool: FunctionTool, args_for: ArgsFor
) -> None:
    # Editors show file content back, so a forbidden file stays closed even when writable.
    ctx = ToolContext(workspace=tree["ws"], forbid_read=[tree["ws"] / "mine.py"])
    res = tool.execute(json.dumps(args_for("mine.py")), ctx)
    assert res.is_error and "forbid_read" in res.content
    assert (tree["ws"] / "mine.py").read_text() == VICTIM


def test_outside_reads_are_allowed_without_forbid_read(tree: dict[str, Path]) -> None:
    ctx = ToolContext(workspace=tree["ws"])
    res = read_file.TOOL.execute(json.dumps({"path": "../outside/victim.py"}), ctx)
    assert not res.is_error and "x = 1" in res.content
