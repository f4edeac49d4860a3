"""Adjudicated completion (spec §3.11, SUB-9…11).

A writer child finishes by calling ``complete_subtask`` with a status, a
summary, its acceptance criteria (each citing the command it ran or the
paths it changed) and what is unresolved. That status is a claim, not a
verdict: :func:`adjudicate` checks every criterion against the host's
receipts (:class:`~.ledger.Ledger`). ``verification`` must cite a command the
host recorded as executed (and that exited 0); ``diff``/``files`` must cite
paths the host saw written or read; ``manual`` never backs itself. Unbacked
criteria become ``unsatisfied``; a report holding one cannot stay
``complete``, and neither can one with no criteria at all (a writer's task
asked for a change; "nothing to check" is not "checked"); every downgrade
carries its reason; nothing is ever upgraded.

:func:`render` gives the parent, in order: the adjudicated status and
criteria, the child's own prose, then the host receipts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.lazy import dataclass, field
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

from .ledger import Ledger

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "COMPLETION_CONTRACT",
    "STATUSES",
    "Criterion",
    "Verdict",
    "adjudicate",
    "complete_subtask_tool",
    "run_verdict",
]

STATUSES = ("complete", "partial", "blocked", "failed")
KINDS = ("verification", "diff", "files", "manual")

COMPLETION_CONTRACT = """\
<completion-contract>
When you are done, call complete_subtask once with: status (complete, partial, blocked or \
failed), a one-paragraph summary, acceptance_criteria — one entry per thing the task asked \
for, each with kind "verification" (evidence: the exact command you ran), "diff" or "files" \
(evidence: the paths you changed or read) or "manual" (nothing you could check) — and \
unresolved (what is left). The host checks every criterion against what it saw you run, \
read and write: a criterion it cannot back is marked unsatisfied and a complete status \
becomes partial, as does a complete status with no criteria. Then end your turn with a \
short final answer.
</completion-contract>"""

_DESCRIPTION = (
    "Report how your delegated task ended (sub-agents only). Call it once, at the end, then "
    "answer briefly. status is your claim; the host checks each acceptance criterion against "
    "its own record of the commands you ran and the paths you read or wrote, marks what it "
    "cannot back as unsatisfied and lowers the status accordingly."
)

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": list(STATUSES)},
        "summary": {"type": "string", "description": "What you did, in a few sentences."},
        "acceptance_criteria": {
            "type": "array",
            "description": "One entry per thing the task asked for.",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The criterion."},
                    "kind": {"type": "string", "enum": list(KINDS)},
                    "evidence": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "verification: the exact commands you ran; diff/files: "
                        "the workspace paths you changed or read; manual: empty.",
                    },
                    "status": {
                        "type": "string",
                        "enum": ["satisfied", "unsatisfied"],
                        "description": "Your own judgement (default satisfied).",
                    },
                },
                "required": ["kind", "text"],
            },
        },
        "unresolved": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["status", "summary"],
}


def _check(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Validate the report; the host reads it from the call's arguments afterwards."""
    for i, item in enumerate(args.get("acceptance_criteria") or [], start=1):
        if not isinstance(item, dict) or item.get("kind") not in KINDS:
            raise ToolError(f"acceptance_criteria[{i}]: needs text and kind ({', '.join(KINDS)})")
        if not isinstance(item.get("text"), str) or not item["text"].strip():
            raise ToolError(f"acceptance_criteria[{i}]: text must be a non-empty string")
        evidence = item.get("evidence", [])
        if not isinstance(evidence, (list, str)):
            raise ToolError(f"acceptance_criteria[{i}]: evidence must be a list of strings")
    return ToolResult(
        "Report recorded; the host will check it against its receipts. "
        "End your turn now with a short final answer (no more tool calls)."
    )


def complete_subtask_tool() -> FunctionTool:
    """The ``complete_subtask`` tool of a writer child (it only records the report)."""
    return FunctionTool("complete_subtask", _DESCRIPTION, _SCHEMA, _check, read_only=True)


@dataclass
class Criterion:
    """One acceptance criterion after adjudication."""

    text: str
    kind: str
    evidence: list[str]
    claimed: str  # satisfied | unsatisfied (the child's word)
    status: str  # satisfied | unsatisfied (the host's)
    reason: str = ""  # why the host did not back it

    @property
    def downgraded(self) -> bool:
        """True when the child said satisfied and the host did not agree."""
        return self.claimed == "satisfied" and self.status == "unsatisfied"


@dataclass
class Verdict:
    """The adjudicated outcome of one child run."""

    status: str
    claimed: str | None  # the reported status; None = no report (prose only)
    summary: str = ""
    criteria: list[Criterion] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    downgrades: list[str] = field(default_factory=list)  # printed with their reasons
    note: str = ""  # how the run itself ended, when that matters

    @property
    def false_completion(self) -> bool:
        """The child claimed complete and the host refused to back it."""
        return self.claimed == "complete" and self.status != "complete"

    @property
    def criterion_downgrades(self) -> int:
        """How many criteria the host marked unsatisfied against the child's word."""
        return sum(c.downgraded for c in self.criteria)


def _evidence(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [raw] if raw.strip() else []
    if isinstance(raw, list):
        return [str(e) for e in raw if str(e).strip()]
    return []


def _back(kind: str, evidence: Sequence[str], ledger: Ledger) -> str:
    """ "" when the receipts back the criterion, else the reason they do not."""
    if kind == "manual":
        return "manual criteria are never backed by host receipts"
    if not evidence:
        return "it cites no evidence"
    for item in evidence:
        if kind == "verification":
            receipt = ledger.ran(item)
            if receipt is None:
                return f"the host never saw `{item}` run"
            if receipt.exit_code != 0:
                how = f"exited {receipt.exit_code}" if receipt.exit_code is not None else ""
                return f"`{item}` ran but {how or receipt.note}"
        elif not ledger.saw(item):
            return f"the host never saw {item} read or written"
    return ""


def adjudicate(report: dict[str, Any], ledger: Ledger) -> Verdict:
    """Check a ``complete_subtask`` report against the receipts (host-side, SUB-10)."""
    claimed = str(report.get("status") or "failed")
    claimed = claimed if claimed in STATUSES else "failed"
    criteria: list[Criterion] = []
    downgrades: list[str] = []
    for item in report.get("acceptance_criteria") or []:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("kind") or "manual")
        own = "unsatisfied" if item.get("status") == "unsatisfied" else "satisfied"
        evidence = _evidence(item.get("evidence"))
        reason = _back(kind, evidence, ledger) if own == "satisfied" else ""
        crit = Criterion(str(item.get("text", "")).strip(), kind, evidence, own, own, reason)
        if reason:
            crit.status = "unsatisfied"
            downgrades.append(f"criterion {crit.text!r} → unsatisfied: {reason}")
        criteria.append(crit)
    status = claimed
    if claimed == "complete" and not criteria:  # a writer's task asked for a change
        status = "partial"  # nothing to check is not the same as checked (counted as false)
        downgrades.append(
            "status complete → partial: the report names no acceptance criteria,"
            " so the host could check nothing"
        )
    elif claimed == "complete" and any(c.status == "unsatisfied" for c in criteria):
        status = "partial"  # never upgraded: only a complete claim is lowered
        downgrades.append("status complete → partial: not every criterion is satisfied")
    unresolved = [str(u) for u in report.get("unresolved") or [] if str(u).strip()]
    summary = str(report.get("summary") or "").strip()
    return Verdict(status, claimed, summary, criteria, unresolved, downgrades)


def run_verdict(reason: str, error: str) -> Verdict:
    """The verdict of a run without a report, from how the run ended."""
    if error:
        return Verdict("failed", None, note=f"the run failed: {error}")
    if reason == "complete":
        return Verdict("complete", None)
    if reason == "max_steps":
        return Verdict("partial", None, note="the step budget ran out")
    if reason == "budget":  # issue 36: its own budget or the run's was spent
        return Verdict("partial", None, note="its budget ran out before the work was done")
    return Verdict("failed", None, note=f"the run ended: {reason or 'unknown'}")


def status_line(verdict: Verdict, writer: bool) -> str:
    """The first line of the parent's tool result."""
    line = f"status: {verdict.status}"
    if verdict.claimed is not None and verdict.claimed != verdict.status:
        line += f" (claimed {verdict.claimed}; the host downgraded it)"
    elif verdict.claimed is None and writer and verdict.status == "complete":
        line += " (prose only: no complete_subtask report, nothing was adjudicated)"
    if verdict.note:
        line += f" — {verdict.note}"
    return line


def render(verdict: Verdict, prose: str, receipts: Sequence[str], writer: bool) -> str:
    """The parent's tool result: verdict and criteria, the child's prose, the receipts."""
    out = [status_line(verdict, writer)]
    out += [f"downgraded: {d}" for d in verdict.downgrades]
    if verdict.summary:
        out.append(f"summary: {verdict.summary}")
    if verdict.criteria:
        out.append("criteria:")
        for c in verdict.criteria:
            cited = f" [{', '.join(c.evidence)}]" if c.evidence else ""
            why = f" — {c.reason}" if c.reason else ""
            out.append(f"- {c.status} · {c.kind} · {c.text}{cited}{why}")
    if verdict.unresolved:
        out.append("unresolved:")
        out += [f"- {u}" for u in verdict.unresolved]
    out += ["", "sub-agent's answer:", prose.strip() or "(no final text)", "", "host receipts:"]
    out += [f"- {r}" for r in receipts]
    return "\n".join(out)
