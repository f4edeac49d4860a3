"""Built-in tools; each module registers itself through register_builtin on import.

This package never imports its modules at import time (a parent never imports
its children, DESIGN §2). A run calls :func:`load_catalog`, which hands the
generated :mod:`._catalog` (every tool as data: name, description, schema, flags,
module) to the registry, so no tool module loads before the model calls that
tool. :func:`load_all` imports every name in :data:`BUILTIN_MODULES` by string
(the generators and tests that need the live tool objects).
"""

from __future__ import annotations

import importlib

__all__ = ["BUILTIN_MODULES", "load_all", "load_catalog"]

# One module per line; helpers append their own names (keep the tuple sorted).
BUILTIN_MODULES: tuple[str, ...] = (
    "reasonix.tool.builtin.bash",
    "reasonix.tool.builtin.bash_output",
    "reasonix.tool.builtin.code_index",
    "reasonix.tool.builtin.delete_range",
    "reasonix.tool.builtin.delete_symbol",
    "reasonix.tool.builtin.edit_file",
    "reasonix.tool.builtin.glob",
    "reasonix.tool.builtin.grep",
    "reasonix.tool.builtin.kill_shell",
    "reasonix.tool.builtin.ls",
    "reasonix.tool.builtin.move_file",
    "reasonix.tool.builtin.multi_edit",
    "reasonix.tool.builtin.notebook_edit",
    "reasonix.tool.builtin.read_file",
    "reasonix.tool.builtin.todo_write",
    "reasonix.tool.builtin.wait",
    "reasonix.tool.builtin.web_fetch",
    "reasonix.tool.builtin.write_file",
)


def load_all() -> None:
    """Import every built-in tool module so each registers itself (idempotent)."""
    for name in BUILTIN_MODULES:
        importlib.import_module(name)


def load_catalog() -> None:
    """Make every built-in known to the registry from the generated catalog (no tool import).

    ``python -m reasonix.cli.gen_catalog`` writes :mod:`._catalog` from the tool
    classes; ``make lint`` and a drift test keep it equal to them.
    """
    from reasonix.tool import register_catalog

    from ._catalog import CATALOG

    register_catalog(CATALOG)
