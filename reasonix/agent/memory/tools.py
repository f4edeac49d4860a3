"""The ``memory``, ``remember`` and ``forget`` tools (MEM-3, MEM-4, MEM-9…MEM-12).

``memory`` is read-only. ``remember`` and ``forget`` decide for themselves
with :func:`~reasonix.agent.memory.policy.decide_memory_write`; they carry
``metadata["self_gated"] = True`` so the permission gate applies explicit
allow/ask/deny rules but not its generic writer fallback. The surface comes
from the :class:`~reasonix.tool.ToolContext`:

- ``ctx.headless`` — no human can answer (headless run, print mode);
- ``ctx.extra["permission_mode"]`` — a :class:`~reasonix.permission.Mode` or its name;
- ``ctx.extra["subagent"]`` — True inside a sub-agent (always denied);
- ``ctx.extra["memory_owner"]`` — False when this surface does not own the store;
- ``ctx.extra["memory_rule"]`` — an explicit rule decision for the tool, if any;
- ``ctx.extra["approve_memory"]`` — ``(tool_name, question) -> bool``, a fresh
  human confirmation (interactive only; approval notifications sent outside
  the TUI must carry only the tool name, MEM-14).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.facts import FACT_TYPES, Fact, FactError
from reasonix.agent.memory.policy import WriteSurface, decide_memory_write
from reasonix.errors import PermissionDenied
from reasonix.permission.modes import Decision, Mode, parse_mode
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "describe_fact",
    "forget_tool",
    "memory_tool",
    "memory_tools",
    "remember_tool",
    "surface_of",
]

_SNIPPET = 300


def describe_fact(fact: Fact, *, full: bool = False) -> str:
    """One fact as the tools and the CLI show it."""
    body = fact.content if full else " ".join(fact.content.split())[:_SNIPPET]
    title = f" {fact.title}:" if fact.title else ""
    return (
        f"{fact.id} (rev {fact.revision}, {fact.scope}/{fact.type}, "
        f"updated {fact.updated_at}){title} {body}"
    )


def surface_of(ctx: ToolContext) -> WriteSurface:
    """The write surface described by a tool context (see module docstring)."""
    extra = ctx.extra
    raw_mode = extra.get("permission_mode", Mode.ASK)
    try:
        mode = raw_mode if isinstance(raw_mode, Mode) else parse_mode(str(raw_mode))
    except Exception:  # noqa: BLE001 - an unknown posture is treated as the strictest
        mode = Mode.ASK
    rule = extra.get("memory_rule")
    return WriteSurface(
        interactive=not ctx.headless and callable(extra.get("approve_memory")),
        mode=mode,
        subagent=bool(extra.get("subagent", False)),
        owns_store=bool(extra.get("memory_owner", True)),
        explicit=rule if isinstance(rule, Decision) else None,
    )


def _gate(ctx: ToolContext, tool: str, op: str, question: str, **kw: Any) -> None:
    surface = surface_of(ctx)
    decision, why = decide_memory_write(op, surface=surface, **kw)
    if decision is Decision.ALLOW:
        return
    if decision is Decision.ASK:
        approve = ctx.extra.get("approve_memory")
        if callable(approve) and approve(tool, f"{question}\n(reason: {why})"):
            return
        raise PermissionDenied(f"the user did not approve ({why})")  # the tool layer names it
    raise PermissionDenied(f"denied — {why}")


def memory_tool(memory: Memory) -> FunctionTool:
    """Read-only search/list/read over active facts (archived facts never appear)."""

    def run(args: dict[str, Any], ctx: ToolContext) -> str:
        op, scope = args["operation"], args["scope"]
        if op == "read":
            fact_id = str(args.get("id") or "")
            if not fact_id:
                raise FactError("read needs an id")
            return describe_fact(memory.find(fact_id)[1], full=True)
        if op == "search":
            query = str(args.get("query") or "")
            if not query.strip():
                raise FactError("search needs a query")
            hits = memory.search(query, scope=scope, limit=int(args["limit"]))
            lines = [describe_fact(h.fact) for h in hits]
        else:
            lines = [describe_fact(f) for f in memory.facts(scope)][: int(args["limit"])]
        return "\n".join(lines) if lines else "(no facts)"

    return FunctionTool(
        name="memory",
        description=(
            "Search, list or read remembered facts (project and global memory). "
            "Use operation=search with a query, list, or read with an id."
        ),
        schema={
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": ["search", "list", "read"]},
                "query": {"type": "string"},
                "id": {"type": "string"},
                "scope": {"type": "string", "enum": ["all", "project", "global"], "default": "all"},
                "limit": {"type": "integer", "default": 10},
            },
            "required": ["operation"],
        },
        fn=run,
        read_only=True,
    )


def remember_tool(memory: Memory) -> FunctionTool:
    """Create a fact, or update one by id (a new revision)."""

    def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult | str:
        content, title = str(args["content"]), str(args.get("title") or "")
        fact_id = str(args.get("id") or "")
        if fact_id:
            store, cur = memory.find(fact_id)
            new_type = str(args.get("type") or cur.type)
            _gate(
                ctx,
                "remember",
                "update",
                f"Update memory {fact_id}?",
                scope=store.scope,
                fact_type=new_type,
                content=content,
                duplicate=False,
            )
            expected = args.get("expected_revision")
            fact = store.update(
                fact_id,
                content,
                title=title or None,
                type=new_type,
                expected_revision=int(expected) if expected is not None else None,
            )
            return f"updated {describe_fact(fact)}"
        scope, fact_type = str(args["scope"]), str(args.get("type") or "project")
        dup = memory.duplicate_of(content, title, scope)
        _gate(
            ctx,
            "remember",
            "create",
            f"Remember a new {scope} {fact_type} fact?",
            scope=scope,
            fact_type=fact_type,
            content=content,
            duplicate=dup is not None,
        )
        fact = memory.store(scope).create(content, type=fact_type, title=title)
        return f"remembered {describe_fact(fact)}"

    return FunctionTool(
        name="remember",
        description=(
            "Save a durable fact for future sessions (or update one by id). Default scope is "
            "the project; type is user, feedback, project or reference. Never store secrets."
        ),
        schema={
            "type": "object",
            "properties": {
                "content": {"type": "string"},
                "title": {"type": "string"},
                "type": {"type": "string", "enum": list(FACT_TYPES)},
                "scope": {"type": "string", "enum": ["project", "global"], "default": "project"},
                "id": {"type": "string"},
                "expected_revision": {"type": "integer"},
            },
            "required": ["content"],
        },
        fn=run,
        metadata={"self_gated": True},
    )


def forget_tool(memory: Memory) -> FunctionTool:
    """Archive an active fact (always needs a human under Ask; denied headless)."""

    def run(args: dict[str, Any], ctx: ToolContext) -> str:
        fact_id = str(args["id"])
        store, cur = memory.find(fact_id)
        _gate(
            ctx,
            "forget",
            "forget",
            f"Forget memory {fact_id}?",
            scope=store.scope,
            fact_type=cur.type,
            content=cur.content,
            duplicate=False,
        )
        store.forget(fact_id)
        return f"forgot {fact_id} (archived; `reasonix memory archived` lists it)"

    return FunctionTool(
        name="forget",
        description="Forget (archive) a remembered fact by id.",
        schema={
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
        },
        fn=run,
        metadata={"self_gated": True},
    )


def memory_tools(memory: Memory, *, writable: bool = True) -> list[FunctionTool]:
    """The memory tools for a run; sub-agents pass ``writable=False`` (read-only ``memory``)."""
    tools = [memory_tool(memory)]
    if writable:
        tools += [remember_tool(memory), forget_tool(memory)]
    return tools
