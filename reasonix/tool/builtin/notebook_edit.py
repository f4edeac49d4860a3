"""notebook_edit: replace, insert or delete one cell of a Jupyter notebook.

Editing ``.ipynb`` JSON with edit_file means matching escaped JSON by hand;
this tool works on cells and re-serialises the notebook the way Jupyter does
(one-space indent, trailing newline), keeping every other key as it was.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._files import load_text, resolve_edit

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL"]

DESCRIPTION = (
    "Edit one cell of a Jupyter notebook (.ipynb). Target a cell by 0-based cell_number or "
    'by cell_id. edit_mode: "replace" (default) swaps the cell\'s source (and its type '
    'when cell_type is given); "insert" adds a new cell after cell_number / cell_id (-1 '
    'prepends; omit both to append at the end) and needs cell_type; "delete" removes the '
    "cell. Editing a code cell clears its outputs and execution_count. Prefer this over "
    "edit_file for notebooks: it keeps the JSON valid."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The .ipynb notebook."},
        "cell_number": {
            "type": "integer",
            "description": "0-based index of the target cell; for insert the new cell goes "
            "after it (-1 prepends).",
        },
        "cell_id": {
            "type": "string",
            "description": "Target the cell by its id instead of cell_number.",
        },
        "new_source": {
            "type": "string",
            "description": "The cell's new source text (replace/insert).",
        },
        "cell_type": {
            "type": "string",
            "enum": ["code", "markdown"],
            "description": "Type of the new cell (required for insert; retypes on replace).",
        },
        "edit_mode": {
            "type": "string",
            "enum": ["replace", "insert", "delete"],
            "default": "replace",
            "description": "replace (default), insert or delete.",
        },
    },
    "required": ["path"],
}


def _source_lines(text: str) -> list[str]:
    """Jupyter's line-array form: every line keeps its newline except the last."""
    return text.splitlines(keepends=True)


def _set_type(cell: dict[str, Any], cell_type: str) -> None:
    cell["cell_type"] = cell_type
    if cell_type == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def _index(cells: list[dict[str, Any]], args: dict[str, Any], mode: str) -> int:
    if args.get("cell_id"):
        for i, cell in enumerate(cells):
            if cell.get("id") == args["cell_id"]:
                return i
        ids = ", ".join(str(c.get("id")) for c in cells[:20] if c.get("id"))
        raise ToolError(f"no cell with id {args['cell_id']!r} (ids: {ids or 'none'})")
    number = args.get("cell_number")
    if number is None:
        if len(cells) == 1:
            return 0
        raise ToolError(
            f"give cell_number or cell_id for {mode} (the notebook has {len(cells)} cells)"
        )
    if not 0 <= number < len(cells):
        raise ToolError(f"cell_number {number} is out of range (0-{len(cells) - 1})")
    return int(number)


def _insert_at(cells: list[dict[str, Any]], args: dict[str, Any]) -> int:
    if args.get("cell_id"):
        return _index(cells, args, "insert") + 1
    number = args.get("cell_number")
    if number is None:
        return len(cells)
    if not -1 <= number < len(cells):
        raise ToolError(f"cell_number {number} is out of range for insert (-1 to {len(cells) - 1})")
    return int(number) + 1


def _new_cell(nb: dict[str, Any], cell_type: str, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": []}
    # Cell ids exist from nbformat 4.5 on; add one when the notebook uses them.
    if nb.get("nbformat_minor", 0) >= 5 or any("id" in c for c in nb["cells"]):
        import uuid  # not at import: uuid loads platform and _uuid

        cell["id"] = uuid.uuid4().hex[:8]
    cell["source"] = _source_lines(source)
    _set_type(cell, cell_type)
    return cell


def _apply(nb: dict[str, Any], args: dict[str, Any]) -> str:
    cells: list[dict[str, Any]] = nb["cells"]
    mode = args["edit_mode"]
    if mode == "insert":
        cell_type = args.get("cell_type")
        if not cell_type:
            raise ToolError("cell_type (code or markdown) is required for insert")
        at = _insert_at(cells, args)
        cells.insert(at, _new_cell(nb, cell_type, args.get("new_source", "")))
        return f"Inserted {cell_type} cell at index {at}"
    idx = _index(cells, args, mode)
    if mode == "delete":
        kind = cells.pop(idx).get("cell_type", "?")
        return f"Deleted {kind} cell {idx}"
    if "new_source" not in args:
        raise ToolError("new_source is required for replace")
    cell = cells[idx]
    cell["source"] = _source_lines(args["new_source"])
    cell_type = args.get("cell_type") or cell.get("cell_type", "code")
    _set_type(cell, cell_type)  # clears a code cell's stale outputs
    return f"Replaced {cell_type} cell {idx}"


def _check(nb: Any) -> None:
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ToolError('not a Jupyter notebook: no top-level "cells" list')
    if nb.get("nbformat", 4) != 4:
        raise ToolError(f"nbformat {nb.get('nbformat')} is not supported (only version 4)")
    if not all(isinstance(c, dict) for c in nb["cells"]):
        raise ToolError("not a Jupyter notebook: every cell must be an object")


def _notebook_edit(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    real, shown = resolve_edit(ctx, args["path"])
    tf = load_text(real, shown, ctx)
    try:
        nb = json.loads(tf.text)
    except json.JSONDecodeError as err:
        raise ToolError(f"{shown} is not valid JSON (line {err.lineno}: {err.msg})") from err
    _check(nb)
    summary = _apply(nb, args)
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    tf.save(tf.to_file_newlines(text))
    return ToolResult(
        content=f"{summary} in {shown} ({len(nb['cells'])} cells total).",
        metadata={"path": str(real)},
    )


TOOL = FunctionTool("notebook_edit", DESCRIPTION, SCHEMA, _notebook_edit, read_only=False)
register_builtin(TOOL)
