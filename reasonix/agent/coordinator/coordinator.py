"""The Coordinator: a Runner over two models in two sessions (spec §3.5, COORD-1…15).

The executor is the ordinary :class:`~reasonix.agent.loop.Agent` over the
main session; the dedicated :class:`~.planner.Planner` has its own model and
its own append-only session. The two transcripts never mix — they are linked
by ids (a ``planner_link`` record in the executor's, ``executor_session`` in
the planner's meta) — so each keeps a byte-stable prompt prefix.

Per route (decided by :func:`~.routing.route`):

- ``executor``: the executor alone;
- ``plan_then_execute`` / ``goal_start``: plan, then hand the plan to the
  executor in the same user turn (COORD-9); a planner that gives no plan falls
  back to the executor with the pristine task (COORD-8);
- ``plan_for_approval``: plan, then stop at the approval boundary the host
  enforces (COORD-10): interactive, an ``ApprovalRequested`` event; headless,
  the plan is saved and the turn ends ``awaiting_approval``;
- ``plan_only``: plan, save, end the turn (COORD-11).

Under plan-for-approval and plan-only a planner failure ends with an error and
never reaches the executor (COORD-12).
"""

from __future__ import annotations

from collections.abc import Iterator

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, PlannerError

from ..events import Done, Error, Event, Notice, Phase
from ..loop import Agent
from .plan import Plan, PlanBook, ask_approval, handoff_text
from .planner import Planner
from .routing import Route, RouteDecision, TurnMeta, route

__all__ = ["Coordinator"]

_FALLBACK_ROUTES = (Route.PLAN_THEN_EXECUTE, Route.GOAL_START)


class Coordinator:
    """Planner + executor behind the Runner protocol."""

    def __init__(
        self, executor: Agent, planner: Planner, plans: PlanBook, *, interactive: bool
    ) -> None:
        self.executor, self.planner, self.plans = executor, planner, plans
        self.interactive = interactive

    def run(self, user_input: str, cancel: Cancel) -> Iterator[Event]:
        """Route one user turn and run it (the host adds Goal and Plan mode around this)."""
        waiting = self.plans.approvable()
        decision = route(user_input, TurnMeta(plan_status=waiting.status if waiting else ""))
        yield Phase("route", decision.route.value, decision.reason)
        if decision.action == "plan_approve" and waiting is not None:
            yield from self.handoff(waiting, cancel, "")
        elif decision.action:
            yield Done("", "complete", 0, self.executor.telemetry.total)
        else:
            yield from self.execute(decision, cancel)

    def _done(self, text: str, reason: str) -> Done:
        return Done(text, reason, 0, self.executor.telemetry.total)

    def execute(self, decision: RouteDecision, cancel: Cancel) -> Iterator[Event]:
        """Run a decided route; the last event is Done or Error."""
        r = decision.route
        if r is Route.EXECUTOR:
            yield Phase("executor", r.value, decision.reason)
            yield from self.executor.run(decision.task, cancel)
            return
        yield Phase("planner", r.value, decision.reason)
        if not self.executor.session.title:  # listings and `-r` find the task, not the plan
            self.executor.session.set_title(decision.task)
        try:
            plan = yield from self.planner.plan(decision.task, r.value, cancel)
        except Cancelled:
            yield Notice("cancelled", "the turn was cancelled while planning")
            yield self._done("", "cancelled")
            return
        if plan is None:
            why = self.planner.last_failure or "no_plan"
            if r in _FALLBACK_ROUTES:
                yield Phase("executor", r.value, f"planner_fallback_{why}")
                yield Notice("planner", "the planner gave no plan; the executor takes the task")
                yield from self.executor.run(decision.task, cancel)  # the pristine task
                return
            yield Phase("plan", r.value, f"planner_{why}", status="failed")
            message = (
                f"the planner gave no plan ({why}); nothing was executed "
                f"({r.value} never falls back to execution)"
            )
            yield Error(PlannerError(message), message)
            return
        plan.status = "saved" if r is Route.PLAN_ONLY else "pending"
        path = self.plans.save(plan)
        yield Phase("plan", r.value, decision.reason, plan.id, plan.status)
        if r is Route.PLAN_ONLY:
            yield Notice("plan", f"plan {plan.id} saved to {path}")
            yield self._done(plan.body, "plan_saved")
            return
        if r is Route.PLAN_FOR_APPROVAL:
            approved = yield from ask_approval(plan, self.interactive, cancel)
            if not approved:
                yield Notice("plan", waiting_note(plan.id, str(path), approved is None))
                yield Phase("plan", r.value, "awaiting_approval", plan.id, plan.status)
                yield self._done(plan.body, "awaiting_approval")
                return
        yield from self.handoff(plan, cancel, "")

    def handoff(self, plan: Plan, cancel: Cancel, extra: str) -> Iterator[Event]:
        """Hand an approved (or plan-first) plan to the executor in this turn (COORD-9)."""
        self.plans.set_status(plan, "approved")
        yield Phase("executor", plan.route, "handoff", plan.id, "approved")
        yield from self.executor.run(handoff_text(plan, extra=extra), cancel)

    def close(self) -> None:
        """Release the planner session."""
        self.planner.sessions.close()


def waiting_note(plan_id: str, path: str, headless: bool) -> str:
    """What to tell the user about a plan that waits for approval."""
    if headless:
        return (
            f"plan {plan_id} saved to {path}; it waits for approval: continue with "
            '`reasonix run -c --approve-plan` (or `reasonix run -c "go ahead"`)'
        )
    return f'plan {plan_id} saved to {path}; say "go ahead" to run it, or tell me what to change'
