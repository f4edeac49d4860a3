"""write_file: create or overwrite a whole file (TOOL-10)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._files import (
    SNIFF_BYTES,
    atomic_write,
    binary_kind,
    read_text_via,
    report_change,
)
from reasonix.tool.paths import display_path, resolve_write

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL"]

DESCRIPTION = (
    "Write content to a file at the given path, replacing any existing content. Creates "
    "parent directories as needed. The content is written verbatim as UTF-8. Use for new "
    "files or complete rewrites; for changes to part of an existing file prefer edit_file "
    "or multi_edit. Prefer this over shell redirection (echo/cat > file) in bash."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to write."},
        "content": {"type": "string", "description": "The complete new file content."},
    },
    "required": ["content", "path"],
}


def _write(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    real = resolve_write(ctx, args["path"])
    shown = display_path(ctx, real)
    if real.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    existed = real.exists()
    try:
        data = args["content"].encode("utf-8")
    except UnicodeEncodeError as err:
        char = err.object[err.start]
        raise ToolError(
            f"content holds {char!r}, a lone surrogate that is no character; nothing was written"
        ) from None
    old = _old_text(ctx, real, shown) if existed and ctx.ports.on_change else None
    if ctx.ports.file_io is not None:
        ctx.ports.file_io.write_text(real, args["content"])
    else:
        atomic_write(real, data)
    report_change(ctx, real, old, args["content"])
    lines = args["content"].count("\n") + (0 if args["content"].endswith("\n") else 1)
    if not args["content"]:
        lines = 0
    verb = "Overwrote" if existed else "Created"
    return ToolResult(
        content=f"{verb} {shown} ({lines} lines, {len(data)} bytes).",
        metadata={"path": str(real), "created": not existed},
    )


def _old_text(ctx: ToolContext, real: Path, shown: str) -> str | None:
    """What the file held before, for the change report (None when it is not text)."""
    if ctx.ports.file_io is not None:
        try:
            return read_text_via(ctx, real, shown)
        except ToolError:
            return None  # not text (or gone): the write itself decides what happens
    try:
        data = real.read_bytes()
    except OSError:
        return None
    if binary_kind(data[:SNIFF_BYTES]) is not None:
        return None
    return data.decode("utf-8", "replace")


TOOL = FunctionTool("write_file", DESCRIPTION, SCHEMA, _write, read_only=False)
register_builtin(TOOL)
