"""delete_symbol: delete a named Python function, class, method or assignment.

Python only, via ``ast``: exact line spans including decorators and the
comment block directly above. Other languages get an error pointing at
delete_range. The result must still parse, or nothing is written.
"""

from __future__ import annotations

import ast
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

_PY_SUFFIXES = (".py", ".pyi", ".pyw")

DESCRIPTION = (
    "Delete a named symbol from a Python source file using AST parsing: a function, class, "
    "method (dotted name, e.g. `MyClass.method`), nested class, or a module/class-level "
    "assignment. Decorators and the comment lines directly above are deleted with it. "
    "Returns a unified diff. For non-Python files, use delete_range with start/end anchors."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Python source file."},
        "name": {
            "type": "string",
            "description": "Symbol name; dotted for members, e.g. `Parser.parse_line`.",
        },
    },
    "required": ["name", "path"],
}

_Def = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _names(node: ast.stmt) -> list[str]:
    if isinstance(node, _Def):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _find(tree: ast.Module, dotted: str) -> tuple[ast.stmt, list[ast.stmt]]:
    """The one statement called ``dotted`` and the body list that holds it."""
    body: list[ast.stmt] = tree.body
    parts = dotted.split(".")
    for depth, part in enumerate(parts):
        hits = [n for n in body if part in _names(n)]
        last = depth == len(parts) - 1
        if not last:
            hits = [n for n in hits if isinstance(n, ast.ClassDef)]
        if not hits:
            scope = ".".join(parts[:depth]) or "module level"
            known = sorted({nm for n in body for nm in _names(n)})[:30]
            raise ToolError(
                f"no symbol {part!r} at {scope}; names there: {', '.join(known) or '(none)'}"
            )
        if len(hits) > 1:
            lines = ", ".join(str(n.lineno) for n in hits)
            raise ToolError(
                f"{'.'.join(parts[: depth + 1])!r} is defined {len(hits)} times (lines {lines}); "
                "use delete_range with anchors to pick one"
            )
        node = hits[0]
        if last:
            if isinstance(node, ast.Assign) and len(_names(node)) > 1:
                raise ToolError(
                    f"{dotted!r} is assigned together with other names on line {node.lineno}; "
                    "edit that line with edit_file instead"
                )
            return node, body
        assert isinstance(node, ast.ClassDef)
        body = node.body
    raise ToolError("empty symbol name")  # unreachable: split() never returns []


def _span(node: ast.stmt, lines: list[str]) -> tuple[int, int]:
    """0-based first and last line to delete for ``node``."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)]) - 1
    last = (node.end_lineno or node.lineno) - 1
    # ast columns count UTF-8 bytes, so compare on encoded lines.
    before = lines[node.lineno - 1].encode("utf-8")[: node.col_offset]
    rest = lines[last].rstrip("\r\n").encode("utf-8")[node.end_col_offset or 0 :].strip()
    if before.strip() or (rest and not rest.startswith(b"#")):
        raise ToolError("the symbol shares a line with other code; use edit_file instead")
    while first > 0 and lines[first - 1].strip().startswith("#"):
        first -= 1
    return first, last


def _delete_symbol(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    real, shown = resolve_edit(ctx, args["path"])
    name = args["name"].strip()
    if not real.name.endswith(_PY_SUFFIXES):
        raise ToolError(
            f"delete_symbol supports Python files only; for {shown} use delete_range with "
            "start/end anchor lines"
        )
    if not name or any(not p.isidentifier() for p in name.split(".")):
        raise ToolError(f"invalid symbol name {name!r}; use e.g. `func` or `Class.method`")
    tf = load_text(real, shown, ctx)
    try:
        tree = ast.parse(tf.text, filename=shown)
    except SyntaxError as err:
        raise ToolError(f"{shown} does not parse (line {err.lineno}: {err.msg})") from err
    node, body = _find(tree, name)
    lines = split_lines(tf.text)
    first, last = _span(node, lines)
    replacement: list[str] = []
    if len(body) == 1 and body is not tree.body:
        # The only statement of a class body: keep the body valid (a module may be empty).
        indent = lines[node.lineno - 1][: node.col_offset]
        replacement = [f"{indent}pass{tf.newline}"]
    after = last + 1
    if first == 0 or not lines[first - 1].strip():
        # Avoid leaving a doubled gap: drop the blank lines that followed the symbol.
        while after < len(lines) and not lines[after].strip():
            after += 1
    new_text = "".join(lines[:first] + replacement + lines[after:])
    try:
        ast.parse(new_text)
    except SyntaxError as err:
        raise ToolError(
            f"deleting {name!r} would leave {shown} unparsable ({err.msg} at line {err.lineno}); "
            "nothing was changed"
        ) from err
    tf.save(new_text)
    return ToolResult(
        content=f"Deleted {name} (lines {first + 1}-{last + 1}) from {shown}.\n"
        + unified_diff(tf.text, new_text, shown),
        metadata={"path": str(real), "symbol": name},
    )


TOOL = FunctionTool("delete_symbol", DESCRIPTION, SCHEMA, _delete_symbol, read_only=False)
register_builtin(TOOL)
