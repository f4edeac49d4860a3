"""read_file: page through a text file with cat -n style line numbers (TOOL-9)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import CONTENT_LIMIT_BYTES, ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._files import (
    SNIFF_BYTES,
    binary_kind,
    check_regular_file,
    detect_encoding,
    read_text_via,
    split_lines,
)
from reasonix.tool.builtin._regular import NotRegularFile, open_regular
from reasonix.tool.paths import display_path, resolve_read

if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = ["DEFAULT_LIMIT", "MAX_LINE_CHARS", "TOOL"]

DEFAULT_LIMIT = 2000  # lines per page (TOOL-9)
MAX_LINE_CHARS = 2000  # minified JS and data blobs would otherwise eat the page
# What the model sees of one page: under the 32 KiB clip so the trailer with
# the paging hint is never cut away; the full page stays in raw_content.
_PAGE_BUDGET = CONTENT_LIMIT_BYTES - 1024

DESCRIPTION = (
    "Read a text file. Output prefixes each line with its 1-based line number (cat -n "
    "style) so edit_file calls can target exact lines. Use `offset` (0-based line to "
    "start at) and `limit` (lines, default 2000) to page through large files; a trailer "
    "reports the total line count and the offset to continue from. Lines longer than 2000 "
    "characters are cut. Binary files (images, PDFs, archives, executables) are refused "
    "with a note saying what they are. Prefer this over cat/head/tail in bash."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to read, relative to the working directory or absolute.",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "0-based line to start at (default 0).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_LIMIT,
            "description": f"Maximum number of lines to return (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["path"],
}


def _lines(path: Path, encoding: str) -> Iterator[str]:
    # newline="" keeps \r\n so we strip exactly one line ending per line.
    with io.TextIOWrapper(open_regular(path), encoding, "replace", newline="") as fh:
        for line in fh:
            yield line.rstrip("\r\n")


def _open(real: Path, shown: str) -> BinaryIO:
    try:
        return open_regular(real)  # checked on the descriptor: no swap after the stat
    except NotRegularFile:
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)") from None


def _render(number: int, line: str) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line)} characters]"
    return f"{number:>6}\t{line}"


def _read(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    real = resolve_read(ctx, args["path"])
    shown = display_path(ctx, real)
    offset, limit = args["offset"], args["limit"]
    if offset < 0 or limit < 1:
        raise ToolError("offset must be >= 0 and limit >= 1")
    if ctx.ports.file_io is not None:  # the editor's buffer, unsaved edits included
        text = read_text_via(ctx, real, shown)
        return _page(ctx, shown, (ln.rstrip("\r\n") for ln in split_lines(text)), offset, limit)
    size = check_regular_file(real, shown).st_size
    with _open(real, shown) as fh:
        head = fh.read(SNIFF_BYTES)
    kind = binary_kind(head)
    if kind is not None:
        raise ToolError(
            f"{shown} is a binary file ({kind}, {size} bytes); read_file shows text only. "
            "Inspect it with bash (e.g. `file`, `xxd | head`) if you need to."
        )
    # Decided on the first 8 KiB; later invalid bytes show as U+FFFD.
    return _page(ctx, shown, _lines(real, detect_encoding(head)), offset, limit)


def _page(
    ctx: ToolContext, shown: str, lines: Iterable[str], offset: int, limit: int
) -> ToolResult:
    page: list[str] = []
    total = 0
    for total, line in enumerate(lines, start=1):
        if total % 65536 == 0:
            ctx.cancel.raise_if_cancelled()
        if offset < total <= offset + limit:
            page.append(_render(total, line))
    return _result(shown, page, offset, total)


def _result(shown: str, page: list[str], offset: int, total: int) -> ToolResult:
    if total == 0:
        return ToolResult(content=f"(empty file: {shown})")
    if offset >= total:
        raise ToolError(f"offset {offset} is past the end of {shown} ({total} lines)")
    full_end = offset + len(page)
    raw = "\n".join(page) + _trailer(offset, full_end, total)
    # Fit the model-visible page under the budget by dropping whole lines.
    used = 0
    shown_lines = 0
    for line in page:
        size = len(line.encode("utf-8")) + 1
        if used + size > _PAGE_BUDGET and shown_lines:
            break
        used += size
        shown_lines += 1
    if shown_lines == len(page):
        return ToolResult(content=raw)
    end = offset + shown_lines
    content = "\n".join(page[:shown_lines]) + _trailer(offset, end, total, budget=True)
    return ToolResult(content=content, raw_content=raw)


def _trailer(offset: int, end: int, total: int, budget: bool = False) -> str:
    if end >= total:
        return f"\n[end of file: {total} lines]" if offset else ""
    why = " (output size limit)" if budget else ""
    return f"\n[showing lines {offset + 1}-{end} of {total}{why}; continue with offset={end}]"


TOOL = FunctionTool("read_file", DESCRIPTION, SCHEMA, _read, read_only=True)
register_builtin(TOOL)
