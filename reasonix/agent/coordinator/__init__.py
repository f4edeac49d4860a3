"""Two models, one task: the Coordinator, Plan mode and Goal (spec §3.5, §3.7).

- :mod:`.routing` (with the table in :mod:`reasonix.agent.directives`): the pure,
  deterministic route of a turn;
- :mod:`.planner`: the dedicated planner (own model, own session, read-only tools);
- :mod:`.coordinator`: :class:`Coordinator`, the planner/executor Runner;
- :mod:`.plan`: plan parsing, storage and hand-off;
- :mod:`.planmode`: Plan mode and the ``exit_plan_mode`` tool;
- :mod:`.goal`: the Goal state machine and the ``update_goal`` tool;
- :mod:`.host`: :class:`Host`, the Runner frontends drive (routing + Plan mode +
  Goal around the executor alone or the Coordinator).

Only ``reasonix/boot`` assembles these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.lazy import lazy_exports

if TYPE_CHECKING:
    from reasonix.agent.coordinator.coordinator import Coordinator
    from reasonix.agent.coordinator.goal import Budgets, Goal, GoalBook, update_goal_tool
    from reasonix.agent.coordinator.host import Host
    from reasonix.agent.coordinator.plan import Plan, PlanBook
    from reasonix.agent.coordinator.planmode import PlanMode, exit_plan_mode_tool
    from reasonix.agent.coordinator.planner import Planner, PlannerSessions
    from reasonix.agent.coordinator.routing import Route, RouteDecision, TurnMeta, route

__all__ = [
    "Budgets",
    "Coordinator",
    "Goal",
    "GoalBook",
    "Host",
    "Plan",
    "PlanBook",
    "PlanMode",
    "Planner",
    "PlannerSessions",
    "Route",
    "RouteDecision",
    "TurnMeta",
    "exit_plan_mode_tool",
    "route",
    "update_goal_tool",
]

# Lazy re-exports: importing one submodule (e.g. for a constant) must not load
# the whole package before the first request (issue 20, tests/test_import_weight.py).
_LAZY = {
    "Budgets": "reasonix.agent.coordinator.goal",
    "Coordinator": "reasonix.agent.coordinator.coordinator",
    "Goal": "reasonix.agent.coordinator.goal",
    "GoalBook": "reasonix.agent.coordinator.goal",
    "Host": "reasonix.agent.coordinator.host",
    "Plan": "reasonix.agent.coordinator.plan",
    "PlanBook": "reasonix.agent.coordinator.plan",
    "PlanMode": "reasonix.agent.coordinator.planmode",
    "Planner": "reasonix.agent.coordinator.planner",
    "PlannerSessions": "reasonix.agent.coordinator.planner",
    "Route": "reasonix.agent.coordinator.routing",
    "RouteDecision": "reasonix.agent.coordinator.routing",
    "TurnMeta": "reasonix.agent.coordinator.routing",
    "exit_plan_mode_tool": "reasonix.agent.coordinator.planmode",
    "route": "reasonix.agent.coordinator.routing",
    "update_goal_tool": "reasonix.agent.coordinator.goal",
}


__getattr__ = lazy_exports(__name__, _LAZY)
