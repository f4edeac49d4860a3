"""``/plan``, ``/plan-approve``, ``/plan-only`` and ``/goal``: the planning triggers (D11, D28).

Routing is decided by the host Runner over the pristine text the user typed
(``reasonix/agent/coordinator``), so these commands do not act themselves:
each hands the line unchanged to the frontend as the turn to send. That keeps
one routing path for every frontend — the line chat, the curses view,
``serve`` — and for ``reasonix run``, which never reads a leading slash as a
command but whose host routes ``/plan TASK`` the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from reasonix.command.api import CommandResult, Completion
from reasonix.command.registry import Command

__all__ = ["GOAL_ACTIONS", "planning_commands"]

GOAL_ACTIONS = ("status", "pause", "resume", "clear")


def planning_commands() -> list[Command]:
    """The four built-ins; each returns its own line as the prompt of the turn."""

    def passing(name: str) -> Callable[[str], CommandResult]:
        def run(args: str) -> CommandResult:
            return CommandResult(prompt=f"/{name} {args}".rstrip())

        return run

    def goal_args(typed: str) -> list[Completion]:
        if " " in typed:
            return []
        return [Completion(a) for a in GOAL_ACTIONS if a.startswith(typed)]

    return [
        Command("plan", "plan first, then execute; alone: enter Plan mode", "builtin",
                passing("plan"), "[task]"),
        Command("plan-approve", "plan, then wait for your approval", "builtin",
                passing("plan-approve"), "<task>"),
        Command("plan-only", "plan and save the plan; execute nothing", "builtin",
                passing("plan-only"), "<task>"),
        Command("goal", "pursue an objective until it is done; or status, pause, resume, clear",
                "builtin", passing("goal"), "<objective> | status | pause | resume | clear",
                "", goal_args),
    ]  # fmt: skip
