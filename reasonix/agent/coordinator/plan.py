"""Plans: parsing the planner's answer, storing it, handing it to the executor.

A plan separates verified touchpoints (seen in the code) from candidate ones
(assumed), and lists non-goals, risks, acceptance criteria and verification
commands where the planner found evidence for them (COORD-7). It is stored
twice: as a ``plan`` record in the executor's transcript (what ``run -c``
continues from) and as a Markdown file under the project's session directory
(what a person reads). Status changes are appended as ``plan_status`` records;
nothing is rewritten.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reasonix.cancel import Cancel
from reasonix.config.paths import sessions_dir
from reasonix.lazy import Pattern, asdict, dataclass, field
from reasonix.permission.approval import ApprovalChoice, ApprovalRequest

from ..directives import PLAN_HEADINGS
from ..events import ApprovalRequested, Event
from ..lazy_records import of_types

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Plan",
    "PlanBook",
    "approved_text",
    "ask_approval",
    "handoff_text",
    "new_plan_id",
    "parse_plan",
]

_PLAN_BLOCK = Pattern(r"<plan>(.*?)(?:</plan>|$)", re.S | re.I)
_HEADING = Pattern(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_ITEM = Pattern(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
# Statuses a later turn may still approve: pending waits for approval, saved came from plan-only.
APPROVABLE = ("pending", "saved")


def new_plan_id() -> str:
    """A sortable, unique plan id."""
    return "plan-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()


@dataclass
class Plan:
    """One plan: what was asked, what the planner answered, and its parsed sections."""

    id: str
    route: str
    task: str
    text: str
    source: str = "planner"  # "planner" (dedicated model) | "plan_mode" (the executor)
    status: str = "pending"  # pending | saved | approved | rejected | set_aside
    title: str = ""
    sections: dict[str, list[str]] = field(default_factory=dict)
    created: float = field(default_factory=time.time)

    @classmethod
    def make(cls, route: str, task: str, text: str, source: str, status: str) -> Plan:
        """A new plan with a fresh id, parsed from ``text``."""
        title, sections = parse_plan(text)
        return cls(new_plan_id(), route, task, text, source, status, title, sections)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in the transcript."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """Rebuild a plan from its transcript form (unknown keys ignored)."""
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)

    @property
    def body(self) -> str:
        """The plan text without the ``<plan>`` wrapper."""
        m = _PLAN_BLOCK.search(self.text)
        return (m.group(1) if m else self.text).strip()


def parse_plan(text: str) -> tuple[str, dict[str, list[str]]]:
    """(title, sections) of a plan answer; text outside known sections is left out.

    Headings (``#``…) name sections; ``-``/``*``/``1.`` items become entries;
    lines of prose under a section become entries too. The first heading
    that names no section is the title.
    """
    m = _PLAN_BLOCK.search(text)
    body = m.group(1) if m else text
    title, current = "", ""
    sections: dict[str, list[str]] = {}
    for line in body.splitlines():
        head = _HEADING.match(line)
        if head:
            name = head.group(1).strip().rstrip(":\uff1a").strip().lower()
            current = PLAN_HEADINGS.get(name, "")
            if not current and not title:
                title = head.group(1).strip()
            continue
        if not current or not line.strip():
            continue
        item = _ITEM.match(line)
        sections.setdefault(current, []).append(item.group(1) if item else line.strip())
    if not title:
        first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
        title = first.lstrip("#").strip()[:80]
    return title, sections


def handoff_text(plan: Plan, task: str = "", extra: str = "") -> str:
    """The executor's user message for a planned task (COORD-9, COORD-14)."""
    lines = [task or plan.task, "", f'<plan id="{plan.id}">', plan.body, "</plan>"]
    lines.append(
        "The plan above comes from a planner that could only read. Check its candidate "
        "touchpoints and assumptions yourself before relying on them, then carry it out."
    )
    if extra.strip():
        lines += ["", "The user adds: " + extra.strip()]
    return "\n".join(lines)


def approved_text(plan: Plan, extra: str = "") -> str:
    """The executor's user message after a Plan-mode plan was approved."""
    text = f'<plan-approved id="{plan.id}">The user approved your plan; carry it out now.'
    text += "</plan-approved>"
    return text + ("\n\n" + extra.strip() if extra.strip() else "")


class SessionLike(Protocol):
    """The transcript a plan book writes into (reasonix.agent.session.Session)."""

    @property
    def id(self) -> str:
        """The session id."""
        ...

    def append(self, record: dict[str, Any]) -> None:
        """Append one record."""
        ...

    def records(self) -> Sequence[Mapping[str, Any]]:
        """Every record so far."""
        ...

    def sync(self) -> None:
        """Make appended records durable."""
        ...


class PlanBook:
    """The plans of one executor session: saved as records, plus a Markdown copy."""

    def __init__(self, session: Callable[[], SessionLike], workspace: Path) -> None:
        self._session = session
        self.workspace = workspace

    def path(self, plan_id: str) -> Path:
        """Where the Markdown copy of a plan lives."""
        return sessions_dir(self.workspace) / "plans" / f"{plan_id}.md"

    def save(self, plan: Plan) -> Path:
        """Record ``plan`` in the transcript and write its Markdown copy; returns the path."""
        session = self._session()
        session.append({"type": "plan", "plan": plan.to_dict()})
        session.sync()  # a plan that waits for approval must survive a kill
        path = self.path(plan.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        head = f"<!-- {plan.id} · route {plan.route} · session {session.id} -->\n"
        path.write_text(head + plan.body + "\n", encoding="utf-8")
        return path

    def set_status(self, plan: Plan, status: str) -> None:
        """Append a status change (approved, rejected, set aside)."""
        plan.status = status
        self._session().append({"type": "plan_status", "id": plan.id, "status": status})

    def latest(self) -> Plan | None:
        """The newest plan of the session with its current status, or None."""
        plan: Plan | None = None
        for rec in of_types(self._session().records(), ("plan", "plan_status")):
            kind = rec.get("type")
            if kind == "plan" and isinstance(rec.get("plan"), dict):
                plan = Plan.from_dict(rec["plan"])
            elif kind == "plan_status" and plan is not None and rec.get("id") == plan.id:
                plan.status = str(rec.get("status") or plan.status)
        return plan

    def approvable(self) -> Plan | None:
        """The newest plan when a turn may still approve it (pending or saved)."""
        plan = self.latest()
        return plan if plan is not None and plan.status in APPROVABLE else None


def ask_approval(
    plan: Plan, interactive: bool, cancel: Cancel
) -> Generator[Event, None, bool | None]:
    """Ask a human to approve ``plan`` through the Runner stream (COORD-10, PERM-15).

    Returns True (approved), False (declined) or None (headless: nobody can
    answer). The question always needs a fresh answer: no posture, rule or
    grant answers it.
    """
    if not interactive:
        return None
    request = ApprovalRequest(
        tool_name="plan",
        summary=f"execute plan {plan.id}: {plan.title or plan.route}",
        args={},
        choices=(ApprovalChoice.ONCE, ApprovalChoice.DENY),
        suggested_rule="",
        reason="a plan waits for your approval; auto and YOLO never approve plans",
        fresh=True,
        detail=plan.body,
    )
    event = ApprovalRequested(request)
    yield event
    event.answer(None)  # a consumer that did not answer declined (no-op when answered)
    return event.wait(cancel) is ApprovalChoice.ONCE
