"""What an edit call would change, computed without writing (approval diffs).

A frontend asking "may edit_file change calc.py?" shows the diff the call
would make. :func:`proposed_change` reads the file the way the tool would (the
run's FileIO port included) and applies the edit in memory. It never writes,
never asks the write-scope gate, and refuses to show anything under
``forbid_read``; any problem gives None and the tool reports it when it runs.

(The leading underscore only keeps it out of the registered tool modules;
frontends such as ``reasonix acp`` import it.)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import ReasonixError
from reasonix.tool import ToolContext
from reasonix.tool.builtin._edit import apply_edit
from reasonix.tool.builtin._files import load_text
from reasonix.tool.paths import display_path, resolve_read
from reasonix.tool.ports import FileChange

if TYPE_CHECKING:
    from typing import Any

__all__ = ["EDIT_PREVIEW_TOOLS", "file_text", "proposed_change"]

EDIT_PREVIEW_TOOLS = ("edit_file", "multi_edit", "write_file")


def proposed_change(name: str, args: dict[str, Any], ctx: ToolContext) -> FileChange | None:
    """The change ``name(args)`` would make, or None (not an edit tool, or it would fail)."""
    if name not in EDIT_PREVIEW_TOOLS or not isinstance(args.get("path"), str):
        return None
    try:
        real = resolve_read(ctx, args["path"])  # forbid_read applies to what a diff shows
        shown = display_path(ctx, real)
        if name == "write_file":
            content = args.get("content")
            if not isinstance(content, str):
                return None
            return FileChange(real, _current(real, shown, ctx), content)
        tf = load_text(real, shown, ctx)
        text = tf.text
        for old, new, every in _edits(name, args):
            text, _ = apply_edit(tf, text, old, new, every)
    except (ReasonixError, OSError, ValueError):
        return None
    return FileChange(real, tf.text, text)


def file_text(path: str | Path, ctx: ToolContext) -> str:
    """A text file as ``read_file`` would see it (confinement, port and text checks).

    For frontends that show or attach a file (an editor's resource link);
    raises PathDenied/ToolError like the tool.
    """
    real = resolve_read(ctx, path)
    return load_text(real, display_path(ctx, real), ctx).text


def _current(real: Path, shown: str, ctx: ToolContext) -> str | None:
    """The text write_file would replace (None: a new file)."""
    if not real.exists() and ctx.ports.file_io is None:
        return None
    try:
        return load_text(real, shown, ctx).text
    except ReasonixError:
        return None


def _edits(name: str, args: dict[str, Any]) -> list[tuple[str, str, bool]]:
    raw = [args] if name == "edit_file" else args.get("edits")
    if not isinstance(raw, list) or not raw:
        raise ValueError("no edits")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError("malformed edit")
        old, new = item.get("old_string"), item.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise ValueError("malformed edit")
        out.append((old, new, bool(item.get("replace_all"))))
    return out
