"""The ``glob`` tool (TOOL-15): find files by name pattern, newest first."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.lazy import Pattern
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

__all__ = ["MAX_RESULTS", "TOOL", "glob"]

MAX_RESULTS = 100  # newest first, so the cut drops the least relevant files

DESCRIPTION = (
    'Find files by glob pattern (e.g. "*.py", "src/*/*.go", "**/*.test.ts", "**/*.{ts,tsx}"). '
    "Supports * ? [] {a,b} and the recursive ** pattern; a bare name pattern with no match in "
    "`path` itself is retried at any depth. Returns file paths sorted by modification time, "
    f"newest first, at most {MAX_RESULTS}. Skips .git, node_modules and similar heavy "
    "directories and .gitignored paths. Prefer this over find/ls through bash; use grep to "
    "search file contents."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern (supports ** for recursive matching)",
        },
        "path": {
            "type": "string",
            "description": 'Directory the pattern is relative to (default ".")',
            "default": ".",
        },
    },
    "required": ["pattern"],
}

_MAGIC = Pattern(r"[*?\[{]")


def _split(pattern: str) -> tuple[str, str]:
    """Split into a literal directory prefix and the wildcard rest."""
    parts = pattern.split("/")
    i = 0
    while i < len(parts) - 1 and not _MAGIC.search(parts[i]):
        i += 1
    prefix = "/".join(parts[:i])
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    return prefix, "/".join(parts[i:])


def _compile(rest: str) -> re.Pattern[str]:
    from reasonix.tool.builtin._gitignore import expand_braces, glob_to_regex  # on use only

    alts = [glob_to_regex(g) for g in expand_braces(rest)]
    return re.compile("(?:" + "|".join(alts) + ")", re.DOTALL)


def glob(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Match ``args["pattern"]`` under ``args["path"]`` (the tool function)."""
    pattern: str = args["pattern"].strip()
    if not pattern:
        raise ToolError("pattern must not be empty")
    prefix, rest = _split(pattern)
    base = os.path.join(args.get("path") or ".", prefix) if prefix else args.get("path") or "."
    root = resolve_existing(ctx, base)
    display = Displayer(ctx)
    if not root.is_dir():
        raise ToolError(f"{display(str(root))} is not a directory")
    hidden = forbidden_filter(ctx)
    rest = rest or "*"
    if not _MAGIC.search(rest):
        # A plain path: answer directly, even for an ignored or hidden file.
        target = os.path.join(str(root), rest)
        if os.path.isfile(target) and not (hidden is not None and hidden(target)):
            return ToolResult(display(target))
    found = _match(str(root), rest, ctx, hidden)
    note = ""
    if not found and "/" not in rest and "**" not in rest:
        found = _match(str(root), "**/" + rest, ctx, hidden)
        if found:
            note = f"(no match directly in {display(str(root))}; showing matches at any depth)\n"
    if not found:
        return ToolResult(
            "(no matches; .git, node_modules, similar heavy directories and .gitignored "
            "paths are skipped)"
        )
    found.sort(key=lambda item: (-item[0], item[1]))
    lines = [display(p) for _, p in found[:MAX_RESULTS]]
    text = note + "\n".join(lines)
    if len(found) > MAX_RESULTS:
        text += (
            f"\n[{len(found) - MAX_RESULTS} more files not shown; use a narrower pattern or path]"
        )
    return ToolResult(text)


def _match(
    root: str, rest: str, ctx: ToolContext, hidden: Callable[[str], bool] | None
) -> list[tuple[float, str]]:
    from reasonix.tool.builtin._walk import walk_files  # on use only (loads _gitignore)

    rx = _compile(rest)

    def keep(rel: str) -> bool:
        return rx.fullmatch(rel) is not None

    found: list[tuple[float, str]] = []
    for path in walk_files(root, ctx.cancel, keep, hidden, skip_hidden=False, skip_dirs=HEAVY_DIRS):
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        found.append((mtime, path))
    return found


TOOL = FunctionTool(name="glob", description=DESCRIPTION, schema=SCHEMA, fn=glob, read_only=True)
register_builtin(TOOL)
