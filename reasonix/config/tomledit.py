"""Minimal text-preserving TOML edits (the stdlib reads TOML but cannot write it).

Edits work on lines: a statement is a header, a ``key = value`` pair (which
may span lines: its end is where the accumulated text first parses), or
anything else (comments, blanks). Only the touched statement changes; every
other byte, comment and line ending is kept. Each result is re-parsed before
the atomic write, so an edit can never leave a broken file behind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.atomic import write_atomic
from reasonix.config.safe_read import CONFIG_LIMIT, read_text
from reasonix.config.tomlparse import key_of, loads, split_header
from reasonix.errors import ConfigError
from reasonix.lazy import Pattern, dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "append_to_array",
    "dumps_value",
    "remove_keys",
    "remove_table",
    "set_key",
    "upsert_array_entry",
]

_BARE_KEY = Pattern(r"[A-Za-z0-9_-]+\Z")


def _dump_str(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def dumps_value(value: Any) -> str:
    """TOML text for a str, int, float, bool or list of those."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # repr always has "." or "e", so it stays a float
    if isinstance(value, str):
        return _dump_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


def _dump_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _dump_str(key)


@dataclass
class _Stmt:
    """A span of lines [start, end) and what it is."""

    start: int
    end: int
    table: str  # the table this statement belongs to ("" = top level)
    key: list[str] | None = None  # dotted key parts of a key/value pair
    header: bool = False
    array: bool = False  # a [[header]] line, or a pair inside an array-of-tables element


def _statements(lines: list[str]) -> list[_Stmt]:
    out: list[_Stmt] = []
    table = ""
    in_array = False
    i = 0
    while i < len(lines):
        line = lines[i]
        header = split_header(line)
        if header is not None:
            table, in_array = header
            out.append(_Stmt(i, i + 1, table, header=True, array=in_array))
            i += 1
            continue
        parts = key_of(line)
        if parts is None:
            out.append(_Stmt(i, i + 1, table, array=in_array))
            i += 1
            continue
        end = i + 1
        # A value may continue over several lines (arrays, multi-line strings):
        # extend until the pair parses on its own.
        while True:
            try:
                loads("".join(lines[i:end]), "")
                break
            except ConfigError:
                if end >= len(lines):
                    end = i + 1  # unparseable: treat as one line, the final check catches it
                    break
                end += 1
        out.append(_Stmt(i, end, table, key=parts, array=in_array))
        i = end
    return out


def _read(path: Path) -> tuple[str, list[str], str]:
    try:
        # Bytes decoded as they are (no newline translation): CRLF files stay CRLF.
        text = read_text(path, CONFIG_LIMIT).removeprefix("\ufeff")  # TOML needs no BOM
    except FileNotFoundError:
        text = ""
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc.reason}", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    return text, lines, newline


def _write(path: Path, lines: list[str]) -> None:
    text = "".join(lines)
    try:
        loads(text, str(path))
    except ConfigError as exc:
        raise ConfigError(
            f"refusing to write: the edit would leave invalid TOML ({exc.detail})", file=str(path)
        ) from None
    try:
        write_atomic(path, text)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
        raise ConfigError(f"cannot write: {exc.strerror or exc}{where}", file=str(path)) from None


def _matches(stmt: _Stmt, table: str, key: str) -> bool:
    """True when ``stmt`` assigns ``table.key``, however the path is split."""
    if stmt.key is None or stmt.array:
        return False
    scope = table.split(".") if table else []
    own = stmt.table.split(".") if stmt.table else []
    return own + stmt.key == [*scope, key]


def _ensure_newline(lines: list[str], newline: str) -> None:
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline


def _trailing_comment(line: str) -> str:
    """The ``   # note`` ending the pair's last line, with its spacing, or "".

    A ``#`` starts the comment when the text before it parses on its own; a
    ``#`` inside a string leaves the string unterminated, so it cannot match.
    """
    body = line.rstrip("\r\n")
    for pos, ch in enumerate(body):
        if ch != "#":
            continue
        head = body[:pos]
        try:
            loads(head, "")
        except ConfigError:
            continue
        if "=" not in head:  # a comment-only line, not a pair
            return ""
        return body[len(head.rstrip()) :]
    return ""


def _first_header(stmts: list[_Stmt], table: str) -> int:
    return next((s.start for s in stmts if s.header and not s.array and s.table == table), 0)


def set_key(path: Path, table: str, key: str, value: Any) -> None:
    """Set ``table.key = value`` in ``path`` (``table`` "" = top level), keeping the rest.

    Creates the file and the table when needed; replaces the existing pair in
    place. A table given as an inline table cannot be edited and is an error.
    """
    path = Path(path)
    _, lines, nl = _read(path)
    stmts = _statements(lines)
    rendered = dumps_value(value)
    for stmt in stmts:
        if _matches(stmt, table, key):
            assert stmt.key is not None
            prefix = ".".join(_dump_key(k) for k in stmt.key)
            comment = _trailing_comment(lines[stmt.end - 1])
            lines[stmt.start : stmt.end] = [f"{prefix} = {rendered}{comment}{nl}"]
            _write(path, lines)
            return
        if stmt.key is not None and table and stmt.table == "" and stmt.key == table.split("."):
            raise ConfigError(
                f"[{table}] is written as an inline table; edit {key} by hand",
                file=str(path),
                key=f"{table}.{key}",
            )
    new_line = f"{_dump_key(key)} = {rendered}{nl}"
    _ensure_newline(lines, nl)
    if not table:
        first_header = next((s.start for s in stmts if s.header), len(lines))
        last_pair = max(
            (s.end for s in stmts if s.key is not None and s.start < first_header), default=0
        )
        lines.insert(last_pair, new_line)
        _write(path, lines)
        return
    section = [
        s
        for s in stmts
        if s.table == table and not s.array and s.start >= _first_header(stmts, table)
    ]
    header = next((s for s in section if s.header), None)
    if header is not None:
        last_pair = max((s.end for s in section if s.key is not None), default=header.end)
        lines.insert(last_pair, new_line)
        _write(path, lines)
        return
    dotted = [
        s
        for s in stmts
        if s.table == "" and s.key and s.key[: len(table.split("."))] == table.split(".")
    ]
    if dotted:
        # The table exists only as top-level dotted keys; a [table] header would redefine it.
        lines.insert(dotted[-1].end, f"{table}.{new_line}")
        _write(path, lines)
        return
    if lines and lines[-1].strip():
        lines.append(nl)
    lines += [f"[{table}]{nl}", new_line]
    _write(path, lines)


def remove_keys(path: Path, table: str, keys: Iterable[str]) -> list[str]:
    """Remove ``table.<key>`` pairs for each key; returns the keys removed.

    The file is not rewritten when nothing matches.
    """
    path = Path(path)
    wanted = list(keys)
    _, lines, _ = _read(path)
    if not lines:
        return []
    removed: list[str] = []
    spans: list[tuple[int, int]] = []
    for stmt in _statements(lines):
        for key in wanted:
            if _matches(stmt, table, key):
                removed.append(key)
                spans.append((stmt.start, stmt.end))
    if not spans:
        return []
    for start, end in sorted(spans, reverse=True):
        del lines[start:end]
    _write(path, lines)
    return removed


def remove_table(path: Path, table: str) -> bool:
    """Remove the ``[table]`` section (header and body up to the next header).

    Sub-tables (``[table.sub]``) are removed too. Returns True when the file changed.
    """
    path = Path(path)
    _, lines, _ = _read(path)
    keep: list[str] = []
    dropping = False
    for stmt in _statements(lines):
        if stmt.header:
            dropping = stmt.table == table or stmt.table.startswith(table + ".")
        if not dropping:
            keep += lines[stmt.start : stmt.end]
    if len(keep) == len(lines):
        return False
    _write(path, keep)
    return True


def append_to_array(path: Path, table: str, key: str, item: str) -> bool:
    """Add ``item`` to the string array ``table.key`` unless present (D3).

    Returns True when the file changed. The array is rewritten on one line.
    """
    path = Path(path)
    text, _, _ = _read(path)
    data = loads(text, str(path)) if text else {}
    current: Any = data
    for part in [*(table.split(".") if table else []), key]:
        current = current.get(part) if isinstance(current, dict) else None
    if current is None:
        current = []
    if not isinstance(current, list) or not all(isinstance(v, str) for v in current):
        raise ConfigError(
            "expected a list of strings", file=str(path), key=f"{table}.{key}" if table else key
        )
    if item in current:
        return False
    set_key(path, table, key, [*current, item])
    return True


def upsert_array_entry(path: Path, table: str, name: str, fields: dict[str, Any]) -> bool:
    """Replace the ``[[table]]`` element whose ``name`` equals ``name`` with ``fields``.

    Appends a new element when none matches. Every other byte of the file is
    kept (comments inside the replaced element go with it). ``fields`` values
    are str, number, bool or lists of those. Returns True when an element was
    replaced, False when one was appended.
    """
    path = Path(path)
    _, lines, nl = _read(path)
    stmts = _statements(lines)
    block = [f"[[{table}]]{nl}"] + [f"{_dump_key(k)} = {dumps_value(v)}{nl}" for k, v in
                                      fields.items()]  # fmt: skip
    headers = [i for i, s in enumerate(stmts) if s.header]
    for pos, idx in enumerate(headers):
        head = stmts[idx]
        if not (head.array and head.table == table):
            continue
        end_idx = headers[pos + 1] if pos + 1 < len(headers) else len(stmts)
        body = stmts[idx + 1 : end_idx]
        named = [s for s in body if s.key == ["name"]]
        if not named:
            continue
        value = loads("".join(lines[named[0].start : named[0].end]), str(path)).get("name")
        if value != name:
            continue
        start = head.start
        end = body[-1].end if body else head.end
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1  # keep the blank lines that separate it from the next table
        lines[start:end] = block
        _write(path, lines)
        return True
    _ensure_newline(lines, nl)
    if lines and lines[-1].strip():
        lines.append(nl)
    lines += block
    _write(path, lines)
    return False
