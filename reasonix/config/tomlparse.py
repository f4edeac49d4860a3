"""Reading TOML: stdlib ``tomllib`` (3.11+) or ``tomli`` (3.10), with line numbers.

Parse errors become :class:`ConfigError` carrying the file and line; the
decoder only reports the line inside its message before 3.14, so it is parsed
from there. :func:`find_key_line` locates a key in the text for errors that
are found after parsing (a value out of range, a wrong type).

Plain TOML (:mod:`reasonix.config.tomlsimple`) is read without ``tomllib``.
Any other text that parsed once is remembered by its content hash in
``<cache>/toml/`` as JSON, so a run whose config files did not change does not
import the TOML parser at all (about a twentieth of the start-up). Only
values JSON carries exactly are remembered (a date or time is parsed anew);
any trouble with the cache just means parsing.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from typing import TYPE_CHECKING

from reasonix.errors import ConfigError

if TYPE_CHECKING:
    from typing import Any

    from tomllib import TOMLDecodeError

__all__ = ["TOMLDecodeError", "find_key_line", "loads", "split_header"]

_CACHE_LIMIT = 1 << 20  # texts above this are parsed every time


def _tomllib() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


def __getattr__(name: str) -> Any:
    if name == "TOMLDecodeError":  # the parser's error class, imported only when asked for
        return _tomllib().TOMLDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Pattern sources; _rx compiles each on first use (errors and key lookups only).
_AT_LINE = r"\s*\(at line (\d+), column (\d+)\)\s*$"
_AT_END = r"\s*\(at end of document\)\s*$"
_HEADER = r"^\s*(\[\[?)\s*([^\[\]]+?)\s*(\]\]?)\s*(#.*)?$"
_KEYVAL = (
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
    r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


@functools.cache
def _rx(source: str) -> re.Pattern[str]:
    return re.compile(source)


def loads(text: str, file: str) -> dict[str, Any]:
    """Parse ``text``; a syntax error becomes ConfigError(file=, line=).

    A leading byte-order mark (Windows editors add one) is ignored.
    """
    text = text.removeprefix("\ufeff")
    from reasonix.config.tomlsimple import parse as parse_plain

    plain = parse_plain(text)  # most config files: no tomllib at all
    if plain is not None:
        return plain
    where = _cache_file(text)
    if where is not None:
        try:
            with open(where, encoding="utf-8") as fh:
                got = json.load(fh)
            if isinstance(got, dict):
                return got
        except (OSError, ValueError):
            pass
    data = _parse(text, file)
    if where is not None and _plain(data):
        _remember(where, data)
    return data


def _parse(text: str, file: str) -> dict[str, Any]:
    tomllib = _tomllib()
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line: int | None = getattr(exc, "lineno", None)
        match = _rx(_AT_LINE).search(message)
        if match:
            line = line or int(match.group(1))
            message = message[: match.start()]
        elif _rx(_AT_END).search(message):
            line = line or text.count("\n") + 1
            message = _rx(_AT_END).sub("", message)
        if hasattr(exc, "msg"):  # 3.14 keeps the bare message apart
            message = str(exc.msg)
        raise ConfigError(f"invalid TOML: {message}", file=file, line=line) from None
    except RecursionError:
        # Thousands of nested arrays or inline tables exhaust the parser's stack.
        raise ConfigError(
            "invalid TOML: arrays or inline tables are nested too deeply", file=file
        ) from None
    return data


def _cache_file(text: str) -> str | None:
    """Where the parse of ``text`` is remembered (None: not cached)."""
    if len(text) > _CACHE_LIMIT:
        return None
    from reasonix.config.paths import cache_dir
    from reasonix.digest import sha256_hex

    # the parser version is part of the key: 3.10's tomli and 3.11's tomllib may differ
    seed = f"toml-v1\0{sys.version_info[0]}.{sys.version_info[1]}\0{text}".encode()
    digest = sha256_hex(seed)[:40]
    return os.path.join(cache_dir(), "toml", digest + ".json")


def _plain(value: Any) -> bool:
    """True when JSON gives ``value`` back exactly (no dates or times inside)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, (str, int, float, bool))


def _remember(where: str, data: dict[str, Any]) -> None:
    tmp = f"{where}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(where), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # no wider than need be
        with open(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, where)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _split_dotted(key: str) -> list[str]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", key)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def split_header(line: str) -> tuple[str, bool] | None:
    """``(table name, is_array)`` when ``line`` is a table header, else None."""
    match = _rx(_HEADER).match(line)
    if not match or len(match.group(1)) != len(match.group(3)):
        return None
    return ".".join(_split_dotted(match.group(2))), match.group(1) == "[["


def key_of(line: str) -> list[str] | None:
    """The dotted key parts when ``line`` starts a ``key = value`` pair."""
    match = _rx(_KEYVAL).match(line)
    return _split_dotted(match.group(1)) if match else None


def find_key_line(text: str, table: str, key: str, index: int | None = None) -> int | None:
    """1-based line of ``key`` in ``table`` (``""`` = top level), or None.

    ``index`` selects the n-th ``[[table]]`` for arrays of tables. Dotted
    forms (``agent.compact_ratio = …`` at the top level) are found too. Lines
    inside multi-line strings may rarely confuse this; it only feeds messages.
    """
    current = ""
    occurrence = -1
    want = table.split(".") if table else []
    for number, line in enumerate(text.splitlines(), start=1):
        header = split_header(line)
        if header is not None:
            current = header[0]
            if header[1] and current == table:
                occurrence += 1
            continue
        parts = key_of(line)
        if parts is None:
            continue
        scope = current.split(".") if current else []
        if index is not None and (current != table or occurrence != index):
            continue
        if scope + parts == [*want, key]:
            return number
    return None
