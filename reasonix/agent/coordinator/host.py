"""The host Runner: routing, Plan mode and Goal around the executor or the Coordinator.

Frontends drive one :class:`Host` (``Runtime.runner``). Each ``run`` call is
one user turn as the frontend sees it: the host routes it (pure
:func:`~.routing.route` over the pristine text plus trusted metadata — run
flags, a plan waiting for approval), then runs it on the executor alone (one
model) or on the :class:`~.coordinator.Coordinator` (a dedicated planner).
Host actions never reach a model: ``/plan`` alone enters Plan mode, an
approval or rejection answers a waiting plan, ``/goal status|pause|resume|
clear`` manage the goal.

With a live goal, one ``run`` keeps going: after each executor turn the host
appends a small synthetic continuation turn until the model reports the goal
complete or blocked, the user stops it, an error ends it, or an explicitly
configured budget is spent (PERM-17…19). Everything the host decides is
written to the executor's transcript first, so SIGKILL and ``run -c`` resume it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import ReasonixError, UsageError
from reasonix.provider.types import Usage

from ..events import Done, Error, Event, Notice, Phase, StepStart, ToolEnd, ToolStart, UsageReport
from ..loop import Agent
from ..spend import combine
from ..telemetry import estimate_cost
from .goal import REPLAN_AFTER, Budgets, Goal, GoalBook, counts_as_evidence, evidence_key
from .plan import Plan, PlanBook, approved_text, ask_approval, handoff_text
from .planmode import PlanMode
from .routing import Route, RouteDecision, TurnMeta, route

if TYPE_CHECKING:  # the Coordinator (two models) is imported only when one is built
    from typing import Any

    from .coordinator import Coordinator

__all__ = ["Host"]

_USAGE = {
    "slash_missing_task": "this command needs a task: /plan-approve TASK, /plan-only TASK",
    "no_pending_plan": "--approve-plan: no plan waits for approval in this session",
}
_REPLAN_WHY = {
    "no_new_evidence": "the last turns brought no new evidence",
    "repeated_failures": "the same failures keep repeating",
    "todo_stall": "the todo list has stopped moving",
}


def _split(events: Iterator[Event]) -> Generator[Event, None, Event]:
    """Re-yield a turn's events except its last Done/Error, which is returned."""
    last: Event | None = None
    for event in events:
        if isinstance(event, (Done, Error)):
            last = event
        else:
            yield event
    if last is None:
        err = ReasonixError("the turn ended without a result")
        return Error(err, str(err))
    return last


def goal_start_text(goal: Goal) -> str:
    """The executor's message that opens a goal."""
    return (
        f'<goal id="{goal.id}">\n{goal.objective}\n</goal>\n'
        "Work toward this goal over as many turns as it needs; the host continues you after "
        'each answer. When it is fully done and verified, call update_goal with status "complete"; '
        'if something outside your control blocks it, call update_goal with status "blocked" and '
        "the reason."
    )


def continue_text(goal: Goal, replan: str) -> str:
    """A synthetic continuation turn (small, so each request stays a cheap extension)."""
    if replan:
        return (
            f'<goal-replan reason="{replan}">{_REPLAN_WHY[replan]}. Step back, re-plan the '
            "remaining work toward the goal with what you know now, then continue. Call "
            "update_goal when the goal is complete or blocked.</goal-replan>"
        )
    return (
        f'<goal-continue turn="{goal.stats.turns + 1}">Continue toward the goal. Call '
        'update_goal with "complete" when it is done or "blocked" with the reason.'
        "</goal-continue>"
    )


class _TurnWatch:
    """What one turn did, from its events: requests, tokens, cost, evidence (PERM-18)."""

    def __init__(self, seen: set[str], price: Callable[[str, Usage], float]) -> None:
        self.seen, self.price = seen, price
        self.new: list[str] = []
        self.repeats = self.failures = self.requests = self.rounds = self.calls = 0
        self.tokens, self.cost = 0, 0.0
        self._calls: dict[str, tuple[str, str]] = {}
        self._phase, self._open = "executor", False

    def see(self, event: Event) -> None:
        if isinstance(event, Phase) and event.phase in ("planner", "executor"):
            self._phase = event.phase
        elif isinstance(event, StepStart):
            self.requests, self._open = self.requests + 1, True
        elif isinstance(event, UsageReport):
            self.tokens += event.usage.input_tokens + event.usage.output_tokens
            self.cost += self.price(self._phase, event.usage)
        elif isinstance(event, ToolStart):
            self.calls += 1
            if self._open:
                self.rounds, self._open = self.rounds + 1, False
            self._calls[event.call_id] = (event.name, event.arguments)
        elif isinstance(event, ToolEnd):
            name, args = self._calls.pop(event.call_id, (event.name, ""))
            if not counts_as_evidence(name):
                return
            key = evidence_key(name, args, event.content)
            if key in self.seen:
                self.repeats += 1
                self.failures += 1 if event.is_error else 0
            else:
                self.seen.add(key)
                self.new.append(key)


class Host:
    """The Runner frontends drive (see the module docstring)."""

    def __init__(
        self,
        *,
        agent: Agent,
        coordinator: Coordinator | None,
        plans: PlanBook,
        goals: GoalBook,
        plan_mode: PlanMode,
        budgets: Budgets,
        interactive: bool,
        prices: Mapping[str, Mapping[str, Any] | None] | None = None,
        first: TurnMeta | None = None,
        routing: bool = True,
    ) -> None:
        self.agent, self.coordinator = agent, coordinator
        self.plans, self.goals, self.plan_mode = plans, goals, plan_mode
        self.budgets, self.interactive = budgets, interactive
        self.prices = dict(prices or {})
        self._first = first
        self.routing = routing  # False: every turn goes to the executor verbatim (replay)
        self._phase = "executor"
        for name in ("planner_requests", "executor_requests"):
            agent.telemetry.counters.setdefault(name, 0)

    # -- the Runner -------------------------------------------------------------
    def run(self, user_input: str, cancel: Cancel) -> Iterator[Event]:
        """Route one user turn and run it (a live goal keeps going); ends with Done or Error."""
        first, self._first = self._first, None
        waiting = self.plans.approvable()
        meta = TurnMeta(
            flag_route=first.flag_route if first else None,
            goal=first.goal if first else None,
            approve_plan=bool(first and first.approve_plan),
            plan_status=waiting.status if waiting else "",
            synthetic=not self.routing,
        )
        decision = route(user_input, meta)
        self._phase = "executor"
        yield Phase("route", decision.route.value, decision.reason)
        try:
            for event in self._dispatch(decision, waiting, cancel):
                if isinstance(event, Phase) and event.phase in ("planner", "executor"):
                    self._phase = event.phase
                elif isinstance(event, StepStart):
                    self.agent.telemetry.count(f"{self._phase}_requests")
                yield event
        finally:
            self.plan_mode.end_turn()

    def close(self) -> None:
        """Release what the host holds (the planner session)."""
        if self.coordinator is not None:
            self.coordinator.close()

    def _done(self, text: str, reason: str = "complete") -> Done:
        return Done(text, reason, 0, self.agent.telemetry.total)

    def _dispatch(
        self, decision: RouteDecision, waiting: Plan | None, cancel: Cancel
    ) -> Iterator[Event]:
        if decision.action:
            yield from self._action(decision, waiting, cancel)
            return
        if waiting is not None:  # a plan may be approved on the next turn only
            self.plans.set_status(waiting, "set_aside")
        if decision.route is Route.GOAL_START:
            yield from self._goal_start(decision, cancel)
            return
        goal = self.goals.current
        if goal is not None and goal.status == "active":
            yield from self._goal_loop(goal, decision, cancel)
            return
        yield (yield from self._turn(decision, cancel))

    # -- one model turn -----------------------------------------------------------
    def _turn(self, decision: RouteDecision, cancel: Cancel) -> Generator[Event, None, Event]:
        pm = self.plan_mode
        if pm.active:  # explicit Plan mode is executor-driven: no second planner (COORD-5)
            return (yield from self._plan_mode_turn(decision.task, cancel))
        if self.coordinator is not None:
            return (yield from _split(self.coordinator.execute(decision, cancel)))
        r = decision.route
        if r in (Route.PLAN_THEN_EXECUTE, Route.PLAN_FOR_APPROVAL, Route.PLAN_ONLY):
            pm.begin(r.value, decision.task)  # one model: this turn runs in Plan mode
            return (yield from self._plan_mode_turn(decision.task, cancel))
        return (yield from _split(self.agent.run(decision.task, cancel)))

    def _plan_mode_turn(self, task: str, cancel: Cancel) -> Generator[Event, None, Event]:
        pm = self.plan_mode
        route_name = pm.route
        terminal = yield from _split(self.agent.run(task + pm.suffix(), cancel))
        exit_ = pm.exit
        plain = isinstance(terminal, Done) and terminal.reason == "complete"
        if exit_ is None and plain and route_name in ("plan_only", "plan_for_approval"):
            # No exit_plan_mode call: the host still enforces the boundary (COORD-10).
            assert isinstance(terminal, Done)
            status = "saved" if route_name == "plan_only" else "pending"
            plan = Plan.make(route_name, task, terminal.result, "plan_mode", status)
            self.plans.save(plan)
            exit_ = (status, plan)
            if status == "pending" and (yield from ask_approval(plan, self.interactive, cancel)):
                pm.approve(plan)
                yield Phase("plan", route_name, "approved", plan.id, "approved")
                return (yield from _split(self.agent.run(approved_text(plan), cancel)))
        if exit_ is None:
            return terminal
        kind, plan = exit_
        yield Phase("plan", route_name, "exit_plan_mode", plan.id, kind)
        path = str(self.plans.path(plan.id))
        if kind == "saved":
            yield Notice("plan", f"plan {plan.id} saved to {path}")
            return self._done(plan.body, "plan_saved")
        if kind == "pending":
            from .coordinator import waiting_note

            yield Notice("plan", waiting_note(plan.id, path, not self.interactive))
            return self._done(plan.body, "awaiting_approval")
        return terminal

    # -- host actions ---------------------------------------------------------------
    def _action(
        self, decision: RouteDecision, waiting: Plan | None, cancel: Cancel
    ) -> Iterator[Event]:
        action = decision.action
        if action == "usage":
            message = _USAGE.get(decision.reason, "this command needs an argument")
            yield Error(UsageError(message), message)
        elif action == "plan_mode":
            self.plan_mode.enter()
            yield Phase("plan", "", "plan_mode_on", status="planning")
            note = "plan mode is on: the model plans, then asks you to approve (exit_plan_mode)"
            yield Notice("plan", note)
            yield self._done(note)
        elif action == "plan_approve" and waiting is not None:
            yield from self._approve(waiting, decision, cancel)
        elif action == "plan_discard" and waiting is not None:
            self.plans.set_status(waiting, "rejected")
            yield Phase("plan", waiting.route, "rejected", waiting.id, "rejected")
            yield Notice("plan", f"plan {waiting.id} discarded")
            yield self._done(f"plan {waiting.id} discarded")
        else:
            yield from self._goal_action(action, cancel)

    def _approve(self, plan: Plan, decision: RouteDecision, cancel: Cancel) -> Iterator[Event]:
        extra = decision.task if decision.reason == "flag_approve_plan" else ""
        yield Phase("plan", plan.route, decision.reason, plan.id, "approved")
        if plan.source == "planner" and self.coordinator is not None:
            yield from self.coordinator.handoff(plan, cancel, extra)
            return
        if plan.source == "planner":  # the planner is off now (ablated, same model)
            self.plans.set_status(plan, "approved")
            yield from self.agent.run(handoff_text(plan, extra=extra), cancel)
            return
        self.plan_mode.approve(plan)  # leave Plan mode into the auto-execution window
        yield from self.agent.run(approved_text(plan, extra), cancel)

    def _goal_action(self, action: str, cancel: Cancel) -> Iterator[Event]:
        goal = self.goals.current
        if goal is None:
            text = "no goal in this session; start one with /goal OBJECTIVE"
            yield Notice("goal", text)
            yield self._done(text)
            return
        if action == "goal_pause" and goal.status == "active":
            goal.pause("user")
        elif action == "goal_clear":
            goal.status, goal.reason = "cleared", "user"
        elif action == "goal_resume":
            goal.resume()  # a fresh budget slice; the statistics stay (PERM-19)
            self.goals.save()
            yield Phase("goal", Route.GOAL_START.value, "resume", status=goal.status,
                        stats=goal.stats.snapshot())  # fmt: skip
            yield from self._goal_loop(goal, self._continuation(goal, ""), cancel)
            return
        self.goals.save()
        yield Phase("goal", "", action, status=goal.status, stats=goal.stats.snapshot())
        yield Notice("goal", goal.status_line())
        yield self._done(goal.status_line())

    # -- goal -------------------------------------------------------------------------
    def _goal_start(self, decision: RouteDecision, cancel: Cancel) -> Iterator[Event]:
        if "update_goal" not in self.agent.registry:  # without it a goal could never end
            message = "a goal needs the update_goal tool; add it to [tools].enabled"
            yield Error(UsageError(message), message)
            return
        goal = self.goals.start(decision.task)
        if not self.agent.session.title:
            self.agent.session.set_title(goal.objective)
        yield Phase("goal", Route.GOAL_START.value, decision.reason, status="active")
        yield Notice("goal", f"goal {goal.id} started")
        r = Route.GOAL_START if self.coordinator is not None else Route.EXECUTOR
        first = RouteDecision(r, decision.reason, goal_start_text(goal))
        yield from self._goal_loop(goal, first, cancel)

    def _continuation(self, goal: Goal, replan: str) -> RouteDecision:
        if replan and self.coordinator is not None:  # the dedicated planner re-plans
            task = continue_text(goal, replan) + f"\n\nThe goal:\n{goal.objective}"
            return RouteDecision(Route.PLAN_THEN_EXECUTE, f"goal_replan_{replan}", task)
        reason = f"goal_replan_{replan}" if replan else "synthetic"
        return RouteDecision(Route.EXECUTOR, reason, continue_text(goal, replan))

    def _price(self, phase: str, usage: Usage) -> float:
        cost = estimate_cost(usage, self.prices.get(phase))
        return cost.amount if cost is not None else 0.0

    def _tokens(self) -> int:
        """Tokens of the run so far: this agent's requests and every finished sub-agent's."""
        total = self.agent.telemetry.total
        return total.input_tokens + total.output_tokens

    def _budget_check(
        self, goal: Goal, watch: _TurnWatch, started: float, tokens_before: int
    ) -> Callable[..., str]:
        """The spent budget (or ""), counting what this turn has used so far (PERM-19).

        The agent asks it before each model request inside a turn, so a turn of many
        tool rounds cannot spend past a budget that was checked only between turns;
        a sub-agent asks it before each of its requests too, with its own tokens.
        """

        def spent(extra_tokens: int = 0) -> str:
            """``extra_tokens``: what a running sub-agent of this turn has used so far."""
            used = goal.used()
            turn = self._tokens() - tokens_before
            used["tokens"] = used.get("tokens", 0) + turn + extra_tokens
            used["cost"] = used.get("cost", 0) + watch.cost
            used["tool_rounds"] = used.get("tool_rounds", 0) + watch.rounds
            used["active_seconds"] = used.get("active_seconds", 0) + time.monotonic() - started
            return self.budgets.spent(used)

        return spent

    def _goal_loop(self, goal: Goal, decision: RouteDecision, cancel: Cancel) -> Iterator[Event]:
        while True:
            started, tokens_before = time.monotonic(), self._tokens()
            watch = _TurnWatch(self.goals.seen, self._price)
            turn = self._turn(decision, cancel)
            terminal: Event | None = None
            run_budget = self.agent.before_request  # a run budget applies too (issue 36)
            goal_budget = self._budget_check(goal, watch, started, tokens_before)
            self.agent.before_request = combine(run_budget, goal_budget)
            try:
                while True:
                    event = next(turn)
                    watch.see(event)
                    yield event
            except StopIteration as stop:
                terminal = stop.value
            finally:
                self.agent.before_request = run_budget
            self.plan_mode.end_turn()  # the approval window never spans turns
            watch.tokens = self._tokens() - tokens_before  # sub-agents' spend is the goal's too
            self._account(goal, watch, time.monotonic() - started)
            yield Phase("goal", decision.route.value, decision.reason, status=goal.status,
                        stats=goal.stats.snapshot())  # fmt: skip
            ending = self._goal_ending(goal, terminal)
            if ending is not None:
                self.goals.save(watch.new)
                yield from ending
                return
            replan = self._replan(goal)
            self.goals.save(watch.new)
            decision = self._continuation(goal, replan)
            yield Phase("route", decision.route.value, decision.reason)

    def _account(self, goal: Goal, watch: _TurnWatch, seconds: float) -> None:
        s = goal.stats
        s.turns += 1
        s.requests += watch.requests
        s.tool_rounds += watch.rounds
        s.tool_calls += watch.calls
        s.tokens += watch.tokens
        s.cost = round(s.cost + watch.cost, 6)
        s.active_seconds = round(s.active_seconds + seconds, 3)
        s.evidence += len(watch.new)
        s.repeats += watch.repeats
        goal.stall = 0 if watch.new else goal.stall + 1
        goal.failures += watch.failures
        todos = self.agent.tool_ctx.extra.get("todos")
        items = todos if isinstance(todos, list) else []
        snapshot = json.dumps(items, sort_keys=True)
        active = any(isinstance(t, dict) and t.get("status") != "completed" for t in items)
        goal.todo_stall = goal.todo_stall + 1 if active and snapshot == goal.todos else 0
        goal.todos = snapshot

    def _replan(self, goal: Goal) -> str:
        """Stalls only ever re-plan, never pause (PERM-18)."""
        replan = ""
        if goal.stall >= REPLAN_AFTER:
            replan = "no_new_evidence"
        elif goal.failures >= REPLAN_AFTER:
            replan = "repeated_failures"
        elif goal.todo_stall >= REPLAN_AFTER:
            replan = "todo_stall"
        if replan:
            goal.stall = goal.failures = goal.todo_stall = 0
            goal.stats.replans += 1
        return replan

    def _goal_ending(self, goal: Goal, terminal: Event | None) -> list[Event] | None:
        """The events that end the goal's run now, or None to continue."""
        if not isinstance(terminal, Done):
            if goal.status == "active":
                goal.pause("error")  # an unrecoverable error: resumable once fixed
            return [terminal] if terminal is not None else [self._done("", "cancelled")]
        stats = goal.stats.snapshot()
        if goal.status == "complete":
            end = Phase("goal", "", "complete", status="complete", stats=stats)
            return [end, Notice("goal", goal.status_line()),
                    self._done(terminal.result or goal.note)]  # fmt: skip
        if goal.status == "blocked":
            end = Phase("goal", "", "blocked", status="blocked", stats=stats)
            return [
                end,
                Notice("goal", goal.status_line()),
                self._done(goal.reason, "goal_blocked"),
            ]
        if terminal.reason == "cancelled":
            goal.pause("stopped")
            return [terminal]
        if terminal.reason not in ("complete", "max_steps", "budget") or goal.status != "active":
            return [terminal]  # a plan waits for approval, a plan was saved …
        spent = self.budgets.spent(goal.used())
        if not spent and terminal.reason == "budget":  # the turn ended at _budget_check
            spent = "slice"  # its figures are in goal.used() now; a clock may have moved
        if not spent and terminal.reason == "max_steps" and self.budgets.steps > 0:
            spent = "steps"
        if not spent:
            return None
        goal.pause(f"budget_spend:{spent}")
        note = f"goal paused: the {spent} budget of this slice is spent; /goal resume continues"
        end = Phase("goal", "", "budget_spend", status="paused", stats=goal.stats.snapshot())
        return [end, Notice("goal", note), self._done(terminal.result, "goal_paused")]
