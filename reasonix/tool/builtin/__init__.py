"""Built-in tools; each module registers itself through register_builtin on import.

This package never imports its modules at import time (a parent never imports
its children, DESIGN §2). The entry point calls :func:`load_all`, which imports
every name in :data:`BUILTIN_MODULES` by string.
"""

from __future__ import annotations

import importlib

__all__ = ["BUILTIN_MODULES", "load_all"]

# One module per line; helpers append their own names (keep the tuple sorted).
BUILTIN_MODULES: tuple[str, ...] = ()


def load_all() -> None:
    """Import every built-in tool module so each registers itself (idempotent)."""
    for name in BUILTIN_MODULES:
        importlib.import_module(name)
