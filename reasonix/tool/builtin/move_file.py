"""move_file: move or rename one file inside the write roots (TOOL-12)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._files import WALK_NEEDS_READ, open_real_dir
from reasonix.tool.paths import display_path, resolve_read, resolve_write

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL"]

DESCRIPTION = (
    "Move or rename a single file from source_path to destination_path. Creates the "
    "destination's parent directory as needed; refuses when the destination already exists "
    "and when the source is a directory. Both paths must be inside the writable roots. Use "
    "instead of mv in bash so workspace confinement applies."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source_path": {"type": "string", "description": "The file to move."},
        "destination_path": {
            "type": "string",
            "description": "The new path; it must not exist yet.",
        },
    },
    "required": ["destination_path", "source_path"],
}


def _rename(src: Path, dst: Path) -> None:
    """Rename through descriptors of both (real) parents, so a symlink planted
    after the path checks cannot redirect the move (see open_real_dir)."""
    if not hasattr(os, "O_NOFOLLOW") or os.rename not in os.supports_dir_fd:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
        return
    try:
        src_fd = open_real_dir(src.parent)
    except PermissionError:
        if not WALK_NEEDS_READ:
            raise
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)  # an unreadable parent on a system without O_PATH
        return
    try:
        dst_fd = open_real_dir(dst.parent)
        try:
            os.rename(src.name, dst.name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)


def _move(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    src = resolve_write(ctx, args["source_path"])
    # Moving a forbidden file somewhere readable would launder it past forbid_read.
    resolve_read(ctx, args["source_path"])
    dst = resolve_write(ctx, args["destination_path"])
    src_shown, dst_shown = display_path(ctx, src), display_path(ctx, dst)
    if not src.exists():
        raise ToolError(f"source not found: {src_shown}")
    if src.is_dir():
        raise ToolError(f"source {src_shown} is a directory; move_file moves single files")
    if dst.exists() or os.path.lexists(dst):
        raise ToolError(
            f"destination {dst_shown} already exists; delete it first or pick another name"
        )
    try:
        _rename(src, dst)
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
        shutil.move(str(src), str(dst))  # across file systems: copy, then delete
    return ToolResult(
        content=f"Moved {src_shown} -> {dst_shown}.",
        metadata={"source": str(src), "destination": str(dst)},
    )


TOOL = FunctionTool("move_file", DESCRIPTION, SCHEMA, _move, read_only=False)
register_builtin(TOOL)
