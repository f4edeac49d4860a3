"""The sandbox escape (§3.7, §9): one retry, offered only after a block, a fresh human answer.

The gate never decides it by rule or mode (and never asks twice); a deny rule refuses it
and keeps it from being offered; headless refuses, YOLO included.
"""

from __future__ import annotations

from typing import Any

import pytest

from reasonix.boot.permissions import escape_gate
from reasonix.permission import (
    ApprovalChoice,
    ApprovalRequest,
    Decision,
    EscapeGate,
    Gate,
    Policy,
)

CMD = "npm install --global left-pad"


class Human:
    """Answers approval questions from a list and keeps what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return self.answers.pop(0)


def test_a_granted_retry_is_asked_freshly_with_only_once_or_deny() -> None:
    human = Human(ApprovalChoice.ONCE)
    gate = EscapeGate(approver=human)
    note = gate.offer(CMD, "/usr/lib/node_modules is outside the sandbox's writable roots")
    assert '"escape_sandbox": true' in note and "approve" in note
    outcome = gate.request(CMD, "a global install writes under /usr")
    assert outcome.granted and outcome.detail == "approved"
    (asked,) = human.asked
    assert asked.choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    assert asked.fresh and asked.suggested_rule == ""  # nothing to remember or save
    assert CMD in asked.summary and "OUTSIDE the sandbox" in asked.summary
    assert "a global install writes under /usr" in asked.reason
    assert "outside the sandbox's writable roots" in asked.reason


def test_one_retry_per_offer_and_only_for_the_exact_command() -> None:
    human = Human(ApprovalChoice.ONCE, ApprovalChoice.ONCE)
    gate = EscapeGate(approver=human)
    gate.offer(CMD, "blocked")
    assert not gate.request(CMD + " ", "why").granted  # not the same command text
    assert gate.request(CMD, "why").granted
    again = gate.request(CMD, "why")  # the offer was used up
    assert not again.granted and again.detail == "not offered" and "NOT run" in again.message
    assert len(human.asked) == 1


@pytest.mark.parametrize("answer", [ApprovalChoice.DENY, None, ApprovalChoice.SESSION])
def test_anything_but_once_declines(answer: Any) -> None:
    gate = EscapeGate(approver=Human(answer))
    gate.offer(CMD, "blocked")
    outcome = gate.request(CMD, "why")
    assert not outcome.granted and outcome.detail == "declined"


def test_headless_refuses_without_asking_and_says_so_in_the_offer() -> None:
    gate = EscapeGate(approver=None)
    note = gate.offer(CMD, "blocked")
    assert "headless" in note and "--add-dir" in note and "escape_sandbox" not in note
    outcome = gate.request(CMD, "why")
    assert not outcome.granted and outcome.detail == "headless"
    assert "--yolo" in outcome.message and "NOT run" in outcome.message


def test_a_justification_is_required() -> None:
    human = Human()
    gate = EscapeGate(approver=human)
    gate.offer(CMD, "blocked")
    assert gate.request(CMD, "  ").detail == "no justification"
    assert human.asked == []


def _gate(mode: str, deny: list[str] | None = None, human: Human | None = None) -> Gate:
    return Gate(Policy(mode, [], [], deny or []), human)


def test_under_a_deny_rule_it_is_never_offered_nor_asked() -> None:
    human = Human()
    gate = _gate("bypassPermissions", ["Bash(npm install:*)"], human)
    escape = escape_gate(gate, human)  # type: ignore[arg-type]
    assert escape.offer(CMD, "blocked") == ""
    outcome = escape.request(CMD, "why")
    assert not outcome.granted and outcome.detail == "deny"
    args = {"command": CMD, "escape_sandbox": True, "justification": "why"}
    checked = gate.check("bash", False, args)
    assert not checked.allowed and checked.decision is Decision.DENY
    assert human.asked == []


@pytest.mark.parametrize("mode", ["ask", "auto", "acceptEdits", "bypassPermissions", "plan"])
def test_the_gate_leaves_the_decision_to_the_fresh_question(mode: str) -> None:
    """No mode or allow rule grants an escape, and the user is not asked twice."""
    human = Human()
    gate = _gate(mode, human=human)
    args = {"command": CMD, "escape_sandbox": True, "justification": "why"}
    outcome = gate.check("bash", False, args)
    assert outcome.allowed and outcome.decision is Decision.ASK and human.asked == []


def test_an_allow_rule_cannot_pre_approve_the_retry() -> None:
    human = Human(ApprovalChoice.DENY)
    gate = Gate(Policy("auto", [f"Bash={CMD}", "Bash"], [], []), human)
    escape = escape_gate(gate, human)  # type: ignore[arg-type]
    escape.offer(CMD, "blocked")
    assert not escape.request(CMD, "why").granted  # the human said no; the rule did not count
    assert len(human.asked) == 1
