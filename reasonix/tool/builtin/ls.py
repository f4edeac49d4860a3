"""The ``ls`` tool (TOOL-14): list a directory, optionally recursively."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.errors import Cancelled
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._search_common import (
    HEAVY_DIRS,
    Displayer,
    forbidden_filter,
    resolve_existing,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_ENTRIES", "TOOL", "ls"]

MAX_ENTRIES = 2000  # a listing beyond this is noise; the model should narrow the path
MAX_DEPTH = 50  # guards against pathological trees

DESCRIPTION = (
    "List the entries of a directory. Directories are shown with a trailing slash; files "
    "show their byte size (name<TAB>size); symlinks as name -> target. Set recursive=true to "
    "list all nested entries depth-first (skips .git, node_modules, __pycache__, .venv and "
    f"similar heavy directories). At most {MAX_ENTRIES} entries. Prefer this over ls/dir/find "
    "through bash; use glob to find files by name pattern."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": 'Directory path (default ".")', "default": "."},
        "recursive": {
            "type": "boolean",
            "description": "When true, recursively list all nested entries (default false)",
            "default": False,
        },
    },
    "required": [],
}


def _line(entry: os.DirEntry[str], rel: str) -> str:
    try:
        if entry.is_symlink():
            return f"{rel} -> {os.readlink(entry.path)}"
        if entry.is_dir():
            return rel + "/"
        return f"{rel}\t{entry.stat().st_size}"
    except OSError:
        return f"{rel}\t?"


def _scan(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def ls(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """List ``args["path"]`` (the tool function)."""
    root = resolve_existing(ctx, args.get("path") or ".")
    hidden = forbidden_filter(ctx)
    if not root.is_dir():
        return ToolResult(f"{Displayer(ctx)(str(root))}\t{root.stat().st_size}")
    lines: list[str] = []
    more = 0
    if not args.get("recursive"):
        for entry in _scan(str(root)):
            if hidden is not None and hidden(entry.path):
                continue
            if len(lines) >= MAX_ENTRIES:
                more += 1
                continue
            lines.append(_line(entry, entry.name))
    else:
        more = _walk(str(root), "", lines, hidden, ctx, 0)
    if not lines:
        return ToolResult("(empty directory)")
    text = "\n".join(lines)
    if more:
        text += f"\n[{more} more entries not shown; list a subdirectory]"
    return ToolResult(text)


def _walk(
    path: str,
    prefix: str,
    lines: list[str],
    hidden: Callable[[str], bool] | None,
    ctx: ToolContext,
    depth: int,
) -> int:
    """Depth-first listing into ``lines``; returns how many entries were left out."""
    if ctx.cancel.cancelled:
        raise Cancelled(ctx.cancel.reason or "cancelled")
    more = 0
    for entry in _scan(path):
        if hidden is not None and hidden(entry.path):
            continue
        if len(lines) >= MAX_ENTRIES:
            more += 1  # counted at this level only; deeper levels are not walked
            continue
        rel = prefix + entry.name
        lines.append(_line(entry, rel))
        try:
            descend = entry.is_dir(follow_symlinks=False)
        except OSError:
            descend = False
        if descend and entry.name not in HEAVY_DIRS and depth < MAX_DEPTH:
            more += _walk(entry.path, rel + "/", lines, hidden, ctx, depth + 1)
    return more


TOOL = FunctionTool(name="ls", description=DESCRIPTION, schema=SCHEMA, fn=ls, read_only=True)
register_builtin(TOOL)
