"""todo_write: the model's running task list, replaced whole on every call.

No file or process effect, hence read-only (it stays usable in plan mode,
where laying out the plan as todos is the point). The list is kept in
``ctx.extra["todos"]`` for the frontends to render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool

if TYPE_CHECKING:
    from typing import Any

__all__ = ["STATUSES", "TOOL", "render_todos"]

STATUSES = ("pending", "in_progress", "completed")
_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}

DESCRIPTION = (
    "Record and update a structured task list for the current work. Send the COMPLETE list "
    "every call; it replaces the previous one. Use it to plan multi-step work and show "
    "progress: keep at most one item in_progress at a time, and mark an item completed as "
    "soon as it is done (don't batch completions). Each item has `content` (imperative, e.g. "
    '"Add the parser"), `status` (pending|in_progress|completed) and an optional stable '
    "`id`. Skip it for trivial single-step tasks."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The complete task list, in order. Replaces any previous list.",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "What to do, imperative."},
                    "status": {
                        "type": "string",
                        "enum": list(STATUSES),
                        "description": "Task state; at most one item may be in_progress.",
                    },
                    "id": {"type": "string", "description": "Optional stable identifier."},
                },
                "required": ["content", "status"],
            },
        },
    },
    "required": ["todos"],
}


def _item(i: int, raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ToolError(f"todo #{i}: must be an object with content and status")
    content, status, ident = raw.get("content"), raw.get("status"), raw.get("id")
    if not isinstance(content, str) or not content.strip():
        raise ToolError(f"todo #{i}: content must be a non-empty string")
    if status not in STATUSES:
        raise ToolError(f"todo #{i}: status must be one of {', '.join(STATUSES)} (got {status!r})")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, (str, int))):
        raise ToolError(f"todo #{i}: id must be a string")
    return {
        "id": str(ident) if ident is not None else "",
        "content": content.strip(),
        "status": status,
    }


def render_todos(todos: list[dict[str, str]]) -> str:
    """The checklist text shown to the model and the user."""
    if not todos:
        return "Todo list cleared."
    counts = {s: sum(1 for t in todos if t["status"] == s) for s in STATUSES}
    head = (
        f"Todos ({len(todos)} total: {counts['completed']} completed, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending)"
    )
    return "\n".join([head, *(f"{_MARK[t['status']]} {t['content']}" for t in todos)])


def _todo_write(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    todos = [_item(i, raw) for i, raw in enumerate(args["todos"], start=1)]
    # Items without an id get their position, skipping ids the model gave others:
    # only ids the model itself repeated are duplicates.
    given = {t["id"] for t in todos if t["id"]}
    for i, t in enumerate(todos, start=1):
        if not t["id"]:
            candidate, n = str(i), 1
            while candidate in given:
                n += 1
                candidate = f"{i}.{n}"
            t["id"] = candidate
            given.add(candidate)
    active = [t["content"] for t in todos if t["status"] == "in_progress"]
    if len(active) > 1:
        raise ToolError(
            f"{len(active)} items are in_progress ({'; '.join(active)}); keep at most one "
            "in_progress and mark the others pending or completed"
        )
    ids = [t["id"] for t in todos]
    dupes = sorted({x for x in ids if ids.count(x) > 1})
    if dupes:
        raise ToolError(f"duplicate todo id(s): {', '.join(dupes)}")
    ctx.extra["todos"] = todos
    return ToolResult(content=render_todos(todos), metadata={"todos": todos})


TOOL = FunctionTool("todo_write", DESCRIPTION, SCHEMA, _todo_write, read_only=True)
register_builtin(TOOL)
