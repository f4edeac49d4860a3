"""The grep query, the pure-Python engine and the one output formatter.

Both engines return the same thing — a list of :class:`FileHits` sorted the way
a depth-first walk with name-sorted directories visits files — and
:func:`format_hits` turns that into text, so the model sees identical output
whichever engine ran. The filtering rules are ripgrep's defaults, pinned with
flags (no config file, no global/exclude ignore files, .gitignore honoured
without a git repo) and re-implemented by the Python walker:

* hidden entries (leading ``.``) are skipped unless an ignore file whitelists them;
* ``.gitignore``/``.ignore``/``.rgignore`` rules as in :mod:`._gitignore`;
* symlinks are not followed; a file with a NUL byte is binary and skipped;
* a UTF-8 BOM is dropped and UTF-16 files with a BOM are transcoded;
* a match never spans lines; a line is reported once however often it matches.

The Python engine reads each file whole, decodes it once, runs the regex over
the whole text and only looks at the lines around hits, so the cost of a file
without a match is one read, one decode and one regex scan.
"""

from __future__ import annotations

import codecs
import os
import re
import warnings
from collections.abc import Callable, Iterator

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ToolError
from reasonix.lazy import Pattern, dataclass, field
from reasonix.tool.builtin._regular import open_regular
from reasonix.tool.builtin._walk import walk_files

__all__ = [
    "FileHits",
    "GrepQuery",
    "compile_pattern",
    "format_hits",
    "search_python",
]

MAX_LINE_CHARS = 400  # one minified line must not eat the whole result budget
_LINEWISE_TOKENS = ("\\A", "\\Z", "(?<", "(?=", "(?!")
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "0-9A-Fa-f",
}
_POSIX_RX = Pattern(r"\[:(\w+):\]")


@dataclass
class GrepQuery:
    """One search. ``root`` is an absolute real path (file or directory)."""

    pattern: str
    root: str
    ignore_case: bool = False
    before: int = 0
    after: int = 0
    mode: str = "content"  # content | files_with_matches | count
    include: Callable[[str], bool] | None = None  # rel path from root -> keep?
    forbidden: Callable[[str], bool] | None = None  # abs path -> hide?

    @property
    def context(self) -> bool:
        """True when context lines were asked for."""
        return self.mode == "content" and (self.before > 0 or self.after > 0)


@dataclass
class FileHits:
    """What one file contributed: its matching-line count and (content mode) lines."""

    path: str
    count: int = 0
    lines: list[tuple[int, bool, str]] = field(default_factory=list)  # (lineno, is_match, text)


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """Compile ``pattern`` with Python ``re`` (POSIX ``[:class:]`` translated).

    Raises :class:`ToolError` with a message for the model on bad syntax.
    """
    py = _POSIX_RX.sub(lambda m: _POSIX_CLASSES.get(m.group(1), m.group(0)), pattern)
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set" FutureWarnings
            return re.compile(py, flags)
    except re.error as err:
        raise ToolError(
            f"invalid regular expression {pattern!r}: {err}. Use Python/ripgrep "
            "regex syntax; escape literal characters such as ( [ { . * + ? with a backslash."
        ) from err


# --------------------------------------------------------------------------- python


def search_python(q: GrepQuery, cancel: Cancel, cap: int | None = None) -> list[FileHits]:
    """Search with the pure-Python engine; results in walk order.

    Once ``cap`` matching lines are collected, later files are only counted.
    """
    rx = compile_pattern(q.pattern, q.ignore_case)
    linewise = any(tok in q.pattern for tok in _LINEWISE_TOKENS)
    out: list[FileHits] = []
    if os.path.isfile(q.root):
        files: Iterator[str] = iter([q.root])
    else:
        files = walk_files(q.root, cancel, q.include, q.forbidden)
    shown = 0
    for path in files:
        if cancel.cancelled:
            raise Cancelled(cancel.reason or "cancelled")
        keep_lines = q.mode == "content" and (cap is None or shown < cap)
        hits = _search_file(path, rx, linewise, q, keep_lines)
        if hits is not None and hits.count:
            out.append(hits)
            shown += hits.count
    return out


def _read_text(path: str) -> str | None:
    """The decoded text of ``path``, or None when unreadable or binary."""
    try:
        with open_regular(path) as fh:
            # Chunked, stopping at the first NUL of a non-UTF-16 file: a large binary
            # (or an endless /proc file) is never read whole just to be skipped.
            parts = [fh.read(1 << 16)]
            utf16 = parts[0].startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
            while parts[-1] and (utf16 or b"\0" not in parts[-1]):
                parts.append(fh.read(1 << 20))
    except OSError:
        return None
    data = b"".join(parts)
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", "replace")
        return None if "\0" in text else text
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _search_file(
    path: str, rx: re.Pattern[str], linewise: bool, q: GrepQuery, keep_lines: bool
) -> FileHits | None:
    text = _read_text(path)
    if text is None or (rx.search(text) is None and not linewise):
        return None
    first_only = q.mode == "files_with_matches"
    matches = _linewise_matches(text, rx, first_only) if linewise else _scan(text, rx, first_only)
    if not matches:
        return None
    hits = FileHits(path, count=len(matches))
    if not keep_lines:
        return hits
    if not q.context:
        hits.lines = [(n, True, line) for n, line in matches]
        return hits
    all_lines = _split_lines(text)
    wanted: set[int] = set()
    for n, _ in matches:
        wanted.update(range(max(1, n - q.before), min(len(all_lines), n + q.after) + 1))
    matched = {n for n, _ in matches}
    hits.lines = [(n, n in matched, all_lines[n - 1]) for n in sorted(wanted)]
    return hits


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text ended with a newline: no extra empty line
    return lines


def _scan(text: str, rx: re.Pattern[str], first_only: bool) -> list[tuple[int, str]]:
    """Matching lines found by searching the whole text and checking hit lines.

    A whole-text hit can span a newline, so the hit's line is re-checked on its
    own; the next search starts at the following line, so no line is skipped.
    """
    found: list[tuple[int, str]] = []
    n = len(text)
    pos = 0
    lineno = 1
    counted_to = 0
    search = rx.search
    while pos <= n:
        m = search(text, pos)
        if m is None:
            break
        start = m.start()
        if start == n and (n == 0 or text[n - 1] == "\n"):
            break  # the empty "line" after the final newline is not a line
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = n
        lineno += text.count("\n", counted_to, line_start)
        counted_to = line_start
        line = text[line_start:line_end]
        if m.end() <= line_end or search(line) is not None:
            found.append((lineno, line))
            if first_only:
                break
        pos = line_end + 1
    return found


def _linewise_matches(text: str, rx: re.Pattern[str], first_only: bool) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for i, line in enumerate(_split_lines(text), 1):
        if rx.search(line) is not None:
            found.append((i, line))
            if first_only:
                break
    return found


# --------------------------------------------------------------------------- output


def format_hits(
    hits: list[FileHits], q: GrepQuery, display: Callable[[str], str], cap: int
) -> tuple[str, int]:
    """Render ``hits`` for the model; returns (text, number of matches not shown).

    content: ``path:line:text`` (context lines ``path-line-text``, ``--`` between
    groups); files_with_matches: one path per line; count: ``path:count``.
    The cap counts matching lines (content) or files (other modes).
    """
    if q.mode != "content":
        rows = [
            display(h.path) if q.mode == "files_with_matches" else f"{display(h.path)}:{h.count}"
            for h in hits
        ]
        return "\n".join(rows[:cap]), max(0, len(rows) - cap)
    total = sum(h.count for h in hits)
    out: list[str] = []
    shown = 0
    prev_file = None
    prev_line = 0
    for h in hits:
        if shown >= cap:
            break
        name = display(h.path)
        for lineno, is_match, text in h.lines:
            if q.context and out and (prev_file is not h or lineno != prev_line + 1):
                out.append("--")
            prev_file, prev_line = h, lineno
            out.append(
                f"{name}{':' if is_match else '-'}{lineno}{':' if is_match else '-'}{_clip(text)}"
            )
            if is_match:
                shown += 1
                if shown >= cap:
                    break
    return "\n".join(out), total - shown


def _clip(text: str) -> str:
    if text.endswith("\r"):
        text = text[:-1]
    if len(text) > MAX_LINE_CHARS:
        return f"{text[:MAX_LINE_CHARS]} [... {len(text) - MAX_LINE_CHARS} more chars]"
    return text
