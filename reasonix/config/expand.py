"""``${VAR}`` and ``${VAR:-default}`` expansion (D22, CFG-11).

Deliberately small: no escaping, no nesting, no ``$VAR`` without braces. An
unset variable without a default is an error naming the variable and where it
was used, because silently expanding to "" would hand an MCP server or the
sandbox a wrong value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from reasonix.errors import ConfigError
from reasonix.lazy import Pattern

__all__ = ["Lookup", "chain_lookup", "environ_lookup", "expand_vars"]

Lookup = Callable[[str], "str | None"]

_REF = Pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(
    text: str,
    lookup: Lookup | Mapping[str, str],
    where: str,
    *,
    file: str | None = None,
    key: str | None = None,
) -> str:
    """Replace each ``${VAR}`` / ``${VAR:-default}`` in ``text``.

    As in the shell, ``:-`` also applies when the variable is set but empty.
    ``where`` names the place for the error message (a server name, a key).
    """
    get: Lookup = lookup.get if isinstance(lookup, Mapping) else lookup

    def repl(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = get(name)
        if value:
            return value
        if default is not None:
            return default
        if value is not None:
            return value  # set but empty, and no default: empty is what was asked for
        raise ConfigError(
            f"${{{name}}} is not set (used by {where}); set {name} in the environment "
            f"or the project .env, or write ${{{name}:-default}}",
            file=file,
            key=key,
        )

    return _REF.sub(repl, text)


def environ_lookup(name: str) -> str | None:
    """Look a variable up in the process environment."""
    return os.environ.get(name)


def chain_lookup(*sources: Mapping[str, str] | Lookup) -> Lookup:
    """A lookup that tries each source in turn (e.g. project .env, then os.environ)."""

    def get(name: str) -> str | None:
        for src in sources:
            value = src.get(name) if isinstance(src, Mapping) else src(name)
            if value is not None:
                return value
        return None

    return get
