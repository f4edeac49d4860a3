"""What the spawn primitive asks the composition root for: :class:`ChildRequest`.

The primitive (:mod:`.spawn`) resolves every decision — system prompt,
model, tool narrowing, write claim, MCP strictness, depth, lineage — and
hands boot this object through the :class:`~reasonix.agent.ports.ChildFactory`
port; boot turns it into ``RuntimeOptions(child=request)`` and builds the
child like any other runtime. Nothing here decides anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass

from .scope import Narrowing

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ChildRequest"]


@dataclass(frozen=True)
class ChildRequest:
    """One child runtime to build (fields are decisions already made)."""

    workspace: Path
    system: str  # the complete system prompt (SUB-18: nothing else is composed in)
    model: str  # a model reference ("" = the configured default)
    effort: str
    max_steps: int  # 0 = the configured budget
    narrowing: Narrowing
    writer: bool  # writers get complete_subtask (the completion contract)
    mcp_strict: bool  # use_capability refuses targets not proven read-only
    depth: int  # 1 for a child of the top-level runtime
    lineage: tuple[int, ...]  # scheduler reservations of the child and its ancestors
    parent_session: str
    parent_call: str
    ephemeral: bool  # the transcript is not kept
    continue_from: str  # a prior child transcript id to continue ("" = fresh)
    fork_from: str  # a prior child transcript id to copy, then continue the copy
    interactive: bool  # approvals reach a human through the parent
    profile: str  # the profile name ("" = the default prompt), for the transcript's meta
    shared: Any  # the tree's :class:`~.spawn.SessionDelegation`
    grant: Any = None  # its :class:`~.allowance.Grant`: boot points its budget check at it
