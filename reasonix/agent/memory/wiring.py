"""Memory, history and the tool-result pager for a parent controller's run.

The composition root (``reasonix/boot/runtime.py``) builds the tool registry
*before* a session exists and keeps it for every session of the process
(``/new``), because the tools schema must be byte-identical across requests,
resumes and runs (the prefix-cache invariant). So nothing here holds a
session: the tools take ``current`` — a function returning the session in
use — and look it up on every call.

- :func:`controller_tools`: ``memory``, ``remember``, ``forget`` and ``history``
  (the names in :data:`MEMORY_TOOL_NAMES` count as built-ins for
  ``[tools].enabled``);
- :func:`tool_result_capability`: ``session``/``tool_result`` for the
  ``use_capability`` proxy (CTX-5);
- :func:`memory_extra`: the :class:`~reasonix.tool.ToolContext` extras the
  memory writers read (the posture, and a fresh human confirmation when
  someone can answer one).

Sub-agents get none of this (SUB-19, MEM-13): their setup leaves it out, or
passes ``subagent=True`` to :func:`memory_extra`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reasonix.agent.memory.declared import (
    MEMORY_TOOL_NAMES,
    PAGE_CHARS,
    TOOL_RESULT_SCHEMA,
    may_have_facts,
    tool_declarations,
)
from reasonix.errors import ToolError
from reasonix.permission.modes import Mode, parse_mode
from reasonix.tool import Tool, ToolContext

if TYPE_CHECKING:  # the stores, BM25, the tools and the approval types load on first use
    from typing import Any

    from reasonix.agent.memory.catalog import Memory
    from reasonix.permission.approval import ApprovalRequest
    from reasonix.plugin.mcp.tools import LocalCapability

__all__ = [
    "MEMORY_TOOL_NAMES",
    "DeferredRecall",
    "SessionLike",
    "controller_tools",
    "deferred_controller_tools",
    "memory_approval",
    "memory_extra",
    "tool_result_capability",
]


class SessionLike(Protocol):
    """What the tools read of the live session (:class:`reasonix.agent.session.Session`)."""

    @property
    def id(self) -> str:
        """The session id (the transcript's file stem)."""
        ...

    def records(self) -> Sequence[Mapping[str, Any]]:
        """Every transcript record in order."""
        ...


def controller_tools(
    memory: Memory, workspace: Path, current: Callable[[], SessionLike], enabled: Sequence[str] = ()
) -> list[Tool]:
    """The memory and history tools of the parent controller, sorted by name.

    ``enabled`` is ``[tools].enabled``: empty means all of them, otherwise
    only the names it lists.
    """
    from reasonix.agent.memory.history import HistorySource, history_tool
    from reasonix.agent.memory.tools import memory_tools

    def live() -> tuple[str, Sequence[Mapping[str, Any]]]:
        session = current()
        return session.id, session.records()

    tools: list[Tool] = [*memory_tools(memory)]
    tools.append(history_tool(HistorySource.for_workspace(workspace, current=live)))
    return sorted((t for t in tools if not enabled or t.name in enabled), key=lambda t: t.name)


def tool_result_capability(current: Callable[[], SessionLike]) -> LocalCapability:
    """``use_capability`` server ``session``, tool ``tool_result``: page a full tool result."""

    from reasonix.plugin.mcp.tools import LocalCapability

    def run(args: dict[str, Any], ctx: ToolContext) -> str:
        from reasonix.agent.memory.history import tool_result_page

        call_id = str(args.get("tool_call_id") or "")
        page = args.get("page", 1)
        if not call_id or not isinstance(page, int) or isinstance(page, bool):
            raise ToolError("arguments: tool_call_id (a string) and page (an integer) are needed")
        return tool_result_page(current().records(), call_id, page)

    return LocalCapability(
        server="session",
        tool="tool_result",
        description=(
            "the full local text of an earlier tool result that was shortened for the context, "
            f"{PAGE_CHARS} characters per page; arguments "
            '{"tool_call_id": "<id of the call>", "page": 1}'
        ),
        run=run,
        input_schema=dict(TOOL_RESULT_SCHEMA),
    )


def memory_approval(
    approver: Callable[[ApprovalRequest], Any],
) -> Callable[[str, str], bool]:
    """``approve_memory`` over a Gate approver (the chat's approval prompt).

    Each question is a fresh allow-once-or-deny request: a memory write is
    never remembered as a rule. The request carries no arguments, so a
    notification sent outside the terminal names only the tool (MEM-14).
    """

    def approve(tool: str, question: str) -> bool:
        from reasonix.permission.approval import ApprovalChoice, ApprovalRequest

        head, _, why = question.partition("\n")
        reason = why.strip().removeprefix("(reason: ").removesuffix(")")
        request = ApprovalRequest(
            tool_name=tool,
            summary=f"{tool}: {head}",
            args={},
            choices=(ApprovalChoice.ONCE, ApprovalChoice.DENY),
            suggested_rule="",
            reason=reason,
            fresh=True,
        )
        return approver(request) is ApprovalChoice.ONCE

    return approve


def memory_extra(
    mode: Mode | str,
    approver: Callable[[ApprovalRequest], Any] | None,
    *,
    subagent: bool = False,
) -> dict[str, Any]:
    """The ToolContext extras of the memory writers.

    ``approver`` None means headless: nobody can confirm, so only the bounded
    create-only project/reference save of MEM-9 goes through.
    """
    extra: dict[str, Any] = {"permission_mode": parse_mode(mode), "subagent": subagent}
    if approver is not None and not subagent:
        extra["approve_memory"] = memory_approval(approver)
    return extra


def deferred_controller_tools(
    memory: Callable[[], Memory],
    workspace: Path,
    current: Callable[[], SessionLike],
    enabled: Sequence[str] = (),
) -> list[Tool]:
    """:func:`controller_tools` as declarations: the stores and tools load on first use.

    The declarations come from ``_catalog.py`` (generated from the live tools;
    ``make lint`` checks it), so the request is the same byte for byte.
    """
    from reasonix.tool import DeferredTool

    made: dict[str, Tool] = {}
    lock = threading.Lock()

    def maker(name: str) -> Callable[[], Tool]:
        def make() -> Tool:
            with lock:
                if not made:
                    made.update((t.name, t) for t in controller_tools(memory(), workspace, current))
                return made[name]

        return make

    out: list[Tool] = []
    for name, entry in sorted(tool_declarations().items()):
        if enabled and name not in enabled:
            continue
        out.append(
            DeferredTool(
                name,
                entry["description"],
                entry["parameters"],
                maker(name),
                read_only=bool(entry["read_only"]),
                metadata=entry.get("metadata") or {},
                hints=bool(entry.get("reads_only")),
            )
        )
    return out


class DeferredRecall:
    """Auto-recall (MEM-5) that loads the stores and BM25 only when a fact file exists."""

    def __init__(self, memory: Callable[[], Memory], workspace: Path) -> None:
        self._memory, self._workspace = memory, workspace

    def recall_suffix(self, user_text: str) -> str:
        """See :func:`reasonix.agent.memory.recall.recall_suffix` ("" with no facts at all)."""
        try:
            if not may_have_facts(self._workspace):
                return ""
        except OSError:
            return ""
        from reasonix.agent.memory.recall import Recaller

        return Recaller(self._memory()).recall_suffix(user_text)
