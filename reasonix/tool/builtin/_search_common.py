"""Helpers shared by the walking tools (ls, glob, grep, code_index)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from reasonix.errors import ToolError
from reasonix.tool import ToolContext
from reasonix.tool.paths import base_dir, forbidden_roots, resolve_read

__all__ = [
    "FILE_TYPES",
    "HEAVY_DIRS",
    "Displayer",
    "forbidden_filter",
    "path_filter",
    "resolve_existing",
]

# Directories no listing tool should descend into: VCS data, dependency and
# cache trees. They are huge and never what the model is looking for.
HEAVY_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".idea",
        ".vscode",
        ".DS_Store",
    }
)

# grep ``type`` names -> file globs (a small subset of ripgrep's table).
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm"),
    "java": ("*.java",),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "json": ("*.json", "*.jsonl"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "php": ("*.php",),
    "py": ("*.py", "*.pyi"),
    "rb": ("*.rb", "*.rake", "Gemfile", "Rakefile"),
    "rust": ("*.rs",),
    "scala": ("*.scala", "*.sc"),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "sql": ("*.sql",),
    "swift": ("*.swift",),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "xml": ("*.xml",),
    "yaml": ("*.yaml", "*.yml"),
}
FILE_TYPES["python"] = FILE_TYPES["py"]
FILE_TYPES["javascript"] = FILE_TYPES["js"]
FILE_TYPES["typescript"] = FILE_TYPES["ts"]
FILE_TYPES["rs"] = FILE_TYPES["rust"]
FILE_TYPES["markdown"] = FILE_TYPES["md"]


def resolve_existing(ctx: ToolContext, path: str) -> Path:
    """The real path for a read-only tool's ``path`` argument; it must exist."""
    real = resolve_read(ctx, path)
    if not real.exists():
        raise ToolError(f"path {path!r} does not exist (resolved to {real})")
    return real


def _glob_regex(globs: list[str]) -> re.Pattern[str]:
    # Not at import: the tools that only need the other helpers skip _gitignore.
    from reasonix.tool.builtin._gitignore import expand_braces, glob_to_regex

    alts = []
    for g in globs:
        for one in expand_braces(g):
            body = one.lstrip("/") if "/" in one.rstrip("/") else "**/" + one
            alts.append(glob_to_regex(body))
    return re.compile("(?:" + "|".join(alts) + ")", re.DOTALL)


def path_filter(glob: str | None, file_type: str | None) -> Callable[[str], bool] | None:
    """A predicate over ``/``-separated paths relative to the search root.

    ``glob``: whitespace- or comma-separated globs (braces expand); a glob
    without ``/`` matches the file name at any depth; ``!glob`` excludes.
    ``file_type``: a key of :data:`FILE_TYPES`. None when nothing filters.
    """
    include: list[str] = []
    exclude: list[str] = []
    for item in _split_globs(glob or ""):
        (exclude if item.startswith("!") else include).append(item.lstrip("!"))
    type_rx = None
    if file_type:
        key = file_type.strip().lower().lstrip(".")
        if key not in FILE_TYPES:
            known = ", ".join(sorted(FILE_TYPES))
            raise ToolError(f"unknown file type {file_type!r}; known types: {known}")
        type_rx = _glob_regex(list(FILE_TYPES[key]))
    inc_rx = _glob_regex(include) if include else None
    exc_rx = _glob_regex(exclude) if exclude else None
    if not (inc_rx or exc_rx or type_rx):
        return None

    def keep(rel: str) -> bool:
        if exc_rx is not None and exc_rx.fullmatch(rel):
            return False
        if inc_rx is not None and not inc_rx.fullmatch(rel):
            return False
        return type_rx is None or type_rx.fullmatch(rel) is not None

    return keep


def _split_globs(text: str) -> list[str]:
    items: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if cur:
                items.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if cur:
        items.append("".join(cur))
    return items


def forbidden_filter(ctx: ToolContext) -> Callable[[str], bool] | None:
    """A fast predicate for real absolute paths under a ``forbid_read`` entry.

    Walkers never follow symlinks and start from a real path, so every path
    they produce is real and a prefix test is exact.
    """
    roots = [str(r) for r in forbidden_roots(ctx)]
    if not roots:
        return None
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    exact = frozenset(roots)

    def hidden(path: str) -> bool:
        return path in exact or path.startswith(prefixes)

    return hidden


class Displayer:
    """Turns real absolute paths into what the model sees: relative to the base
    directory when below it, else absolute."""

    def __init__(self, ctx: ToolContext) -> None:
        base = os.path.realpath(base_dir(ctx))
        self._prefix = base.rstrip("/") + "/"
        self._base = base

    def __call__(self, path: str) -> str:
        if path.startswith(self._prefix):
            return path[len(self._prefix) :]
        if path == self._base:
            return "."
        return path
