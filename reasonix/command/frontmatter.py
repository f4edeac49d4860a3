"""The ``---`` frontmatter of command and skill files (a small YAML subset).

Kept apart from :mod:`.custom` so the skill index a run sends in its first
request can be read without loading the command registry.
"""

from __future__ import annotations

from reasonix.charsets import ASCII_ALNUM, ASCII_LETTERS

__all__ = ["FrontmatterError", "parse"]

_LETTERS = frozenset(ASCII_LETTERS)
_KEY_CHARS = frozenset(ASCII_ALNUM + "_-")


class FrontmatterError(ValueError):
    """The frontmatter of a command file cannot be read (the message says why)."""


def key_value(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` line, or None: what the pattern
    ``^([A-Za-z][A-Za-z0-9_-]*)\\s*:(.*)$`` matches, without a regular expression
    (the built-in skills are read on every start)."""
    head, colon, value = line.partition(":")
    key = head.rstrip()  # the same whitespace as \\s
    if not colon or not key or key[0] not in _LETTERS or not _KEY_CHARS.issuperset(key):
        return None
    if "\n" in value:  # `.` stops at a newline, `$` may stand before a last one
        if value.index("\n") != len(value) - 1:
            return None
        value = value[:-1]
    return key, value


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _fold(key: str, head: str, more: list[str]) -> str:
    """A key's value from its line and its indented continuation lines."""
    items = [m.strip() for m in more if m.strip()]
    if head in ("|", "|-", "|+"):
        return "\n".join(items)
    if head in (">", ">-", ">+"):
        return " ".join(items)
    if items and all(i.startswith("- ") or i == "-" for i in items) and not head:
        return ", ".join(_unquote(i[1:]) for i in items)  # a YAML list: allowed-tools
    return " ".join([_unquote(head), *items]).strip() if items else _unquote(head)


def parse(text: str) -> tuple[dict[str, str], str]:
    """``(frontmatter, body)`` of a command file; FrontmatterError when the fence is broken.

    Keys are lower-cased. A file that does not start with a ``---`` line has
    no frontmatter: all of it is the body.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise FrontmatterError("the frontmatter has no closing --- line")
    meta: dict[str, str] = {}
    key, head, more = "", "", []
    for number, raw in enumerate(lines[1:end], start=2):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t" or line.startswith("- "):
            if not key:
                raise FrontmatterError(f"line {number}: a continuation line without a key")
            more.append(line)
            continue
        pair = key_value(line)
        if pair is None:
            raise FrontmatterError(f"line {number}: expected `key: value`, found {line[:40]!r}")
        if key:
            meta[key] = _fold(key, head, more)
        key, head, more = pair[0].lower(), pair[1].strip(), []
    if key:
        meta[key] = _fold(key, head, more)
    body = "".join(lines[end + 1 :]).lstrip("\r\n")
    return meta, body
