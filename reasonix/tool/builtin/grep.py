"""The ``grep`` tool (TOOL-16): regex search over a file or a directory tree.

ripgrep runs the search when it is on PATH, otherwise a pure-Python engine
does; both go through one formatter, so the output is the same either way
(see :mod:`._grep_engine`). ``ctx.extra["grep_engine"]`` = ``"rg"`` |
``"python"`` | ``"auto"`` (default) picks one explicitly (tests, bench).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._regular import open_regular
from reasonix.tool.builtin._search_common import (
    FILE_TYPES,
    Displayer,
    forbidden_filter,
    path_filter,
    resolve_existing,
)
from reasonix.which import which

if TYPE_CHECKING:
    from typing import Any

    from reasonix.tool.builtin._grep_engine import FileHits, GrepQuery

__all__ = ["MAX_MATCHES", "TOOL", "grep"]

MAX_MATCHES = 200  # TOOL-16
DEFAULT_TIMEOUT = 30.0  # a pathological walk must not hang the turn
MAX_TIMEOUT = 300.0

DESCRIPTION = (
    "Search file contents for a regular expression in a file, or recursively under a "
    "directory. Skips hidden files, binary files and files matched by .gitignore. Returns "
    "matching lines as path:line:text (context lines as path-line-text), sorted by path, "
    f"capped at {MAX_MATCHES} matches. Prefer this over running grep/rg/findstr through bash: "
    "it is faster, respects the workspace's read rules and behaves the same on every OS. "
    "Narrow large searches with `glob` or `type`; use output_mode=files_with_matches to find "
    "which files mention something, or count to size the result first."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Regular expression (Python re / ripgrep syntax; a match never "
            "spans lines). Escape literal ( [ { . * + ? with a backslash.",
        },
        "path": {
            "type": "string",
            "description": 'File or directory to search (default ".")',
            "default": ".",
        },
        "glob": {
            "type": "string",
            "description": 'Only search files matching this glob, e.g. "*.py", "src/**/*.ts", '
            '"*.{ts,tsx}"; several separated by commas; "!glob" excludes.',
        },
        "type": {
            "type": "string",
            "description": "Only search files of this type: " + ", ".join(sorted(FILE_TYPES)),
        },
        "ignore_case": {
            "type": "boolean",
            "description": "Case-insensitive match (default false)",
            "default": False,
        },
        "context": {
            "type": "integer",
            "minimum": 0,
            "description": "Lines of context before and after each match (content mode)",
        },
        "before_context": {
            "type": "integer",
            "minimum": 0,
            "description": "Lines of context before each match (overrides context)",
        },
        "after_context": {
            "type": "integer",
            "minimum": 0,
            "description": "Lines of context after each match (overrides context)",
        },
        "output_mode": {
            "type": "string",
            "enum": ["content", "files_with_matches", "count"],
            "description": "content (default): matching lines; files_with_matches: paths "
            "only; count: path:number of matching lines",
            "default": "content",
        },
        "timeout_seconds": {
            "type": "integer",
            "minimum": 1,
            "description": "Give up after this many seconds (default 30, max 300)",
        },
    },
    "required": ["pattern"],
}


def _context(args: dict[str, Any], key: str) -> int:
    value = args.get(key)
    if value is None:
        value = args.get("context") or 0
    if value < 0:
        raise ToolError(f"argument {key!r} must be >= 0")
    return int(min(value, 50))


def grep(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run one grep call (the tool function)."""
    # The engines (and _gitignore) load on the first search, not at registration.
    from reasonix.tool.builtin._grep_engine import GrepQuery, format_hits

    pattern: str = args["pattern"]
    if not pattern:
        raise ToolError("pattern must not be empty")
    root = resolve_existing(ctx, args.get("path") or ".")
    display = Displayer(ctx)
    if not root.is_dir() and not root.is_file():
        # A FIFO, socket or device (/dev/zero): reading it could block or never end.
        return ToolResult(f"({display(str(root))} is not a regular file; not searched)")
    if root.is_file() and _is_binary(str(root)):
        return ToolResult(f"({display(str(root))} is a binary file; not searched)")
    q = GrepQuery(
        pattern=pattern,
        root=str(root),
        ignore_case=bool(args.get("ignore_case")),
        before=_context(args, "before_context"),
        after=_context(args, "after_context"),
        mode=args.get("output_mode") or "content",
        include=path_filter(args.get("glob"), args.get("type")),
        forbidden=forbidden_filter(ctx),
    )
    timeout = float(args.get("timeout_seconds") or DEFAULT_TIMEOUT)
    cancel = ctx.cancel.child(timeout=min(timeout, MAX_TIMEOUT))
    try:
        hits, engine = _search(q, ctx, cancel)
    except Cancelled:
        if ctx.cancel.cancelled:
            raise
        raise ToolError(
            f"search timed out after {timeout:g} s; narrow the path, pattern, glob or type, "
            "or raise timeout_seconds"
        ) from None
    text, more = format_hits(hits, q, display, MAX_MATCHES)
    meta = {"engine": engine, "files": len(hits)}
    if not text:
        return ToolResult("(no matches)", metadata=meta)
    if more:
        unit = "matches" if q.mode == "content" else "files"
        text += f"\n[{more} more {unit} not shown; narrow the pattern, path, glob or type]"
    return ToolResult(text, metadata=meta)


def _search(q: GrepQuery, ctx: ToolContext, cancel: Cancel) -> tuple[list[FileHits], str]:
    choice = str(ctx.extra.get("grep_engine", "auto"))
    from reasonix.tool.builtin._grep_engine import search_python
    from reasonix.tool.builtin._grep_rg import search_rg

    rg = which("rg") if choice in ("auto", "rg") else None
    if choice == "rg" and rg is None:
        raise ToolError("grep_engine 'rg' requested but ripgrep (rg) is not on PATH")
    if rg is not None:
        hits = search_rg(rg, q, cancel, MAX_MATCHES)
        if hits is not None:
            return hits, "rg"
    return search_python(q, cancel, MAX_MATCHES), "python"


def _is_binary(path: str) -> bool:
    """True when the file holds a NUL byte anywhere (UTF-16 text with a BOM excepted)."""
    try:
        with open_regular(path) as fh:
            chunk = fh.read(1 << 20)
            if chunk.startswith((b"\xff\xfe", b"\xfe\xff")):
                return False
            while chunk:
                if b"\0" in chunk:
                    return True
                chunk = fh.read(1 << 20)
    except OSError:
        return False
    return False


TOOL = FunctionTool(name="grep", description=DESCRIPTION, schema=SCHEMA, fn=grep, read_only=True)
register_builtin(TOOL)
