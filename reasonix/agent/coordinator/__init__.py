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

from .coordinator import Coordinator
from .goal import Budgets, Goal, GoalBook, update_goal_tool
from .host import Host
from .plan import Plan, PlanBook
from .planmode import PlanMode, exit_plan_mode_tool
from .planner import Planner, PlannerSessions
from .routing import Route, RouteDecision, TurnMeta, route

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
