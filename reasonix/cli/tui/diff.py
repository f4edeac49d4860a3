"""The change an edit call is about to make, as a unified diff, computed locally.

The approval overlay and the tool card show it before the user answers: the
call's arguments (``edit_file``, ``multi_edit``, ``write_file``,
``delete_range``, and the ``Edit``/``MultiEdit``/``Write`` spellings with
``file_path``) are applied in memory to the file as it is now, and
:mod:`difflib` compares the two. Nothing is written. When the file cannot be
read or the text to replace is not in it (the edit will fail, or already
ran), the diff falls back to the call's own old and new strings.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .width import Line, wrap_spans

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["EDIT_TOOLS", "call_diff", "diff_rows", "diff_stats", "proposed_diff"]

EDIT_TOOLS = frozenset(
    {"edit_file", "multi_edit", "write_file", "delete_range", "Edit", "MultiEdit", "Write"}
)
MAX_FILE_BYTES = 2_000_000  # bigger files are not read for a preview
MAX_DIFF_LINES = 2000
_CONTEXT = 3


def _path_of(args: dict[str, Any]) -> str:
    value = args.get("path", args.get("file_path", ""))
    return value if isinstance(value, str) else ""


def _read(path: Path) -> str | None:
    """The file's text with LF newlines, "" when it does not exist, None when unreadable."""
    from reasonix.config.safe_read import read_bytes
    from reasonix.errors import ReasonixError

    try:  # a FIFO, device or huge file is refused without blocking (config/safe_read)
        data = read_bytes(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return ""
    except (OSError, ReasonixError):
        return None
    if b"\x00" in data[:8192]:
        return None  # binary: no text preview
    for codec in ("utf-8-sig", "latin-1"):
        try:
            return data.decode(codec).replace("\r\n", "\n")
        except UnicodeDecodeError:
            continue
    return None


def _lf(value: Any) -> str:
    return value.replace("\r\n", "\n") if isinstance(value, str) else ""


def _replace(text: str, old: str, new: str, every: bool) -> str | None:
    if not old or old not in text:
        return None
    return text.replace(old, new) if every else text.replace(old, new, 1)


def _edits(tool: str, args: dict[str, Any]) -> list[tuple[str, str, bool]]:
    if tool in ("edit_file", "Edit"):
        return [
            (
                _lf(args.get("old_string")),
                _lf(args.get("new_string")),
                bool(args.get("replace_all")),
            )
        ]
    raw = args.get("edits")
    out: list[tuple[str, str, bool]] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            out.append(
                (
                    _lf(item.get("old_string")),
                    _lf(item.get("new_string")),
                    bool(item.get("replace_all")),
                )
            )
    return out


def _apply_edits(text: str, edits: list[tuple[str, str, bool]]) -> str | None:
    for old, new, every in edits:
        got = _replace(text, old, new, every)
        if got is None:
            return None
        text = got
    return text


def _undo_edits(text: str, edits: list[tuple[str, str, bool]]) -> str | None:
    """The text before ``edits`` when they already ran (the tool can win the race to the file)."""
    for old, new, every in reversed(edits):
        got = _replace(text, new, old, every)
        if got is None:
            return None
        text = got
    return text


def _delete_range(text: str, args: dict[str, Any]) -> str | None:
    lines = text.split("\n")
    want = [_lf(args.get(k)).strip() for k in ("start_anchor", "end_anchor")]
    hits = [[i for i, line in enumerate(lines) if line.strip() == w] for w in want]
    if not all(want) or any(len(h) != 1 for h in hits):
        return None
    start, end = hits[0][0], hits[1][0]
    if args.get("inclusive", True) is False:
        start, end = start + 1, end - 1
    if start > end:
        return None
    return "\n".join(lines[:start] + lines[end + 1 :])


def _unified(old: str, new: str, name: str) -> list[str]:
    import difflib  # only when there is an edit to show

    lines = list(
        difflib.unified_diff(
            old.splitlines(),
            new.splitlines(),
            f"a/{name}",
            f"b/{name}",
            n=_CONTEXT,
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        more = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"… {more} more diff lines"]
    return lines


def proposed_diff(tool: str, args: dict[str, Any], workspace: Path) -> list[str] | None:
    """Unified diff lines of what the call changes (None: not an edit tool or no path)."""
    if tool not in EDIT_TOOLS:
        return None
    name = _path_of(args)
    if not name:
        return None
    from pathlib import Path

    path = Path(os.path.expanduser(name))
    if not path.is_absolute():
        path = workspace / path
    shown = os.path.relpath(path, workspace) if path.is_relative_to(workspace) else str(path)
    current = _read(path)
    if tool in ("write_file", "Write"):
        return _unified(current or "", _lf(args.get("content")), shown)
    if tool == "delete_range":
        after = _delete_range(current, args) if current else None
        return _unified(current, after, shown) if current and after is not None else []
    edits = _edits(tool, args)
    if current:
        after = _apply_edits(current, edits)
        if after is not None:
            return _unified(current, after, shown)
        before = _undo_edits(current, edits)
        if before is not None:
            return _unified(before, current, shown)
    return _strings_diff(edits, shown)  # the file does not show the edit


def _strings_diff(edits: list[tuple[str, str, bool]], shown: str) -> list[str]:
    out: list[str] = []
    for old, new, _ in edits:
        body = _unified(old, new, shown)
        out.extend(body if not out else body[2:])
    return out


def call_diff(tool: str, args: dict[str, Any]) -> list[str] | None:
    """The diff of a call's own old and new strings, without reading any file (a resumed
    session's edits: the file has changed since). None for tools without such strings."""
    if tool not in ("edit_file", "Edit", "multi_edit", "MultiEdit"):
        return None
    return _strings_diff(_edits(tool, args), _path_of(args) or "file")


def diff_stats(lines: list[str]) -> tuple[int, int]:
    """Lines added and removed by a unified diff."""
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return added, removed


def _style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "text"


def diff_rows(lines: list[str], width: int, indent: int = 2) -> list[Line]:
    """Coloured screen rows for unified diff lines (already sanitised), hard-wrapped."""
    pad: Line = ((" " * indent, "text"),)
    rows: list[Line] = []
    for line in lines:
        text = line.expandtabs(4)
        rows.extend(wrap_spans(((text, _style(line)),), width, first=pad, rest=pad, words=False))
    return rows
