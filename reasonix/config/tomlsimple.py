"""A parser for the plain TOML most config files are, or None for anything else.

Importing ``tomllib`` and compiling its patterns costs a run more than the
rest of reading its config. Most files use one small part of TOML: ``[table]``
and ``[[array]]`` headers with bare keys, ``key = value`` lines with a bare
key, and values that are strings without escapes, decimal integers,
booleans or one-line arrays of those. :func:`parse` reads exactly that part
and gives up (returns None) at the first thing outside it (an escape, a
float, a date, an inline table, a multi-line value, a quoted or dotted key)
and at anything TOML forbids (a key or table defined twice, a control
character), so the caller parses the text with ``tomllib``, which then gives
the same value or the error with its line. A differential test holds the two
to the same result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["parse"]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DIGITS = frozenset("0123456789")
_BLANK = " \t"
_MAX_DIGITS = 18  # larger integers go to tomllib (no range question here)


class _GiveUp(Exception):
    """The text is outside the plain part (or is not valid TOML)."""


def parse(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` for plain TOML, else None (see the module docstring)."""
    try:
        return _Doc().read(text)
    except _GiveUp:
        return None


def _allowed(text: str) -> bool:
    """No control character but tab (what TOML allows in strings and comments)."""
    return all(c == "\t" or ("\x1f" < c != "\x7f") for c in text)


def _rest_ok(rest: str) -> bool:
    """What may follow a value or header on its line: blanks, then perhaps a comment."""
    rest = rest.lstrip(_BLANK)
    return not rest or (rest[0] == "#" and _allowed(rest))


class _Doc:
    def __init__(self) -> None:
        self.root: dict[str, Any] = {}
        self.defined: set[int] = set()  # tables a [header] defined (a second one is an error)
        self.arrays: set[int] = set()  # lists an [[array]] header made (the rest are values)

    def read(self, text: str) -> dict[str, Any]:
        table = self.root
        lines = text.split("\n")
        for n, raw in enumerate(lines):
            # "\r" only ends a line before "\n"; anywhere else it is a control character
            line = raw[:-1] if raw.endswith("\r") and n < len(lines) - 1 else raw
            stripped = line.strip(_BLANK)
            if not stripped:
                continue
            first = stripped[0]
            if first == "#":
                if not _allowed(stripped):
                    raise _GiveUp
            elif first == "[":
                table = self._header(stripped)
            else:
                self._pair(table, stripped)
        return self.root

    # -- headers -------------------------------------------------------------------
    def _header(self, line: str) -> dict[str, Any]:
        many = line.startswith("[[")
        close = "]]" if many else "]"
        end = line.find(close)
        if end < 0:
            raise _GiveUp
        path = _path(line[2 if many else 1 : end])
        if not _rest_ok(line[end + len(close) :]):
            raise _GiveUp
        parent = self.root
        for key in path[:-1]:
            parent = self._descend(parent, key)
        last = path[-1]
        found = parent.get(last)
        if many:
            if found is None:
                made: list[Any] = []
                self.arrays.add(id(made))
                parent[last] = made
                found = made
            elif not isinstance(found, list) or id(found) not in self.arrays:
                raise _GiveUp
            table: dict[str, Any] = {}
            found.append(table)
            return table
        if found is None:
            table = parent[last] = {}
        elif isinstance(found, dict) and id(found) not in self.defined:
            table = found  # made on the way to a sub-table: defined now, once
        else:
            raise _GiveUp
        self.defined.add(id(table))
        return table

    def _descend(self, table: dict[str, Any], key: str) -> dict[str, Any]:
        found = table.get(key)
        if found is None:
            made: dict[str, Any] = {}
            table[key] = made
            return made
        if isinstance(found, dict):
            return found
        if isinstance(found, list) and id(found) in self.arrays and found:
            last: dict[str, Any] = found[-1]
            return last
        raise _GiveUp

    # -- key = value -------------------------------------------------------------
    def _pair(self, table: dict[str, Any], line: str) -> None:
        eq = line.find("=")
        if eq <= 0:
            raise _GiveUp
        key = line[:eq].rstrip(_BLANK)
        if not key or not _BARE.issuperset(key) or key in table:
            raise _GiveUp
        value, rest = _value(line[eq + 1 :].lstrip(_BLANK), nested=False)
        if not _rest_ok(rest):
            raise _GiveUp
        table[key] = value


def _path(inner: str) -> list[str]:
    parts = [p.strip(_BLANK) for p in inner.split(".")]
    if not all(p and _BARE.issuperset(p) for p in parts):
        raise _GiveUp
    return parts


def _value(text: str, *, nested: bool) -> tuple[Any, str]:
    """One value at the start of ``text``; returns it and what follows."""
    if not text:
        raise _GiveUp
    first = text[0]
    if first == '"' or first == "'":
        if text.startswith(first * 3):
            raise _GiveUp  # a multi-line string
        end = text.find(first, 1)
        if end < 0:
            raise _GiveUp
        body = text[1:end]
        if (first == '"' and "\\" in body) or not _allowed(body):
            raise _GiveUp
        return body, text[end + 1 :]
    if first == "[" and not nested:
        return _array(text[1:])
    word_end = 0
    while word_end < len(text) and text[word_end] not in " \t#,]":
        word_end += 1
    word, rest = text[:word_end], text[word_end:]
    if word == "true":
        return True, rest
    if word == "false":
        return False, rest
    digits = word[1:] if word.startswith("-") else word
    if not digits or not _DIGITS.issuperset(digits) or len(digits) > _MAX_DIGITS:
        raise _GiveUp
    if digits[0] == "0" and len(digits) > 1:
        raise _GiveUp  # a leading zero is not TOML
    return int(word), rest


def _array(text: str) -> tuple[list[Any], str]:
    items: list[Any] = []
    rest = text.lstrip(_BLANK)
    while True:
        if rest.startswith("]"):
            return items, rest[1:]
        item, rest = _value(rest, nested=True)
        items.append(item)
        rest = rest.lstrip(_BLANK)
        if rest.startswith(","):
            rest = rest[1:].lstrip(_BLANK)
        elif not rest.startswith("]"):
            raise _GiveUp
