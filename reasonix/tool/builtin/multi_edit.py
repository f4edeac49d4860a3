"""multi_edit: several exact replacements in one file, all or nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._edit import apply_edit, changed_line_span, line_span, snippet
from reasonix.tool.builtin._files import load_text, resolve_edit

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL"]

DESCRIPTION = (
    "Apply a list of edits to a single file atomically: each edit runs against the result "
    "of the previous one, all in memory, and the file is written only if every edit "
    "succeeds. Each edit has old_string, new_string and optional replace_all, with the same "
    "rules as edit_file. Cheaper and safer than chaining edit_file calls: a failure in step "
    "3 leaves the file untouched instead of half-edited."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to edit."},
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": "Ordered edits; each sees the text left by the previous one.",
            "items": {
                "type": "object",
                "properties": {
                    "old_string": {
                        "type": "string",
                        "description": "Exact text to find; must match once unless replace_all.",
                    },
                    "new_string": {
                        "type": "string",
                        "description": "Replacement text (empty deletes).",
                    },
                    "replace_all": {
                        "type": "boolean",
                        "default": False,
                        "description": "Replace every occurrence.",
                    },
                },
                "required": ["old_string", "new_string"],
            },
        },
    },
    "required": ["edits", "path"],
}


def _step(i: int, item: Any) -> tuple[str, str, bool]:
    """Check one edit object (parse_args only checks the top level)."""
    if not isinstance(item, dict):
        raise ToolError(f"edit #{i}: must be an object with old_string and new_string")
    old, new, every = item.get("old_string"), item.get("new_string"), item.get("replace_all")
    if not isinstance(old, str) or not isinstance(new, str):
        raise ToolError(f"edit #{i}: old_string and new_string must both be strings")
    if every is not None and not isinstance(every, bool):
        raise ToolError(f"edit #{i}: replace_all must be a boolean")
    return old, new, bool(every)


def _multi_edit(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    edits = args["edits"]
    if not edits:
        raise ToolError("edits is empty; give at least one edit")
    steps = [_step(i, item) for i, item in enumerate(edits, start=1)]
    real, shown = resolve_edit(ctx, args["path"])
    tf = load_text(real, shown, ctx)
    text = tf.text
    total = 0
    for i, (old, new, every) in enumerate(steps, start=1):
        try:
            text, count = apply_edit(tf, text, old, new, every)
        except ToolError as err:
            raise ToolError(
                f"edit #{i} of {len(steps)} failed, file left unchanged: {err}"
            ) from err
        total += count
    tf.save(text)
    first, last = changed_line_span(tf.text, text)
    return ToolResult(
        content=(
            f"Edited {shown}: {len(steps)} edits applied ({total} replacements; "
            f"changes span {line_span(first, last)}).\n" + snippet(text, first, last, max_lines=20)
        ),
        metadata={"path": str(real), "replacements": total},
    )


TOOL = FunctionTool("multi_edit", DESCRIPTION, SCHEMA, _multi_edit, read_only=False)
register_builtin(TOOL)
