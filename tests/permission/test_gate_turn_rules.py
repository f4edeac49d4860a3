"""``Gate.for_turn``: a command's ``allowed-tools`` as allow rules for one turn (issue 35)."""

from __future__ import annotations

import pytest

from reasonix.errors import ConfigError
from reasonix.permission import ApprovalChoice, ApprovalRequest, Decision, Gate, Policy


def _bash(gate: Gate, command: str) -> bool:
    return bool(gate.check("bash", False, {"command": command}).allowed)


def test_turn_rules_allow_only_inside_the_block() -> None:
    gate = Gate(Policy("ask"))  # headless: an ask is a refusal
    assert not _bash(gate, "git add a.txt")
    with gate.for_turn(["Bash(git add:*)", "Bash(git commit:*)"]):
        assert _bash(gate, "git add a.txt") and _bash(gate, "git add . && git commit -m x")
        assert not _bash(gate, "git push")  # nothing wider than the rules
    assert gate.turn_rules == () and not _bash(gate, "git add a.txt")


def test_turn_rules_are_gone_after_an_error_too() -> None:
    gate = Gate(Policy("ask"))
    with pytest.raises(RuntimeError), gate.for_turn(["Bash(make:*)"]):
        raise RuntimeError("the turn failed")
    assert not _bash(gate, "make test")


def test_deny_and_ask_rules_beat_turn_rules() -> None:
    gate = Gate(Policy("ask", deny=["Bash(git push:*)"], ask=["Bash(git commit:*)"]))
    with gate.for_turn(["Bash(git push:*)", "Bash(git commit:*)", "Read"]):
        out = gate.check("bash", False, {"command": "git push origin"})
        assert not out.allowed and out.decision is Decision.DENY
        assert gate.check("bash", False, {"command": "git commit"}).decision is Decision.ASK
        assert gate.check("read_file", True, {"path": "a.py"}).allowed


def test_grants_and_policy_changes_during_the_turn_stay_after_it() -> None:
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> ApprovalChoice:
        seen.append(request)
        return ApprovalChoice.SESSION

    gate = Gate(Policy("ask"), approver)
    with gate.for_turn(["Bash(git add:*)"]):
        assert _bash(gate, "git add x") and not seen  # pre-approved: not asked
        assert _bash(gate, "npm test") and len(seen) == 1  # asked, granted for the session
        gate.policy = gate.policy.with_deny(["Bash(rm:*)"])  # an editor's "always reject"
        assert _bash(gate, "git add y")  # still there after the policy was replaced
        assert gate.check("bash", False, {"command": "rm x"}).decision is Decision.DENY
    assert gate.session_rules == ["Bash(npm test)"]
    assert _bash(gate, "npm test") and len(seen) == 1
    assert gate.check("bash", False, {"command": "rm x"}).decision is Decision.DENY
    assert _bash(gate, "git add z") and len(seen) == 2  # asked again: the turn rule is gone


def test_a_malformed_turn_rule_is_refused_before_the_turn() -> None:
    gate = Gate(Policy("ask"))
    with pytest.raises(ConfigError), gate.for_turn(["Bash(unclosed"]):
        pass
    assert gate.turn_rules == ()
