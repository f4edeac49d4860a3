"""Retired keys: found, ignored, and removed from the files that still hold them.

CTX-15: the old multi-threshold context keys are removed on an ordinary start
(``migrate=True``). DIST-6: old update-channel settings stay parseable and are
dropped the next time Reasonix writes that file (:func:`save_setting`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.schema import LEGACY_AGENT_KEYS, LEGACY_UPDATE_KEYS

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "drop_legacy_context_keys",
    "find_legacy_context_keys",
    "is_legacy_update_key",
    "save_setting",
]


def find_legacy_context_keys(data: dict[str, Any]) -> list[tuple[str, str]]:
    """``(table, key)`` of every retired context key present (``[agent]`` or top level)."""
    found = [("", k) for k in LEGACY_AGENT_KEYS if k in data]
    agent = data.get("agent")
    if isinstance(agent, dict):
        found += [("agent", k) for k in LEGACY_AGENT_KEYS if k in agent]
    return found


def drop_legacy_context_keys(path: Path, data: dict[str, Any]) -> list[str]:
    """Remove retired context keys from ``path``; returns the dotted keys removed."""
    from reasonix.config.tomledit import remove_keys, remove_table  # only when there are some

    removed: list[str] = []
    for table, key in find_legacy_context_keys(data):
        dotted = f"{table}.{key}" if table else key
        # A retired key may be a pair (``key = …``) or a whole ``[table]`` section.
        if remove_keys(path, table, [key]) or remove_table(path, dotted):
            removed.append(dotted)
    return removed


def is_legacy_update_key(table: str, key: str) -> bool:
    """True for a retired update-channel setting (DIST-6)."""
    return (table, key) in LEGACY_UPDATE_KEYS


def save_setting(path: Path, table: str, key: str, value: Any) -> None:
    """Write ``table.key = value`` into ``path`` the way every config save should.

    A save omits retired update-channel settings (DIST-6), so they disappear
    on the first write after an upgrade.
    """
    from reasonix.config.tomledit import remove_keys, set_key

    set_key(path, table, key, value)
    by_table: dict[str, list[str]] = {}
    for t, k in LEGACY_UPDATE_KEYS:
        by_table.setdefault(t, []).append(k)
    for t, keys in by_table.items():
        remove_keys(path, t, keys)
