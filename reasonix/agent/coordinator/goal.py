"""Goal: one objective pursued across turns until it is done (D28, PERM-17…21).

The state machine is small: ``active`` → ``complete`` | ``blocked`` (the model
says so with ``update_goal``), ``active`` ⇄ ``paused`` (a user pause, a
cancel, an external error, or an explicitly configured budget), and
``cleared``. There is no default limit on rounds, turns, time or "no
progress" (PERM-17): without a configured budget the statistics only
observe. A budget pause is resumable; resuming grants a fresh slice and
keeps every cumulative figure (PERM-19).

Novelty (PERM-18): a tool call is new evidence when its exact (tool,
arguments, result) triple was not seen before in this goal; exact repeats
count as repeats, never as progress. Turns without new evidence, repeated
identical failures and a todo list that stops moving only trigger a
re-plan — never a pause.

State lives in the executor's transcript: a ``goal`` record after every
change and every turn, ``goal_evidence`` records with the new triple hashes,
so it survives SIGKILL and ``run -c``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from reasonix.digest import sha256_hex
from reasonix.errors import ToolError
from reasonix.lazy import asdict, dataclass, field
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

from ..lazy_records import of_types

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "REPLAN_AFTER",
    "Budgets",
    "Goal",
    "GoalBook",
    "GoalStats",
    "evidence_key",
    "update_goal_tool",
]

REPLAN_AFTER = 3  # turns without new evidence (or repeated identical failures) before a re-plan
_NOT_EVIDENCE = frozenset({"update_goal", "todo_write", "exit_plan_mode"})


@dataclass
class GoalStats:
    """Cumulative figures of a goal; observational unless a budget is configured."""

    turns: int = 0
    requests: int = 0
    tool_rounds: int = 0
    tool_calls: int = 0
    tokens: int = 0
    active_seconds: float = 0.0
    cost: float = 0.0
    evidence: int = 0
    repeats: int = 0
    replans: int = 0

    def snapshot(self) -> dict[str, float]:
        """A plain copy for slices, records and events."""
        return {k: float(v) for k, v in asdict(self).items()}


class Budgets(NamedTuple):
    """Explicit user budgets per slice; 0 (or less, for time) means off (PERM-19).

    A named tuple: every run's host holds one, and a tuple class costs a tenth of a
    dataclass's generated methods to build."""

    tokens: int = 0  # [agent].goal_token_budget
    steps: int = 0  # [agent].max_steps (tool rounds)
    minutes: float = 0.0  # [agent].task_time_budget_minutes
    cost: float = 0.0  # [agent].goal_cost_budget, in the price's currency

    def spent(self, used: Mapping[str, float]) -> str:
        """The name of the first exhausted budget for the slice usage ``used``, or ""."""
        if self.tokens > 0 and used.get("tokens", 0) >= self.tokens:
            return "tokens"
        if self.steps > 0 and used.get("tool_rounds", 0) >= self.steps:
            return "steps"
        if self.minutes > 0 and used.get("active_seconds", 0) >= self.minutes * 60:
            return "time"
        if self.cost > 0 and used.get("cost", 0) >= self.cost:
            return "cost"
        return ""


@dataclass
class Goal:
    """One goal's state (the FSM described in the module docstring)."""

    id: str
    objective: str
    status: str = "active"  # active | paused | complete | blocked | cleared
    reason: str = ""  # why paused/blocked (budget_spend:tokens, user, stopped, error, …)
    note: str = ""  # the model's last progress note (update_goal continue)
    stats: GoalStats = field(default_factory=GoalStats)
    slice_start: dict[str, float] = field(default_factory=dict)
    stall: int = 0  # turns in a row without new evidence
    failures: int = 0  # repeated identical failures since the last re-plan
    todo_stall: int = 0
    todos: str = ""
    created: float = field(default_factory=time.time)

    @classmethod
    def new(cls, objective: str) -> Goal:
        """A fresh active goal."""
        gid = "goal-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()
        goal = cls(gid, objective)
        goal.slice_start = goal.stats.snapshot()
        return goal

    @property
    def live(self) -> bool:
        """Active or paused: a goal the session still carries."""
        return self.status in ("active", "paused")

    def used(self) -> dict[str, float]:
        """What the current slice has used so far."""
        now = self.stats.snapshot()
        return {k: now[k] - self.slice_start.get(k, 0.0) for k in now}

    def pause(self, reason: str) -> None:
        """Pause (resumable)."""
        self.status, self.reason = "paused", reason

    def resume(self) -> None:
        """Resume with a fresh budget slice; cumulative statistics are kept (PERM-19)."""
        self.status, self.reason = "active", ""
        self.slice_start = self.stats.snapshot()

    def to_dict(self) -> dict[str, Any]:
        """The transcript form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Goal:
        """Rebuild from the transcript form."""
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k != "stats"}
        raw = data.get("stats")
        fields = raw if isinstance(raw, dict) else {}
        stats = GoalStats(
            **{k: v for k, v in fields.items() if k in GoalStats.__dataclass_fields__}
        )
        return cls(stats=stats, **known)

    def status_line(self) -> str:
        """One human line: status, objective head, statistics."""
        s = self.stats
        head = " ".join(self.objective.split())[:60]
        why = f" ({self.reason})" if self.reason else ""
        return (
            f"goal {self.id} {self.status}{why}: {head} · {s.turns} turns · {s.requests} "
            f"requests · {s.tokens} tokens · {s.evidence} new evidence · {s.repeats} repeats · "
            f"{s.replans} re-plans · {int(s.active_seconds)} s active"
        )


def evidence_key(name: str, arguments: str, result: str) -> str:
    """The hash of one exact (tool, arguments, result) triple."""
    try:
        args = json.dumps(json.loads(arguments or "{}"), sort_keys=True, ensure_ascii=False)
    except ValueError:
        args = arguments
    blob = json.dumps([name, args, result], ensure_ascii=False)
    return sha256_hex(blob.encode("utf-8", "replace"))[:20]


def counts_as_evidence(name: str) -> bool:
    """Host bookkeeping tools are never evidence of progress."""
    return name not in _NOT_EVIDENCE


class SessionLike(Protocol):
    """The transcript a goal book writes into."""

    def append(self, record: dict[str, Any]) -> None:
        """Append one record."""
        ...

    def records(self) -> Sequence[Mapping[str, Any]]:
        """Every record so far."""
        ...

    def sync(self) -> None:
        """Make appended records durable."""
        ...


class GoalBook:
    """The goal of one executor session: loaded from and saved to its records."""

    def __init__(self, session: Callable[[], SessionLike]) -> None:
        self._session = session
        self.goal: Goal | None = None
        self.seen: set[str] = set()
        self._load()

    def _load(self) -> None:
        hashes: dict[str, set[str]] = {}
        for rec in of_types(self._session().records(), ("goal", "goal_evidence")):
            kind = rec.get("type")
            if kind == "goal" and isinstance(rec.get("goal"), dict):
                self.goal = Goal.from_dict(rec["goal"])
            elif kind == "goal_evidence":
                keys = rec.get("hashes")
                found = [str(k) for k in keys] if isinstance(keys, list) else []
                hashes.setdefault(str(rec.get("goal", "")), set()).update(found)
        if self.goal is not None:
            self.seen = hashes.get(self.goal.id, set())

    @property
    def current(self) -> Goal | None:
        """The goal the session carries (active or paused), or None."""
        return self.goal if self.goal is not None and self.goal.live else None

    def start(self, objective: str) -> Goal:
        """Start a goal (a previous live one is cleared first)."""
        if self.current is not None:
            self.current.status = "cleared"
            self.save()
        self.goal, self.seen = Goal.new(objective), set()
        self.save()
        return self.goal

    def save(self, new_evidence: Sequence[str] = ()) -> None:
        """Append the state (and new evidence hashes) and make it durable."""
        if self.goal is None:
            return
        session = self._session()
        if new_evidence:
            session.append({"type": "goal_evidence", "goal": self.goal.id,
                            "hashes": list(new_evidence)})  # fmt: skip
        session.append({"type": "goal", "goal": self.goal.to_dict()})
        session.sync()


def update_goal_tool(state: Callable[[], GoalBook | None]) -> FunctionTool:
    """``update_goal``: the model reports progress, completion or a blocker."""

    def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult | str:
        book = state()
        goal = book.current if book is not None else None
        if book is None or goal is None or goal.status != "active":
            raise ToolError("there is no active goal; this tool only reports on one")
        status = str(args.get("status"))
        summary = str(args.get("summary") or "").strip()
        if status == "continue":
            goal.note = summary
            return "noted; keep going"
        if status == "blocked":
            reason = str(args.get("reason") or summary).strip()
            if not reason:
                raise ToolError("blocked: say what blocks the goal in `reason`")
            goal.status, goal.reason, goal.note = "blocked", reason, summary
            return ToolResult(
                f"goal marked blocked: {reason}", metadata={"end_turn": "goal_blocked"}
            )
        goal.status, goal.reason, goal.note = "complete", "", summary
        return ToolResult("goal marked complete", metadata={"end_turn": "goal_complete"})

    return FunctionTool(
        name="update_goal",
        description=(
            "Report on the active goal: continue (a progress note), complete (done and "
            "verified) or blocked (say why in reason)."
        ),
        schema={
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["continue", "complete", "blocked"]},
                "summary": {"type": "string"},
                "reason": {"type": "string"},
            },
            "required": ["status"],
            "additionalProperties": False,
        },
        fn=run,
        read_only=True,  # host bookkeeping only: no file, process or network effect
    )
