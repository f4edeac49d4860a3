"""The ``.env`` format used for provider keys (CFG-6).

One ``KEY=value`` per line; blank lines and ``#`` comments are ignored;
``export KEY=value`` and single- or double-quoted values are accepted on read.
Writes are atomic, mode 0600, refuse multi-line values, and leave a
``# reasonix-cleared KEY`` tombstone for each cleared key so a later import
from another source knows the user removed it on purpose.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from reasonix.config.safe_read import CONFIG_LIMIT, read_text
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass, field

__all__ = [
    "DotEnv",
    "is_valid_key",
    "parse_dotenv",
    "read_dotenv",
    "update_dotenv",
]

# Pattern sources; _rx compiles each on first use (not at import).
_KEY = r"[A-Za-z_][A-Za-z0-9_]*\Z"
_ASSIGN = r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)\Z"
_TOMBSTONE = r"\s*#\s*reasonix-cleared\s+([A-Za-z_][A-Za-z0-9_]*)\s*\Z"
_PLAIN_VALUE = r"[A-Za-z0-9_./:@+,=%^~-]*\Z"


@functools.cache
def _rx(source: str) -> re.Pattern[str]:
    return re.compile(source)


@dataclass
class DotEnv:
    """Parsed contents: the values and the keys marked as deliberately cleared."""

    values: dict[str, str] = field(default_factory=dict)
    cleared: set[str] = field(default_factory=set)


def is_valid_key(key: str) -> bool:
    """True for shell-style names (letters, digits, underscore; no leading digit)."""
    return bool(_rx(_KEY).match(key))


_DQ_ESCAPE = r"\\(.)"
_ESCAPES = {"n": "\n", "\\": "\\", '"': '"', "$": "$", "`": "`"}


def _unescape(match: re.Match[str]) -> str:
    # Unknown escapes keep their backslash, as in the shell's double quotes.
    return _ESCAPES.get(match.group(1), match.group(0))


_QUOTED = r"'([^']*)'" r'|"((?:[^"\\]|\\.)*)"'
_TRAILING_COMMENT = r"\s*(?:#.*)?\Z"


def _unquote(raw: str) -> str:
    value = raw.strip()
    quoted = _rx(_QUOTED).match(value)
    # A quoted value may be followed by a comment: KEY="a b" # note
    if quoted and _rx(_TRAILING_COMMENT).match(value, quoted.end()):
        if quoted.group(1) is not None:
            return quoted.group(1)
        return _rx(_DQ_ESCAPE).sub(_unescape, quoted.group(2))
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return _rx(_DQ_ESCAPE).sub(_unescape, value[1:-1])
    if value.startswith(("'", '"')):
        # Unterminated quote: keep the text rather than guessing where it ends.
        return value
    # An unquoted value ends at " #", as in the shell.
    cut = re.search(r"\s#", value)
    return value[: cut.start()].rstrip() if cut else value


def parse_dotenv(text: str) -> DotEnv:
    """Parse ``.env`` text. Lines that are not assignments are ignored, not fatal."""
    env = DotEnv()
    for line in text.splitlines():
        tomb = _rx(_TOMBSTONE).match(line)
        if tomb:
            env.cleared.add(tomb.group(1))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _rx(_ASSIGN).match(line)
        if match:
            env.values[match.group(1)] = _unquote(match.group(2))
            env.cleared.discard(match.group(1))
    return env


def read_dotenv(path: Path) -> DotEnv:
    """Read ``path``; a missing file is an empty result."""
    try:
        # utf-8-sig: a BOM from a Windows editor would otherwise hide the first key.
        text = read_text(path, CONFIG_LIMIT, encoding="utf-8-sig")
    except FileNotFoundError:
        return DotEnv()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8",
            file=str(path),
        ) from None
    return parse_dotenv(text)


def _format(key: str, value: str) -> str:
    if _rx(_PLAIN_VALUE).match(value):
        return f"{key}={value}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    escaped = escaped.replace("`", "\\`")
    return f'{key}="{escaped}"'


def update_dotenv(
    path: Path,
    set_values: Mapping[str, str] | None = None,
    clear: Iterable[str] = (),
) -> None:
    """Set and clear keys in ``path`` atomically, keeping every other line.

    The file is (re)written with mode 0600 because it holds secrets.
    """
    set_values = dict(set_values or {})
    to_clear = set(clear)
    for key, value in set_values.items():
        if not is_valid_key(key):
            raise ConfigError(
                f"invalid variable name {key!r}: use letters, digits and _ (not starting "
                "with a digit)",
                file=str(path),
                key=key,
            )
        if "\n" in value or "\r" in value:
            raise ConfigError(
                f"the value of {key} spans several lines; .env values must be one line",
                file=str(path),
                key=key,
            )
    for key in to_clear:
        if not is_valid_key(key):
            raise ConfigError(f"invalid variable name {key!r}", file=str(path), key=key)
    try:
        old = read_text(path, CONFIG_LIMIT, encoding="utf-8-sig")
    except FileNotFoundError:
        old = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=str(path)) from None
    out: list[str] = []
    written: set[str] = set()
    for line in old.splitlines():
        tomb = _rx(_TOMBSTONE).match(line)
        if tomb and (tomb.group(1) in set_values or tomb.group(1) in to_clear):
            continue  # re-emitted below (clear) or obsolete (set)
        match = None if tomb else _rx(_ASSIGN).match(line)
        if match:
            key = match.group(1)
            if key in to_clear:
                continue
            if key in set_values:
                if key not in written:
                    out.append(_format(key, set_values[key]))
                    written.add(key)
                continue  # drop duplicate assignments of a key we own now
        out.append(line)
    for key, value in set_values.items():
        if key not in written:
            out.append(_format(key, value))
    for key in sorted(to_clear - set(set_values)):
        out.append(f"# reasonix-cleared {key}")
    text = "\n".join(out) + "\n" if out else ""
    from reasonix.config.atomic import write_atomic  # writing a .env is no run's start

    try:
        write_atomic(Path(path), text, mode=0o600)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
        raise ConfigError(f"cannot write: {exc.strerror or exc}{where}", file=str(path)) from None
