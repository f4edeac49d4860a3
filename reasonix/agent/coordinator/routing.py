"""Deterministic routing: pristine user text + trusted turn metadata -> a route (D11).

:func:`route` is pure: no model is asked, no I/O happens, and nothing is
inferred from how long or hard a task looks (COORD-2, COORD-3). The default
is the executor alone. The planner runs only for an explicit trigger:

- a slash command at the start of the text: ``/plan TASK``,
  ``/plan-approve TASK``, ``/plan-only TASK``, ``/goal OBJECTIVE``;
- a run flag carried in :class:`TurnMeta` (``--plan``, ``--plan-approve``,
  ``--plan-only``, ``--goal``);
- a directive from the one bilingual table in :mod:`reasonix.agent.directives`
  ("plan first", "wait for my approval" and their Chinese forms …), at a
  clause boundary and outside quotes (COORD-13).

The decision carries a reason code for the phase log; it never carries the
user's words into logs (COORD-4) — ``task`` is for the planner/executor only.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from ..directives import find_directive, is_approval, is_rejection

__all__ = ["Route", "RouteDecision", "TurnMeta", "route"]


class Route(str, enum.Enum):
    """Where one user turn goes."""

    EXECUTOR = "executor"
    PLAN_THEN_EXECUTE = "plan_then_execute"
    PLAN_FOR_APPROVAL = "plan_for_approval"
    PLAN_ONLY = "plan_only"
    GOAL_START = "goal_start"

    def __str__(self) -> str:
        return self.value


_PLAN_ROUTES = (Route.PLAN_THEN_EXECUTE, Route.PLAN_FOR_APPROVAL, Route.PLAN_ONLY)
_STRENGTH = {Route.PLAN_THEN_EXECUTE: 1, Route.PLAN_FOR_APPROVAL: 2, Route.PLAN_ONLY: 3}


# The two records of a turn's route are named tuples, not dataclasses: every run's
# first turn makes them, and a tuple class is a tenth of a dataclass's cost to build.
class TurnMeta(NamedTuple):
    """What the host knows about a turn besides its text (trusted, never model output).

    ``flag_route``: a run flag (``--plan`` …); ``goal``: ``--goal OBJECTIVE``;
    ``approve_plan``: ``--approve-plan``; ``synthetic``: a turn the host made
    (goal continuation); ``plan_status``: the status of a plan that could be
    approved now (``pending`` waits for approval, ``saved`` came from plan-only).
    """

    flag_route: Route | None = None
    goal: str | None = None
    approve_plan: bool = False
    synthetic: bool = False
    plan_status: str = ""


class RouteDecision(NamedTuple):
    """A route with its reason code, the text to work on and an optional host action.

    ``action`` names what the host does instead of (or before) a model turn:
    ``plan_mode`` (enter Plan mode), ``plan_approve``, ``plan_discard``,
    ``goal_status`` / ``goal_pause`` / ``goal_resume`` / ``goal_clear``,
    ``usage`` (a trigger without its task).
    """

    route: Route
    reason: str
    task: str
    action: str = ""


_SLASH = {
    "/plan": (Route.PLAN_THEN_EXECUTE, "slash_plan"),
    "/plan-approve": (Route.PLAN_FOR_APPROVAL, "slash_plan_approve"),
    "/plan-only": (Route.PLAN_ONLY, "slash_plan_only"),
    "/goal": (Route.GOAL_START, "slash_goal"),
}
_GOAL_ACTIONS = {"status": "goal_status", "pause": "goal_pause", "resume": "goal_resume",
                 "clear": "goal_clear", "": "goal_status"}  # fmt: skip
_FLAG_REASONS = {
    Route.PLAN_THEN_EXECUTE: "flag_plan",
    Route.PLAN_FOR_APPROVAL: "flag_plan_approve",
    Route.PLAN_ONLY: "flag_plan_only",
}
_DIRECTIVE_REASONS = {
    Route.PLAN_THEN_EXECUTE: "directive_plan_first",
    Route.PLAN_FOR_APPROVAL: "directive_wait_for_approval",
    Route.PLAN_ONLY: "directive_plan_only",
}


def _slash(text: str) -> RouteDecision | None:
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head = stripped.split(None, 1)[0]
    if head not in _SLASH:
        return None
    rest = stripped[len(head) :].strip()
    target, reason = _SLASH[head]
    if head == "/goal":
        action = _GOAL_ACTIONS.get(rest.lower())
        if action is not None:
            return RouteDecision(Route.EXECUTOR, reason, "", action)
        return RouteDecision(target, reason, rest)
    if not rest:
        if head == "/plan":  # `/plan` alone enters Plan mode (COORD-5, PERM-15)
            return RouteDecision(Route.EXECUTOR, "slash_plan_mode", "", "plan_mode")
        return RouteDecision(Route.EXECUTOR, "slash_missing_task", "", "usage")
    return RouteDecision(target, reason, rest)


def route(text: str, meta: TurnMeta | None = None) -> RouteDecision:
    """The route of one turn (pure; see the module docstring for the rules)."""
    meta = meta or TurnMeta()
    if meta.synthetic:
        return RouteDecision(Route.EXECUTOR, "synthetic", text)
    slash = _slash(text)
    if slash is not None:
        return slash
    if meta.goal is not None:
        objective = meta.goal.strip()
        extra = text.strip()
        task = objective + ("\n\n" + extra if extra and extra != objective else "")
        return RouteDecision(Route.GOAL_START, "flag_goal", task or extra)
    if meta.plan_status:
        if meta.approve_plan or is_approval(text):
            reason = "flag_approve_plan" if meta.approve_plan else "plan_approved"
            return RouteDecision(Route.EXECUTOR, reason, text, "plan_approve")
        if is_rejection(text):
            return RouteDecision(Route.EXECUTOR, "plan_rejected", text, "plan_discard")
        if meta.plan_status == "pending" and meta.flag_route is None:
            # Anything else answers the waiting plan with feedback: plan again, still
            # waiting for approval (the boundary holds until a human approves).
            return RouteDecision(Route.PLAN_FOR_APPROVAL, "plan_revision", text)
    elif meta.approve_plan:
        return RouteDecision(Route.EXECUTOR, "no_pending_plan", text, "usage")
    chosen: list[tuple[Route, str]] = []
    flag = meta.flag_route
    if flag is not None and flag in _PLAN_ROUTES:
        chosen.append((flag, _FLAG_REASONS[flag]))
    directive = find_directive(text)
    if directive is not None:
        r = Route(directive.route)
        chosen.append((r, _DIRECTIVE_REASONS[r]))
    if chosen:
        r, reason = max(chosen, key=lambda c: _STRENGTH[c[0]])
        return RouteDecision(r, reason, text)
    return RouteDecision(Route.EXECUTOR, "default", text)
