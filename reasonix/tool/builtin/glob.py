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

__all__ = ["MAX_RESULTS", "TOOL", "glob", "literal_needs", "max_depth"]

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
    """(mtime, path) of every listed file under ``root`` that ``rest`` matches."""
    from reasonix.which import which

    base = root if root.endswith("/") else root + "/"
    choice = str(ctx.extra.get("grep_engine", "auto"))  # one switch for both searches
    rg = which("rg") if choice in ("auto", "rg") else None
    found: list[tuple[float, str]] = []
    if rg is not None:
        # ripgrep's listing (``./`` + the relative path; a big tree is listed several
        # times faster), read while it is written: the matching and the stat of each
        # match overlap the walk instead of following it.
        take = _selector(rest, "./", base, hidden, found)
        if _rg_files(rg, root, ctx, max_depth(rest), take):
            return found
        found.clear()  # it could not run or failed part-way: the walker answers alone
    from reasonix.tool.builtin._walk import walk_files  # on use only (loads _gitignore)

    walk = walk_files(
        root, ctx.cancel, None, hidden,
        skip_hidden=False, skip_dirs=HEAVY_DIRS, max_depth=max_depth(rest),
    )  # fmt: skip
    _selector(rest, base, base, hidden, found)(list(walk))
    return found


def _selector(
    rest: str,
    lead: str,
    base: str,
    hidden: Callable[[str], bool] | None,
    found: list[tuple[float, str]],
) -> Callable[[list[str]], None]:
    """A function that adds the (mtime, path) of each listed name ``rest`` matches to
    ``found``; every name starts with ``lead`` (``./`` or ``base``), the file is at
    ``base`` + the rest of its name. Only the matches are stat'ed."""
    rx = _compile(rest)
    # The pattern is matched on each name as listed, its common start included: a
    # C-level filter, and no per-name slicing or joining.
    full = re.compile(re.escape(lead) + "(?:" + rx.pattern + ")", rx.flags).fullmatch
    needs, ends = literal_needs(rest)
    cut = len(lead)

    def take(names: list[str]) -> None:
        # Cheap necessary tests first (a substring, a suffix): on a deep pattern they
        # leave a tenth of the names to the regex.
        for piece in needs:
            names = [n for n in names if piece in n]
        if ends:
            names = [n for n in names if n.endswith(ends)]
        for name in filter(full, names):
            path = base + name[cut:]
            if hidden is not None and hidden(path):
                continue  # the walker prunes forbidden folders; ripgrep's listing is filtered here
            try:
                found.append((os.stat(path).st_mtime, path))
            except OSError:
                continue

    return take


def literal_needs(rest: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What every name a pattern matches must hold, for a test cheaper than its regex:
    substrings (``/seg/`` for each literal middle segment) and the suffixes one of
    which ends it (the literal tail of the last segment). A name is listed as a lead
    ending in ``/`` and the path relative to it. Empty when nothing is certain (a
    ``[...]`` class or a ``\\`` escape may span or change a segment)."""
    from reasonix.tool.builtin._gitignore import expand_braces  # on use only

    common: set[str] | None = None
    ends: list[str] = []
    for alt in expand_braces(rest):
        if "[" in alt or "\\" in alt:
            return (), ()
        *dirs, last = alt.split("/")
        have = {"/" + d + "/" for d in dirs if d and not _MAGIC.search(d)}
        common = have if common is None else common & have
        tail = last[max(last.rfind("*"), last.rfind("?")) + 1 :]
        if tail == last:  # a literal file name: the whole last segment
            tail = "/" + last
        ends.append(tail)
    # one alternative without a tail leaves the suffix test nothing certain to test
    suffixes = tuple(sorted(set(ends))) if all(ends) else ()
    return tuple(sorted(common or ())), suffixes


def max_depth(rest: str) -> int | None:
    """How deep a match of ``rest`` can lie below its root (1: directly in it); None
    when unbounded (``**``) or uncertain (a ``[...]`` class may match ``/``)."""
    from reasonix.tool.builtin._gitignore import expand_braces  # on use only

    if "**" in rest or "[" in rest or "\\" in rest:
        return None
    return max(alt.count("/") + 1 for alt in expand_braces(rest))


# ripgrep pinned to the walker's rules (see _grep_rg): .gitignore without a repo, no
# global or config ignores, hidden files listed, symlinks not followed.
_RG_FILES = ("--files", "--null", "--hidden", "--no-config", "--no-require-git",
             "--no-ignore-global", "--no-ignore-exclude", "--no-messages")  # fmt: skip
_CHUNK = 1 << 18


def _walkers() -> int:
    """ripgrep's walker threads: one core is left to the reader, which matches and stats
    the names as they come (on two cores two walkers spent half again the CPU of one, in
    lock waits, and finished no sooner under load)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def _rg_files(
    rg: str, root: str, ctx: ToolContext, depth: int | None, take: Callable[[list[str]], None]
) -> bool:
    """Pass the files ripgrep lists under ``root`` (as ``./name``; heavy directories and
    anything deeper than ``depth`` not entered) to ``take``, a batch at a time as they
    arrive; False when it could not run or failed. (No ``--glob`` of the pattern:
    ripgrep lets a matching glob override the ignore files.)"""
    import subprocess

    env = dict(os.environ)
    env.pop("RIPGREP_CONFIG_PATH", None)
    # not even entered; one literal glob each (a literal name is a hash lookup for
    # ripgrep's glob set, a "{a,b}" alternation a regex)
    argv = [rg, *_RG_FILES, *(f"--glob=!{name}/" for name in sorted(HEAVY_DIRS))]
    argv.append(f"--threads={_walkers()}")
    if depth is not None:
        argv.append(f"--max-depth={depth}")  # nothing deeper can match: not walked
    argv += ["--", "."]
    try:
        proc = subprocess.Popen(
            argv, cwd=root,  # short names: less to decode
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
    except OSError:
        return False
    out = proc.stdout
    assert out is not None  # stdout=PIPE
    unregister = ctx.cancel.on_cancel(proc.kill)
    try:
        fd = out.fileno()
        tail = b""
        while chunk := os.read(fd, _CHUNK):
            cut = chunk.rfind(b"\0")
            if cut < 0:
                tail += chunk
                continue
            # one decode per batch, not one per file; names are NUL-terminated
            take(os.fsdecode(tail + chunk[:cut]).split("\0"))
            tail = chunk[cut + 1 :]
        if tail:
            take([os.fsdecode(tail)])
    finally:
        unregister()
        out.close()  # on an early exit ripgrep stops at its next write
        proc.wait()
    if ctx.cancel.cancelled:
        raise Cancelled(ctx.cancel.reason or "cancelled")
    return proc.returncode in (0, 1)  # 1: nothing listed


TOOL = FunctionTool(name="glob", description=DESCRIPTION, schema=SCHEMA, fn=glob, read_only=True)
register_builtin(TOOL)
