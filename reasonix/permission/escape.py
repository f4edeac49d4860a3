"""The sandbox escape: one unsandboxed retry, only ever by a fresh human answer (§3.7, §9).

When the OS sandbox blocked a bash command (enforcement on but no backend, a
write refused outside the roots, no network), the bash tool calls
:meth:`EscapeGate.offer`; the model may then call bash again with the exact
same command, ``escape_sandbox: true`` and a ``justification``. That request
goes to :meth:`EscapeGate.request`, which

* refuses when a deny rule matches the command (``denied``): it is never offered;
* refuses headless (``approver`` None) — YOLO/auto included, nobody can answer;
* refuses a command that was not just blocked (one retry per offer);
* otherwise asks the human with only *once* and *deny*: no rule, mode, hook or
  earlier answer can pre-approve it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from reasonix.lazy import dataclass
from reasonix.permission.approval import (
    ESCAPE_ARG,
    ApprovalChoice,
    ApprovalRequest,
    Approver,
    is_escape_request,
)

__all__ = ["ESCAPE_ARG", "EscapeGate", "EscapeOutcome", "is_escape_request"]


@dataclass(frozen=True)
class EscapeOutcome:
    """``granted`` or not; ``message`` is for the model, ``detail`` a short word for the record."""

    granted: bool
    message: str
    detail: str


class EscapeGate:
    """Tracks which commands the sandbox just blocked and asks before one unsandboxed run.

    ``denied(command)`` returns the deny rule's reason ("" when none matches).
    """

    def __init__(
        self, approver: Approver | None = None, denied: Callable[[str], str] | None = None
    ) -> None:
        self.approver = approver
        self.denied = denied
        self._offers: dict[str, str] = {}  # command -> why the sandbox blocked it
        self._lock = threading.Lock()

    @property
    def headless(self) -> bool:
        """Nobody can answer: every request is refused."""
        return self.approver is None

    def _deny_reason(self, command: str) -> str:
        return self.denied(command) if self.denied is not None else ""

    def offer(self, command: str, why: str, remedy: str = "") -> str:
        """Remember that the sandbox blocked ``command``; the note for the model ("" if none).

        ``remedy`` is a way to stay inside the sandbox (e.g. ``additional_write_dirs``).
        """
        if self._deny_reason(command):
            return ""  # a denied command never gets the escape offered
        with self._lock:
            self._offers[command] = why
        inside = f" {remedy}" if remedy else ""
        if self.headless:
            return (
                f"[sandbox: {why}.{inside} This run is headless, so the command cannot be "
                "re-run outside the sandbox; the user can rerun with --add-dir DIR or change "
                "[sandbox] settings.]"
            )
        return (
            f"[sandbox: {why}.{inside} If it must run outside the sandbox, call bash again "
            'with exactly the same command, "escape_sandbox": true and a "justification"; '
            "the user has to approve that single unsandboxed run.]"
        )

    def request(self, command: str, justification: str) -> EscapeOutcome:
        """Decide one unsandboxed retry of ``command`` (asks the human when allowed to)."""
        reason = self._deny_reason(command)
        if reason:
            return EscapeOutcome(
                False, f"refused: {reason}; it cannot run outside the sandbox", "deny"
            )
        if self.approver is None:
            return EscapeOutcome(
                False,
                "refused: running a command outside the sandbox needs a fresh human approval, "
                "and this run is headless (not even --yolo or --auto grants it); the command "
                "was NOT run",
                "headless",
            )
        if not justification.strip():
            return EscapeOutcome(
                False,
                "refused: escape_sandbox needs a justification; the command was NOT run",
                "no justification",
            )
        with self._lock:
            why = self._offers.pop(command, None)  # one retry per offer
        if why is None:
            return EscapeOutcome(
                False,
                "refused: escape_sandbox only retries a command the sandbox just blocked; run it "
                "normally first (the exact same command text); the command was NOT run",
                "not offered",
            )
        choice = self.approver(
            ApprovalRequest(
                tool_name="sandbox escape",
                summary=f"run OUTSIDE the sandbox: {command}",
                args={"command": command, "justification": justification},
                choices=(ApprovalChoice.ONCE, ApprovalChoice.DENY),
                suggested_rule="",
                reason=f"{justification} (the sandbox blocked it: {why})",
                fresh=True,
            )
        )
        if choice is ApprovalChoice.ONCE:
            return EscapeOutcome(
                True, "approved once by the user: running outside the sandbox", "approved"
            )
        return EscapeOutcome(
            False, "refused: the user declined running it outside the sandbox", "declined"
        )
