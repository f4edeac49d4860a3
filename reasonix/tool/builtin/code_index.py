"""The ``code_index`` tool: a light symbol outline of source files.

Python is parsed with :mod:`ast` (classes, functions, methods, with
signatures). JS/TS, Go, Rust, Java, C/C++, Ruby and more use line regexes —
good enough for "where is X defined" and a file's shape; the model confirms
with read_file or grep.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from typing import TYPE_CHECKING

from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._regular import open_regular
from reasonix.tool.builtin._search_common import (
    HEAVY_DIRS,
    Displayer,
    forbidden_filter,
    resolve_existing,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL", "code_index", "outline"]

MAX_FILES = 300  # directory mode: files outlined before the listing stops
MAX_FILE_BYTES = 2 * 1024 * 1024  # generated/minified giants are not worth outlining
Symbol = tuple[int, int, str]  # (line, depth, text)

DESCRIPTION = (
    "Outline the symbols of source files: classes, functions and methods with line numbers "
    "(Python with signatures, via its parser; JS/TS, Go, Rust, Java, C/C++, C#, Kotlin, "
    "Swift, PHP and Ruby by pattern). Give a file for its outline or a directory to outline "
    f"every source file under it (up to {MAX_FILES}; .gitignored and hidden paths skipped). "
    "Set query to list only symbols whose name contains it — a quick way to find definition "
    "candidates. Cheaper than reading whole files; verify details with read_file or grep."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": 'Source file or directory (default ".")',
            "default": ".",
        },
        "query": {
            "type": "string",
            "description": "Only symbols whose name contains this text (case-insensitive)",
        },
    },
    "required": [],
}

_I = r"[A-Za-z_$][\w$]*"
_JS: tuple[str, ...] = (
    rf"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+({_I})",
    rf"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*({_I})\s*\(",
    rf"^\s*(?:export\s+)?(?:declare\s+)?(?:interface|enum|namespace)\s+({_I})",
    rf"^\s*(?:export\s+)?type\s+({_I})\s*(?:<[^=]*>)?\s*=",
    (
        rf"^\s*(?:export\s+)?(?:const|let|var)\s+({_I})\s*(?::[^=]+)?=\s*"
        rf"(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|{_I}\s*=>)"
    ),
    (
        rf"^\s+(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*"
        rf"(?!(?:if|for|while|switch|catch|return|function)\b)({_I})\s*(?:<[^>]*>)?\([^;]*\)"
        rf"\s*(?::[^{{;]+)?\{{\s*$"
    ),
)
_GO: tuple[str, ...] = (
    r"^func\s+(?:\([^)]*\)\s*)?(\w+)\s*[\[(]",
    r"^type\s+(\w+)\s+",
)
_RUST: tuple[str, ...] = (
    (
        r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern\s+\"[^\"]*\")\s+)*"
        r"(?:fn|struct|enum|trait|union|mod|type)\s+(\w+)"
    ),
    r"^\s*(impl(?:<[^>]*>)?\s+[^{]+?)\s*(?:where\b.*)?\{?\s*$",
    r"^\s*macro_rules!\s*(\w+)",
)
_JAVA: tuple[str, ...] = (
    (
        r"^\s*(?:(?:public|private|protected|static|final|abstract|sealed|non-sealed|"
        r"partial|internal|data|open|inline)\s+)*(?:class|interface|enum|record|@interface|"
        r"object|struct)\s+(\w+)"
    ),
    (
        r"^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native|"
        r"override|virtual|async|internal|default)\s+)+[\w<>\[\],.? ]+?\s+(\w+)\s*\([^;]*$"
    ),
    (
        r"^\s*(?:(?:public|private|protected|internal|override|open)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)\s*\("
    ),
)
_C: tuple[str, ...] = (
    (r"^(?:template\s*<.*>\s*)?(?:class|struct|union|enum(?:\s+class)?|namespace)\s+(\w+)[^;]*$"),
    (
        r"^(?!\s)(?!(?:if|for|while|switch|return|else|typedef)\b)[\w:<>,*&\s~]+?[\s*&]((?:\w+::)*~?\w+)\s*\([^;]*$"
    ),
    r"^#define\s+(\w+)",
)
_RUBY: tuple[str, ...] = (
    r"^\s*(?:class|module)\s+([\w:]+)",
    r"^\s*def\s+((?:self\.)?[\w?!=\[\]<>+-]+)",
)
_SWIFT: tuple[str, ...] = (
    (
        r"^\s*(?:(?:public|private|fileprivate|internal|open|final|static|class|override|"
        r"mutating|@\w+)\s+)*(?:func|class|struct|enum|protocol|extension|actor)\s+([\w.]+)"
    ),
)
_PHP: tuple[str, ...] = (
    r"^\s*(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(\w+)",
    r"^\s*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+&?(\w+)",
)
_PY_FALLBACK: tuple[str, ...] = (r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)",)

_BY_EXT: dict[str, tuple[str, ...]] = {}
for _exts, _rules in (
    (("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "vue", "svelte"), _JS),
    (("go",), _GO),
    (("rs",), _RUST),
    (("java", "kt", "kts", "scala", "cs"), _JAVA),
    (("c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm"), _C),
    (("rb", "rake"), _RUBY),
    (("swift",), _SWIFT),
    (("php",), _PHP),
):
    for _ext in _exts:
        _BY_EXT[_ext] = _rules
SOURCE_EXTS = frozenset({"py", "pyi", *_BY_EXT})


def _py_symbols(source: str) -> list[Symbol]:
    tree = ast.parse(source)
    out: list[Symbol] = []

    def visit(body: list[ast.stmt], depth: int) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                bases = ", ".join(ast.unparse(b) for b in node.bases)
                out.append(
                    (node.lineno, depth, f"class {node.name}" + (f"({bases})" if bases else ""))
                )
                visit(node.body, depth + 1)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
                sig = f"{kind} {node.name}({ast.unparse(node.args)})"
                if node.returns is not None:
                    sig += f" -> {ast.unparse(node.returns)}"
                out.append((node.lineno, depth, sig))
                if depth == 0:
                    visit(node.body, depth + 1)  # nested helpers of top-level functions
            elif isinstance(node, (ast.If, ast.Try)) and depth == 0:
                visit(node.body, depth)  # `if TYPE_CHECKING:` / try-import blocks

    visit(tree.body, 0)
    return out


@functools.cache
def _compiled(sources: tuple[str, ...]) -> list[re.Pattern[str]]:
    """One language's line patterns, compiled on first use (not at import)."""
    return [re.compile(src) for src in sources]


def _regex_symbols(source: str, sources: tuple[str, ...]) -> list[Symbol]:
    rules = _compiled(sources)
    out: list[Symbol] = []
    indents: list[int] = []  # indentation of the enclosing symbols: depth = nesting level
    for lineno, line in enumerate(source.splitlines(), 1):
        if len(line) > 500:
            continue
        for rx in rules:
            m = rx.match(line)
            if m:
                indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
                while indents and indents[-1] >= indent:
                    indents.pop()
                text = line.strip().rstrip("{").rstrip()
                if len(text) > 160:
                    text = text[:157] + "..."
                out.append((lineno, min(len(indents), 6), text))
                indents.append(indent)
                break
    return out


def outline(path: str) -> list[Symbol] | None:
    """Symbols of the file at ``path``; None when it is not a supported source file."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in os.path.basename(path) else ""
    if ext not in SOURCE_EXTS:
        return None
    try:
        with open_regular(path) as fh:
            if os.fstat(fh.fileno()).st_size > MAX_FILE_BYTES:
                return None
            source = fh.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if "\0" in source:
        return None  # a binary file with a source extension: nothing to outline
    if ext in ("py", "pyi"):
        try:
            return _py_symbols(source)
        except (SyntaxError, ValueError, RecursionError):
            return _regex_symbols(source, _PY_FALLBACK)
    return _regex_symbols(source, _BY_EXT[ext])


def _name_of(text: str) -> str:
    m = re.search(
        r"(?:def|class|fn|func|function|type|struct|enum|interface|trait|module|"
        r"impl|mod|fun|const|let|var)\s+(?:\([^)]*\)\s*)?([\w.:$]+)",
        text,
    )
    if m:
        return m.group(1)
    m = re.search(r"([\w$:~]+)\s*\(", text)
    return m.group(1) if m else text


def code_index(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Outline a file or a directory (the tool function)."""
    root = resolve_existing(ctx, args.get("path") or ".")
    display = Displayer(ctx)
    query = (args.get("query") or "").strip().lower()
    if root.is_file():
        files = [str(root)]
    else:
        from reasonix.tool.builtin._walk import walk_files  # on use only (loads _gitignore)

        files = list(
            walk_files(
                str(root),
                ctx.cancel,
                lambda rel: rel.rsplit(".", 1)[-1].lower() in SOURCE_EXTS,
                forbidden_filter(ctx),
                skip_dirs=HEAVY_DIRS,
            )
        )
    blocks: list[str] = []
    outlined = 0
    unsupported = 0
    for path in files:
        if outlined >= MAX_FILES:
            break
        symbols = outline(path)
        if symbols is None:
            unsupported += 1
            continue
        outlined += 1
        if query:
            symbols = [s for s in symbols if query in _name_of(s[2]).lower()]
            if not symbols:
                continue
        lines = [display(path)]
        lines += [f"  {n}: {'  ' * depth}{text}" for n, depth, text in symbols]
        if len(lines) == 1:
            lines.append("  (no symbols found)")
        blocks.append("\n".join(lines))
    if root.is_file() and unsupported:
        ext = ", ".join(sorted(SOURCE_EXTS))
        return ToolResult(f"{display(str(root))}: not a supported source file (extensions: {ext})")
    if not blocks:
        what = f"symbols matching {query!r}" if query else "source files"
        return ToolResult(f"(no {what} found under {display(str(root))})")
    text = "\n".join(blocks)
    left = len(files) - outlined - unsupported
    if left > 0:
        text += f"\n[{left} more source files not outlined; give a narrower path]"
    return ToolResult(text)


TOOL = FunctionTool(
    name="code_index", description=DESCRIPTION, schema=SCHEMA, fn=code_index, read_only=True
)
register_builtin(TOOL)
