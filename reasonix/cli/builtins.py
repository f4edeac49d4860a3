"""Import the built-in provider kinds and tools (the Go blank imports).

The CLI is the only layer that imports built-in children (ARCH-3); parents
never do. Call :func:`load_builtins` once before building a run.
"""

from __future__ import annotations

import importlib

__all__ = ["PROVIDER_MODULES", "load_builtins"]

PROVIDER_MODULES = (
    "reasonix.provider.openai",
    "reasonix.provider.anthropic",
    "reasonix.provider.responses",
)


def load_builtins() -> None:
    """Register every built-in provider kind and built-in tool."""
    for name in PROVIDER_MODULES:
        importlib.import_module(name)
    from reasonix.tool import builtin

    load_all = getattr(builtin, "load_all", None)
    if load_all is not None:
        load_all()
