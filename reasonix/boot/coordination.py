"""Wiring the host Runner: Plan mode, Goal and — with two models — the Coordinator.

The Coordinator exists only when ``[agent] planner_model`` resolves to a
model other than the executor's and ``--ablate planner`` is not given
(COORD-1); otherwise the executor Agent runs alone. Either way the runtime's
Runner is the :class:`~reasonix.agent.coordinator.Host`, which adds routing,
Plan mode and Goal around it.

The host tools (``exit_plan_mode``, ``update_goal``) are in the executor's
registry from the start, so the tool list never changes in a session; they
find the live host through a holder, as the memory tools find the session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.coordinator.goal import Budgets, GoalBook, update_goal_tool
from reasonix.agent.coordinator.host import Host
from reasonix.agent.coordinator.plan import PlanBook
from reasonix.agent.coordinator.planmode import PlanMode, exit_plan_mode_tool
from reasonix.agent.coordinator.routing import Route, TurnMeta
from reasonix.agent.execute import EventApprover
from reasonix.agent.loop import Agent
from reasonix.agent.prompt import environment_summary
from reasonix.agent.session import Session
from reasonix.config.model import Config, ResolvedModel
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass
from reasonix.permission.modes import Decision
from reasonix.tool import Registry, Tool, ToolContext

from .options import RuntimeOptions
from .parts import budget_for, build_provider, price_for_model

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.coordinator.coordinator import Coordinator

__all__ = [
    "HostHolder",
    "PlannerParts",
    "build_host",
    "first_turn",
    "host_tools",
    "planner_parts",
    "planner_resolved",
]


class HostHolder:
    """The live host of a runtime, for the host tools built before it exists."""

    def __init__(self) -> None:
        self.host: Host | None = None

    def plan_mode(self) -> PlanMode | None:
        """The live session's Plan mode."""
        return self.host.plan_mode if self.host is not None else None

    def goals(self) -> GoalBook | None:
        """The live session's goal book."""
        return self.host.goals if self.host is not None else None


def host_tools(holder: HostHolder, enabled: Sequence[str] = ()) -> list[Tool]:
    """``exit_plan_mode`` and ``update_goal`` over the live host.

    ``enabled`` is ``[tools].enabled``: empty means both, otherwise the names
    it lists (a goal then needs ``update_goal`` to be listed).
    """
    tools = [exit_plan_mode_tool(holder.plan_mode), update_goal_tool(holder.goals)]
    return [t for t in tools if not enabled or t.name in enabled]


def _planner_capability(
    runtimes: Callable[[], dict[str, Any]], gate: Any, search: Any = None
) -> Tool:
    """The planner's frontend of the ``use_capability`` proxy (COORD-15, PERM-14).

    Its allow filter lets through only authorized, non-destructive targets, so
    every call it dispatches is gated like a read (no ``readOnlyHint`` needed).
    ``search`` is the manager's tool search when MCP tools are deferred (issue 37).
    """
    from reasonix.plugin.mcp.tools import UseCapabilityTool

    class PlannerCapability(UseCapabilityTool):
        def reads_only(self, args: dict[str, Any]) -> bool:
            return True

    return PlannerCapability(runtimes, allow=_planner_allow(gate), search=search)


def _planner_allow(gate: Any) -> Callable[[str, dict[str, Any]], str | None]:
    def allow(target: str, spec: dict[str, Any]) -> str | None:
        hints = spec.get("annotations") if isinstance(spec.get("annotations"), dict) else {}
        if isinstance(hints, dict) and hints.get("destructiveHint") is True:
            return "destructive tools are left to the executor"
        if gate.policy.evaluate(target, True, {}).decision is Decision.DENY:
            return "not authorized by the permission policy"
        return None

    return allow


@dataclass
class PlannerParts:
    """What the planner needs that stays the same for the whole runtime."""

    resolved: ResolvedModel
    provider: Any
    registry: Registry
    budget: Any
    system: str
    price: dict[str, Any] | None


def planner_resolved(
    cfg: Config, executor: ResolvedModel, ablate: list[str]
) -> ResolvedModel | None:
    """The planner model when a dedicated planner applies, else None (COORD-1)."""
    ref = cfg.agent.planner_model.strip()
    if not ref or "planner" in ablate or "all" in ablate:
        return None
    try:
        resolved = cfg.resolve_model(ref)
    except ConfigError as err:
        where = cfg.sources.get("agent.planner_model", "")
        file = where if where not in ("", "default", "flag") else None
        raise ConfigError(err.detail, file=file, key="agent.planner_model") from None
    return resolved if resolved.ref != executor.ref else None


def planner_parts(
    cfg: Config,
    resolved: ResolvedModel,
    registry: Registry,
    gate: Any,
    mcp: Any,
    workspace: Path,
    add_dirs: list[Path],
) -> PlannerParts:
    """The planner's provider and its read-only research registry (COORD-15)."""
    from reasonix.agent.coordinator.planner import PLANNER_PROMPT, RESEARCH_TOOLS

    reg = Registry()
    for name in RESEARCH_TOOLS:
        tool = registry.get(name)
        if tool is not None:
            reg.add(tool)
    runtimes: Callable[[], dict[str, Any]] = (lambda: mcp.runtimes) if mcp is not None else dict
    search = mcp.search_index if mcp is not None else None
    reg.add(_planner_capability(runtimes, gate, search))
    system = PLANNER_PROMPT + "\n\n" + environment_summary(workspace, add_dirs)
    return PlannerParts(
        resolved, build_provider(resolved), reg, budget_for(resolved), system,
        price_for_model(resolved),
    )  # fmt: skip


def first_turn(options: RuntimeOptions) -> TurnMeta | None:
    """The trusted metadata of the first turn, from the run flags."""
    if not (options.plan or options.goal is not None or options.approve_plan):
        return None
    flag = Route(options.plan) if options.plan else None
    return TurnMeta(flag_route=flag, goal=options.goal, approve_plan=options.approve_plan)


def build_host(
    *,
    agent: Agent,
    session: Session,
    workspace: Path,
    cfg: Config,
    gate: Any,
    approver: EventApprover,
    interactive: bool,
    tool_ctx: ToolContext,
    instructions: str,
    planner: PlannerParts | None,
    price: dict[str, Any] | None,
    first: TurnMeta | None,
    routing: bool = True,
) -> Host:
    """The host Runner over ``agent`` (and a Coordinator when a planner is configured)."""

    def current() -> Session:
        return session

    plans = PlanBook(current, workspace)
    human = approver if interactive else None
    plan_mode = PlanMode(gate, plans, human)
    coordinator: Coordinator | None = None
    prices: dict[str, dict[str, Any] | None] = {"executor": price}
    if planner is not None:
        from reasonix.agent.coordinator.coordinator import Coordinator
        from reasonix.agent.coordinator.planner import Planner, PlannerSessions

        meta = {"system": planner.system, "model": planner.resolved.ref}
        sessions = PlannerSessions(workspace, current, meta)
        budget = planner.budget
        p = Planner(
            planner.provider, planner.registry, sessions,
            model=planner.resolved.model,
            tool_ctx=tool_ctx.replace(extra=dict(tool_ctx.extra)),
            telemetry=agent.telemetry, gate=gate, approver=approver,
            temperature=cfg.agent.temperature, effort=cfg.agent.effort,
            instructions=instructions, max_tokens=lambda: budget.max_tokens(lambda: 0),
        )  # fmt: skip
        coordinator = Coordinator(agent, p, plans, interactive=interactive)
        prices["planner"] = planner.price
    a = cfg.agent
    budgets = Budgets(
        a.goal_token_budget, a.max_steps, a.task_time_budget_minutes, a.goal_cost_budget
    )
    return Host(
        agent=agent, coordinator=coordinator, plans=plans, goals=GoalBook(current),
        plan_mode=plan_mode, budgets=budgets, interactive=interactive, prices=prices,
        first=first, routing=routing,
    )  # fmt: skip
