"""edit_file: replace one exact string in a file (TOOL-11)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._edit import apply_edit, changed_line_span, line_span, snippet
from reasonix.tool.builtin._files import load_text, resolve_edit

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL"]

DESCRIPTION = (
    "Replace an exact string in a file with another. old_string must occur exactly once; "
    "add surrounding lines to disambiguate, or set replace_all=true to change every "
    "occurrence (e.g. a rename). Copy old_string from read_file output without the "
    "line-number prefix. The file's encoding and line endings (LF/CRLF) are preserved. "
    "Use for targeted edits instead of rewriting the whole file, and instead of sed in bash; "
    "for several edits to one file use multi_edit."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to edit."},
        "old_string": {
            "type": "string",
            "description": "Exact text to replace (must match exactly once unless replace_all).",
        },
        "new_string": {
            "type": "string",
            "description": "Replacement text (empty string deletes old_string).",
        },
        "replace_all": {
            "type": "boolean",
            "default": False,
            "description": "Replace every occurrence instead of requiring a unique match.",
        },
    },
    "required": ["path", "old_string", "new_string"],
}


def _edit(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    real, shown = resolve_edit(ctx, args["path"])
    tf = load_text(real, shown, ctx)
    new_text, count = apply_edit(
        tf, tf.text, args["old_string"], args["new_string"], bool(args["replace_all"])
    )
    tf.save(new_text)
    first, last = changed_line_span(tf.text, new_text)
    plural = "occurrence" if count == 1 else "occurrences"
    return ToolResult(
        content=(
            f"Edited {shown}: replaced {count} {plural} (now {line_span(first, last)}).\n"
            + snippet(new_text, first, last)
        ),
        metadata={"path": str(real), "replacements": count},
    )


TOOL = FunctionTool("edit_file", DESCRIPTION, SCHEMA, _edit, read_only=False)
register_builtin(TOOL)
