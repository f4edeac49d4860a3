"""Built-in tools; each module registers itself through register_builtin on import.

This package never imports its modules at import time (a parent never imports
its children, DESIGN §2). The entry point calls :func:`load_all`, which imports
every name in :data:`BUILTIN_MODULES` by string.
"""

from __future__ import annotations

import importlib

__all__ = ["BUILTIN_MODULES", "load_all"]

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
