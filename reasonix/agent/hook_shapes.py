"""Tool payloads of hook events in Claude Code's shapes (issue 35, Deliver 7).

A hook script written for Claude Code reads ``tool_input.file_path`` as an
absolute path and ``tool_response`` as the object Claude's tool returned:

- Read: ``{"type": "text", "file": {"filePath", "content", "numLines",
  "startLine", "totalLines"}}``;
- Bash: ``{"stdout", "stderr", "interrupted", "isImage"}`` (our bash tool merges
  the two streams, so everything is in ``stdout`` and ``stderr`` is "");
- Edit: ``{"filePath", "oldString", "newString", "originalFile",
  "structuredPatch", "userModified", "replaceAll"}``;
- Write: ``{"type": "create"|"update", "filePath", "content",
  "structuredPatch", "originalFile"}``;
- MultiEdit: ``{"filePath", "edits", "originalFileContents", "structuredPatch"}``.

The shapes follow the hooks reference (code.claude.com/docs/en/hooks, "PostToolUse
input") and the tool output types of Claude's Agent SDK. Other tools keep
``{"content", "is_error"}``. A PreToolUse ``updatedInput`` arrives in Claude's
names too; :func:`merge_updated_input` maps it back onto our arguments.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.tool import ToolResult

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "merge_updated_input",
    "original_text",
    "tool_input",
    "tool_response",
]

# Claude's argument name for our path argument, per tool (ours -> theirs).
_PATH_ARG = {
    "read_file": "file_path", "edit_file": "file_path", "write_file": "file_path",
    "multi_edit": "file_path", "notebook_edit": "notebook_path", "move_file": "file_path",
}  # fmt: skip
_OUR_PATH = {"move_file": "source_path"}  # where the path argument is not called "path"
# Tools whose own ``path`` is Claude's ``path`` too (Grep, Glob, LS): made absolute.
_SAME_PATH = frozenset({"grep", "glob", "ls"})
_WRITERS = frozenset({"edit_file", "write_file", "multi_edit"})
_SNAPSHOT_LIMIT = 2 * 1024 * 1024  # a larger file is not copied for originalFile
_READ_LIMIT = 2000  # lines read_file (and Claude's Read) returns without a limit


def _absolute(value: Any, base: str) -> Any:
    if not isinstance(value, str) or not value:
        return value
    return os.path.normpath(os.path.join(base, os.path.expanduser(value)))


def tool_input(tool_name: str, args: dict[str, Any], base: str = "") -> dict[str, Any]:
    """The tool arguments as a hook sees them: ours, plus Claude's names with absolute paths.

    ``base`` is the directory relative paths are taken against (the tool's cwd);
    without it paths stay as the model wrote them.
    """
    out = dict(args)
    ours = _OUR_PATH.get(tool_name, "path")
    theirs = _PATH_ARG.get(tool_name)
    if theirs and ours in args and theirs not in args:
        out[theirs] = _absolute(args[ours], base) if base else args[ours]
    if tool_name in _SAME_PATH and base and isinstance(args.get("path"), str):
        out["path"] = _absolute(args["path"], base)
    return out


def merge_updated_input(
    tool_name: str, args: dict[str, Any], sent: dict[str, Any], updated: dict[str, Any],
    known: set[str],
) -> dict[str, Any]:  # fmt: skip
    """Our arguments after a hook's ``updatedInput``.

    Only what the hook changed counts (a hook may echo back the whole input it
    got, or send just the field it rewrote); Claude's names map back to ours,
    and keys the tool does not take are dropped.
    """
    out = dict(args)
    theirs = _PATH_ARG.get(tool_name)
    ours = _OUR_PATH.get(tool_name, "path")
    for key, value in updated.items():
        if key in sent and sent[key] == value:
            continue  # echoed unchanged
        if key == theirs and ours in known:
            out[ours] = value
        elif key in known:
            out[key] = value
    return out


def original_text(tool_name: str, args: dict[str, Any], base: str) -> str | None:
    """The file a writer is about to change, for ``originalFile`` (None: new or unreadable)."""
    if tool_name not in _WRITERS or not isinstance(args.get("path"), str):
        return None
    path = Path(_absolute(args["path"], base))
    try:
        if not path.is_file() or path.stat().st_size > _SNAPSHOT_LIMIT:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _patch(old: str, new: str) -> list[dict[str, Any]]:
    """A unified diff of two texts as Claude's ``structuredPatch`` hunks."""
    hunks: list[dict[str, Any]] = []
    a, b = old.splitlines(), new.splitlines()
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[x1:x2]]
                continue
            lines += ["-" + line for line in a[x1:x2]]
            lines += ["+" + line for line in b[y1:y2]]
        hunks.append(
            {"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1, "newLines": j2 - j1,
             "lines": lines}
        )  # fmt: skip
    return hunks


# The line our bash tool ends its output with (exit code, timeout, cancel, signal).
_TRAILER = re.compile(
    r"\n\[(?:exit code -?\d+|timed out after [^\]]*|cancelled;[^\]]*|killed by signal [^\]]*)\]"
)


def _split_trailer(text: str) -> tuple[str, str]:
    """Bash output without our trailer (what the command printed), and the trailer."""
    # the last one: a command may print such a line itself
    found = next(reversed(list(_TRAILER.finditer("\n" + text))), None)
    if found is None:
        return text, ""
    start = found.start()  # in "\n" + text: the newline before the trailer ends the output
    body = text[:start]
    body = "" if body == "(no output)\n" else body
    return body, text[start:].lstrip("\n")


def _read_now(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(_SNAPSHOT_LIMIT)
    except OSError:
        return ""


def tool_response(
    tool_name: str, args: dict[str, Any], result: ToolResult, before: str | None, base: str
) -> dict[str, Any]:
    """``tool_response`` of a successful call, in Claude's shape for the tools it has."""
    path = _absolute(args.get("path"), base) if isinstance(args.get("path"), str) else ""
    if tool_name == "read_file" and path:
        return _read_response(path, args)
    if tool_name == "bash":
        stdout, trailer = _split_trailer(result.raw_content or result.content)
        interrupted = trailer.startswith(("[timed out", "[cancelled"))
        return {"stdout": stdout, "stderr": "", "interrupted": interrupted, "isImage": False}
    if tool_name == "edit_file" and path:
        original = before or ""
        return {
            "filePath": path, "oldString": args.get("old_string", ""),
            "newString": args.get("new_string", ""), "originalFile": original,
            "structuredPatch": _patch(original, _read_now(path)), "userModified": False,
            "replaceAll": bool(args.get("replace_all")),
        }  # fmt: skip
    if tool_name == "write_file" and path:
        content = str(args.get("content", ""))
        return {
            "type": "create" if before is None else "update", "filePath": path,
            "content": content, "structuredPatch": _patch(before or "", content),
            "originalFile": before,
        }  # fmt: skip
    if tool_name == "multi_edit" and path:
        return {
            "filePath": path, "edits": args.get("edits", []),
            "originalFileContents": before or "",
            "structuredPatch": _patch(before or "", _read_now(path)),
        }  # fmt: skip
    return {"content": result.content, "is_error": result.is_error}


def _read_response(path: str, args: dict[str, Any]) -> dict[str, Any]:
    """Read's answer: the page's own text (no line numbers), where it starts, how long."""
    text = _read_now(path)
    lines = text.splitlines(keepends=True)
    given_offset, given_limit = args.get("offset"), args.get("limit")
    offset = given_offset if isinstance(given_offset, int) else 0
    limit = given_limit if isinstance(given_limit, int) else _READ_LIMIT
    page = lines[offset : offset + max(0, limit)]
    return {
        "type": "text",
        "file": {
            "filePath": path, "content": "".join(page), "numLines": len(page),
            "startLine": offset + 1, "totalLines": len(lines),
        },
    }  # fmt: skip
