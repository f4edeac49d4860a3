"""What a run declares of memory before any memory code runs (data and cheap checks).

The four memory tools are in every parent request, but most runs never call
one and most projects have no facts to recall. So the names, the pager's
schema, the generated declarations of the tools (``_catalog.py``, written by
``python -m reasonix.cli.gen_catalog`` from the live tools) and the "are there
any facts at all?" test live here, and the stores, BM25 and the tools load on
first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MEMORY_TOOL_NAMES",
    "PAGE_CHARS",
    "SESSION_TOOL_RESULT",
    "TOOL_RESULT_SCHEMA",
    "global_root",
    "may_have_facts",
    "project_root",
    "root_may_have_facts",
    "tool_declarations",
]

MEMORY_TOOL_NAMES = ("forget", "history", "memory", "remember")
PAGE_CHARS = 8000
SESSION_TOOL_RESULT = "session:tool_result"
# The arguments of session:tool_result (as a tool or as a use_capability target).
TOOL_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_call_id": {"type": "string"},
        "page": {"type": "integer", "default": 1},
    },
    "required": ["tool_call_id"],
}


def global_root() -> Path:
    """``<state>/memory``."""
    from reasonix.config.paths import state_dir

    return state_dir() / "memory"


def project_root(workspace: Path) -> Path:
    """``<state>/projects/<slug>/memory`` for ``workspace``."""
    from reasonix.config.paths import project_slug, state_dir

    return state_dir() / "projects" / project_slug(workspace) / "memory"


def root_may_have_facts(root: Path) -> bool:
    """False when the store at ``root`` certainly holds no active fact (no fact file)."""
    if not root.is_dir() or root.is_symlink():
        return False
    return any(True for _ in root.glob("*.md"))


def may_have_facts(workspace: Path) -> bool:
    """False when neither the global nor the project store holds a fact file."""
    return root_may_have_facts(project_root(workspace)) or root_may_have_facts(global_root())


def tool_declarations() -> dict[str, dict[str, Any]]:
    """name -> the generated declaration of each memory tool."""
    from reasonix.agent.memory._catalog import CATALOG

    return CATALOG  # type: ignore[return-value]
