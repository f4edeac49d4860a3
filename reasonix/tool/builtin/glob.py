"""The ``glob`` tool (TOOL-15): find files by name pattern, newest first."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.errors import Cancelled, ToolError
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
    names, lead = _candidates(root, ctx, hidden)
    # The pattern is matched on each name as listed, its common start included: a
    # C-level filter over 100,000 names, and no per-name slicing or joining.
    rx = _compile(rest)
    full = re.compile(re.escape(lead) + "(?:" + rx.pattern + ")", rx.flags)
    base = root if root.endswith("/") else root + "/"
    found: list[tuple[float, str]] = []
    for name in filter(full.fullmatch, names):
        path = base + name[len(lead) :]
        if hidden is not None and hidden(path):
            continue  # the walker prunes forbidden folders; ripgrep's listing is filtered here
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        found.append((mtime, path))
    return found


def _candidates(
    root: str, ctx: ToolContext, hidden: Callable[[str], bool] | None
) -> tuple[list[str], str]:
    """Every file under ``root`` the walk would visit, and the start every name has:
    ripgrep's listing (``./`` + the relative path) when it is installed (a big tree is
    listed several times faster), else our walker's (absolute paths)."""
    from reasonix.which import which

    choice = str(ctx.extra.get("grep_engine", "auto"))  # one switch for both searches
    rg = which("rg") if choice in ("auto", "rg") else None
    if rg is not None:
        listed = _rg_files(rg, root, ctx)
        if listed is not None:
            return listed, "./"
    from reasonix.tool.builtin._walk import walk_files  # on use only (loads _gitignore)

    walk = walk_files(root, ctx.cancel, None, hidden, skip_hidden=False, skip_dirs=HEAVY_DIRS)
    return list(walk), root if root.endswith("/") else root + "/"


# ripgrep pinned to the walker's rules (see _grep_rg): .gitignore without a repo, no
# global or config ignores, hidden files listed, symlinks not followed.
_RG_FILES = ("--files", "--null", "--hidden", "--no-config", "--no-require-git",
             "--no-ignore-global", "--no-ignore-exclude", "--no-messages")  # fmt: skip


def _rg_files(rg: str, root: str, ctx: ToolContext) -> list[str] | None:
    """The files ripgrep lists under ``root`` (as ``./name``), heavy directories left out;
    None when it could not run. (No ``--glob`` of the pattern: ripgrep lets a matching
    glob override the ignore files.)"""
    import subprocess

    env = dict(os.environ)
    env.pop("RIPGREP_CONFIG_PATH", None)
    heavy = "--glob=!{" + ",".join(sorted(HEAVY_DIRS)) + "}/"  # not even entered; one glob
    argv = [rg, *_RG_FILES, heavy, "--", "."]
    try:
        proc = subprocess.Popen(
            argv, cwd=root,  # short names: less to decode
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
    except OSError:
        return None
    unregister = ctx.cancel.on_cancel(proc.kill)
    try:
        out, _ = proc.communicate()
    finally:
        unregister()
    if ctx.cancel.cancelled:
        raise Cancelled(ctx.cancel.reason or "cancelled")
    if proc.returncode not in (0, 1):  # 1: nothing listed
        return None
    names = os.fsdecode(out).split("\0")  # one decode, not one per file
    if names and not names[-1]:
        names.pop()  # after the last NUL
    return names


TOOL = FunctionTool(name="glob", description=DESCRIPTION, schema=SCHEMA, fn=glob, read_only=True)
register_builtin(TOOL)
