"""One configuration source (a file or the command line) and typed access to it.

A :class:`Layer` knows its name, parsed data and text, so every validation
error can name the file, the line and the key — never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.safe_read import CONFIG_LIMIT, read_text
from reasonix.config.tomlparse import find_key_line, loads
from reasonix.errors import ConfigError
from reasonix.lazy import Pattern, dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = ["FLAG", "Layer", "check_fields", "check_type", "describe_type", "read_layer"]

FLAG = "flag"  # the source name recorded for command-line values


@dataclass
class Layer:
    """Parsed data of one source; ``path`` is None for command-line flags."""

    name: str
    data: dict[str, Any]
    text: str = ""
    path: Path | None = None

    @property
    def file(self) -> str | None:
        """The file name for error messages (None for flags)."""
        return str(self.path) if self.path is not None else None

    def line_of(self, table: str, key: str, index: int | None = None) -> int | None:
        """Line of ``table.key`` in the file text, when it can be found."""
        if not self.text:
            return None
        return find_key_line(self.text, table, key, index)

    def error(self, message: str, table: str, key: str, index: int | None = None) -> ConfigError:
        """A ConfigError pointing at ``table.key`` in this source."""
        dotted = f"{table}.{key}" if table else key
        if self.path is None:
            message += " (from the command line)"
        return ConfigError(
            message, file=self.file, line=self.line_of(table, key, index), key=dotted
        )


def read_layer(path: Path) -> Layer | None:
    """Read and parse ``path``; None when the file does not exist."""
    try:
        text = read_text(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc.reason}", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    text = text.removeprefix("\ufeff")  # a BOM from a Windows editor is no content
    return Layer(str(path), loads(text, str(path)), text, path)


# RFC 9110 §5.1/§5.5: a field name is a token; a value holds no CR, LF, NUL or
# other control character (HTAB aside). Anything else would inject a header or
# break the request, and urllib reports it only as a connection failure.
_HEADER_NAME = Pattern(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE_BAD = Pattern(r"[\x00-\x08\x0a-\x1f\x7f]")


def header_problem(name: str, value: str) -> str | None:
    """Why ``name: value`` cannot be sent as an HTTP header, or None when it can."""
    if not _HEADER_NAME.match(name):
        return f"header name {name!r} is not a valid HTTP field name"
    bad = _HEADER_VALUE_BAD.search(value)
    if bad:
        return f"the value of header {name!r} contains a control character ({bad.group()!r})"
    return None


def _is_list_of_str(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_finite_number(v: Any) -> bool:
    # nan and inf parse as TOML floats but make no sense as a ratio, temperature or
    # timeout; an integer beyond float range would overflow when widened.
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _is_dict_of_str(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "float": (_is_finite_number, "a number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "list[str]": (_is_list_of_str, "a list of strings"),
    "dict[str]": (_is_dict_of_str, "a table of strings"),
    "dict[float]": (
        lambda v: isinstance(v, dict) and all(_is_finite_number(x) for x in v.values()),
        "a table of numbers",
    ),
    "dict": (lambda v: isinstance(v, dict), "a table"),
    "any": (lambda v: True, "any value"),
}


def describe_type(kind: str) -> str:
    """Human wording of a type name used in :data:`_CHECKS`."""
    return _CHECKS[kind][1]


def check_type(
    layer: Layer, table: str, key: str, value: Any, kind: str, index: int | None = None
) -> Any:
    """Return ``value`` (ints widened to float for "float") or raise a located ConfigError."""
    ok, wording = _CHECKS[kind]
    if not ok(value):
        raise layer.error(f"expected {wording}, got {value!r}", table, key, index)
    if kind == "float":
        return float(value)
    return value


def check_fields(
    layer: Layer,
    table: str,
    index: int,
    entry: dict[str, Any],
    fields: dict[str, str],
    warnings: list[str],
) -> dict[str, Any]:
    """Type-check the known fields of one ``[[table]]`` element; unknown ones only warn."""
    values: dict[str, Any] = {}
    for key, value in entry.items():
        kind = fields.get(key)
        if kind is None:
            warnings.append(f"{layer.name}: unknown key {table}[{index}].{key} (ignored)")
            continue
        values[key] = check_type(layer, table, key, value, kind, index)
    return values
