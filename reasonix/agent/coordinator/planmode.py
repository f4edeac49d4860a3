"""Plan mode: the executor plans, a human approves, then a short auto-execution window.

Plan mode is a collaboration state, not a read-only jail and not a posture
(PERM-14, PERM-15): built-in tools and bash keep going through Ask/Auto/YOLO
and the sandbox, while MCP writers stay blocked (the policy's ``planning``
flag). It is entered only by an explicit choice — Shift-Tab, ``/plan`` with no
task, ``--permission-mode plan`` — or, with one model and no dedicated
planner, for a single explicitly planned turn (``/plan TASK``, ``--plan-only``
…). It is executor-driven: no second planner starts (COORD-5).

The model leaves it by calling ``exit_plan_mode`` with its plan. That call
needs a fresh human answer every time: no posture (not auto, not YOLO), rule
or grant answers it. Headless, the plan is saved and the turn ends waiting;
``reasonix run -c --approve-plan`` continues. After approval the policy opens
a short window — the rest of that turn — where ordinary writers run without
asking; nested/indirect bash still asks, and no later plan is approved by it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.permission.approval import ApprovalChoice, ApprovalRequest
from reasonix.permission.modes import Mode
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

from .plan import Plan, PlanBook

if TYPE_CHECKING:
    from typing import Any

__all__ = ["PlanMode", "exit_plan_mode_tool"]

_SUFFIX = {
    "explicit": "Plan mode is on: research and plan, do not change files. When the plan is "
    "ready, call exit_plan_mode with it; a human approves it before anything runs.",
    "plan_for_approval": "Plan this task without changing files, then call exit_plan_mode "
    "with the plan; a human approves it before anything runs.",
    "plan_only": "Plan this task without changing files, then call exit_plan_mode with the "
    "plan. Only the plan is wanted: nothing will be executed.",
    "plan_then_execute": "Plan this task first without changing files and call "
    "exit_plan_mode with the plan; then carry it out.",
}


class PlanMode:
    """The executor's Plan mode over the run's permission gate (one per session)."""

    def __init__(
        self,
        gate: Any,
        plans: PlanBook,
        approver: Callable[[ApprovalRequest], Any] | None,
    ) -> None:
        self.gate, self.plans, self.approver = gate, plans, approver
        self.route = "explicit"
        self.task = ""
        self.exit: tuple[str, Plan] | None = None  # what exit_plan_mode did this turn
        self._restore: tuple[Mode, bool] | None = None  # posture before a planned turn

    @property
    def active(self) -> bool:
        """True while planning (Plan posture or the planning flag)."""
        return bool(self.gate.policy.planning_active)

    def enter(self) -> None:
        """Enter Plan mode until a plan is approved (``/plan``, Shift-Tab)."""
        self.gate.policy = self.gate.policy.with_planning(True)

    def begin(self, route: str, task: str) -> None:
        """Plan mode for one planned turn (one model, no dedicated planner).

        Plan-only fails closed: writers not allowed by an explicit rule are
        refused for the turn, whatever the posture (COORD-12).
        """
        policy = self.gate.policy
        self._restore = (policy.mode, policy.planning)
        policy = policy.with_planning(True)
        if route == "plan_only":
            policy = policy.with_mode(Mode.DONT_ASK)
        self.gate.policy = policy
        self.route, self.task = route, task

    def suffix(self) -> str:
        """The small block appended to a planning turn's user message."""
        return f'\n\n<plan-mode route="{self.route}">{_SUFFIX[self.route]}</plan-mode>'

    def approve(self, plan: Plan) -> None:
        """Leave Plan mode into the auto-execution window (closed by :meth:`end_turn`)."""
        self.plans.set_status(plan, "approved")
        self.gate.policy = self.gate.policy.plan_window()
        self.exit = ("approved", plan)

    def end_turn(self) -> None:
        """Close the window and undo a one-turn Plan mode (called by the host)."""
        policy = self.gate.policy
        if policy.in_window:
            policy = policy.end_window()
        if self._restore is not None:
            mode, planning = self._restore
            policy = policy.with_mode(mode).with_planning(planning)
            self._restore = None
        self.gate.policy = policy
        self.route, self.task, self.exit = "explicit", "", None

    def submit(self, text: str) -> ToolResult:
        """``exit_plan_mode``: save the plan and get a human's answer (see module doc)."""
        route = self.route
        status = "saved" if route == "plan_only" else "pending"
        plan = Plan.make(route, self.task, text, "plan_mode", status)
        path = self.plans.save(plan)
        if route == "plan_only":
            self.exit = ("saved", plan)
            note = f"plan {plan.id} saved to {path}; only a plan was asked for, so the turn ends"
            return ToolResult(note, metadata={"end_turn": "plan_saved"})
        if route == "plan_then_execute":  # the user's explicit request is the approval
            self.approve(plan)
            return ToolResult("plan recorded; the user asked to plan, then execute: do it now")
        if self.approver is None:
            self.exit = ("pending", plan)
            note = (
                f"plan {plan.id} saved to {path}; it needs a human's approval and nobody can "
                "answer here, so the turn ends (continue with `reasonix run -c --approve-plan`)"
            )
            return ToolResult(note, metadata={"end_turn": "awaiting_approval"})
        request = ApprovalRequest(
            tool_name="exit_plan_mode",
            summary=f"leave plan mode and carry out plan {plan.id}: {plan.title}",
            args={},
            choices=(ApprovalChoice.ONCE, ApprovalChoice.DENY),
            suggested_rule="",
            reason="a plan needs a fresh human answer; auto and YOLO never approve it",
            fresh=True,
            detail=plan.body,
        )
        if self.approver(request) is ApprovalChoice.ONCE:
            self.approve(plan)
            return ToolResult("approved by the user: plan mode is off; carry out the plan now")
        self.exit = ("rejected", plan)
        note = "the user did not approve this plan; stay in plan mode and wait for feedback"
        return ToolResult(note, metadata={"end_turn": "plan_rejected"})


def exit_plan_mode_tool(state: Callable[[], PlanMode | None]) -> FunctionTool:
    """The ``exit_plan_mode`` tool over the live session's Plan mode (``state()``)."""

    def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult | str:
        mode = state()
        if mode is None or not mode.active:
            raise ToolError("not in plan mode; there is no plan to submit — just do the task")
        text = str(args.get("plan") or "").strip()
        if not text:
            raise ToolError("plan: give the plan as Markdown text")
        return mode.submit(text)

    return FunctionTool(
        name="exit_plan_mode",
        description="Plan mode only: submit the finished plan (Markdown) for a human's approval.",
        schema={
            "type": "object",
            "properties": {"plan": {"type": "string"}},
            "required": ["plan"],
            "additionalProperties": False,
        },
        fn=run,
        read_only=False,
        metadata={"self_gated": True},  # it asks a human itself; the gate adds only deny rules
    )
