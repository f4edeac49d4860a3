"""delete_range: delete the lines between two unique anchor lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._files import (
    load_text,
    resolve_edit,
    split_lines,
    unified_diff,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL"]

DESCRIPTION = (
    "Delete a contiguous range of lines from a file using exact start/end text anchors. "
    "Each anchor is the exact text of one line (leading/trailing whitespace ignored) and "
    "must match exactly one line of the file. inclusive=true (default) deletes the anchor "
    "lines too; false keeps them and deletes only what lies between. Returns a unified "
    "diff. Use for large deletions; smaller changes should use edit_file."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to edit."},
        "start_anchor": {
            "type": "string",
            "description": "Exact text of the first line of the range (unique in the file).",
        },
        "end_anchor": {
            "type": "string",
            "description": "Exact text of the last line of the range (unique in the file).",
        },
        "inclusive": {
            "type": "boolean",
            "default": True,
            "description": "Delete the anchor lines as well (default true).",
        },
    },
    "required": ["end_anchor", "path", "start_anchor"],
}


def _find(lines: list[str], anchor: str, which: str) -> int:
    """Index of the one line equal to ``anchor`` (whitespace-trimmed)."""
    want = anchor.strip("\r\n").strip()
    if not want or "\n" in want:
        raise ToolError(f"{which} must be the text of a single non-empty line")
    hits = [i for i, line in enumerate(lines) if line.strip() == want]
    if not hits:
        raise ToolError(f"{which} {anchor!r} matches no line; copy a line exactly from read_file")
    if len(hits) > 1:
        where = ", ".join(str(i + 1) for i in hits[:10])
        raise ToolError(
            f"{which} {anchor!r} matches {len(hits)} lines ({where}); pick a line that occurs once"
        )
    return hits[0]


def _delete_range(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    real, shown = resolve_edit(ctx, args["path"])
    tf = load_text(real, shown, ctx)
    lines = split_lines(tf.text)
    bare = [ln.rstrip("\r\n") for ln in lines]
    start = _find(bare, args["start_anchor"], "start_anchor")
    end = _find(bare, args["end_anchor"], "end_anchor")
    if start > end:
        raise ToolError(f"start_anchor (line {start + 1}) comes after end_anchor (line {end + 1})")
    if not args["inclusive"]:
        if end - start < 2:
            raise ToolError("with inclusive=false there are no lines between the anchors")
        start, end = start + 1, end - 1
    new_text = "".join(lines[:start] + lines[end + 1 :])
    tf.save(new_text)
    count = end - start + 1
    return ToolResult(
        content=f"Deleted lines {start + 1}-{end + 1} ({count} lines) from {shown}.\n"
        + unified_diff(tf.text, new_text, shown),
        metadata={"path": str(real), "deleted_lines": count},
    )


TOOL = FunctionTool("delete_range", DESCRIPTION, SCHEMA, _delete_range, read_only=False)
register_builtin(TOOL)
