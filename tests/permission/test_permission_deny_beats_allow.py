"""A deny rule wins over every allow rule, for file and MCP tools, in every mode
(issue 34, item 7: moving the allow check before the deny check went unnoticed).

Each case first shows the allow rule really matches the call (without the deny
the call is allowed), so the deny is what refuses it, not a rule that misses.
"""

from __future__ import annotations

from typing import Any

import pytest

from reasonix.permission import Decision, Mode, Policy, parse_rule
from reasonix.permission.approval import ApprovalChoice, ApprovalRequest, Gate

WS = "/ws"
HOME = "/home/u"

# (tool, read_only, args, allow rules, deny rules)
CASES: list[tuple[str, bool, dict[str, Any], list[str], list[str]]] = [
    ("edit_file", False, {"path": "src/secret.py"}, ["Edit(src/**)"], ["Edit(src/secret.py)"]),
    ("edit_file", False, {"path": "src/secret.py"}, ["Edit"], ["Edit(src/secret.py)"]),
    ("write_file", False, {"path": "src/secret.py"}, ["Write(src/**)"], ["Edit(src/**)"]),
    ("multi_edit", False, {"path": "/ws/src/a.py"}, ["Edit(src/**)"], ["Write(/ws/src/a.py)"]),
    ("move_file", False, {"source_path": "src/a.py", "path": "src/b.py"}, ["Edit(src/**)"],
     ["Edit(src/b.py)"]),
    ("read_file", True, {"path": "~/.ssh/id_rsa"}, ["Read"], ["Read(~/.ssh/**)"]),
    ("read_file", True, {"path": "/home/u/.ssh/id_rsa"}, ["Read(/home/u/**)"],
     ["Read(~/.ssh/**)"]),
    ("grep", True, {"path": "~/.ssh", "pattern": "KEY"}, ["Read(~/**)"], ["Read(~/.ssh/**)"]),
    ("mcp__gh__delete_repo", False, {"repo": "x"}, ["mcp__gh__delete_repo"],
     ["mcp__gh__delete_repo"]),
    ("mcp__gh__delete_repo", False, {}, ["mcp__gh"], ["mcp__gh__delete_repo"]),
    ("mcp__gh__delete_repo", False, {}, ["mcp__gh__delete_repo"], ["mcp__gh__*"]),
    ("mcp__gh__get_issue", True, {"n": 1}, ["mcp__gh__get_issue"], ["mcp__gh"]),
]  # fmt: skip


@pytest.mark.parametrize("mode", [m.value for m in Mode])
@pytest.mark.parametrize(("tool", "read_only", "args", "allow", "deny"), CASES)
def test_deny_beats_allow_in_every_mode(
    mode: str, tool: str, read_only: bool, args: dict[str, Any], allow: list[str], deny: list[str]
) -> None:
    allowed = Policy(mode, allow=allow, workspace=WS, home=HOME)
    if not (mode == "plan" and tool.startswith("mcp__") and not read_only):  # blocked anyway
        assert allowed.evaluate(tool, read_only, args).reason.startswith("matches allow rule")
    both = Policy(mode, allow=allow, deny=deny, workspace=WS, home=HOME)
    verdict = both.evaluate(tool, read_only, args)
    assert verdict.decision is Decision.DENY, verdict
    assert verdict.reason == f"matches deny rule {parse_rule(deny[0]).text!r}"
    # session grants and --allowed-tools are allow rules too: they do not beat it either
    assert both.with_allow([*allow, tool]).decide(tool, read_only, args) is Decision.DENY


@pytest.mark.parametrize(("tool", "read_only", "args", "allow", "deny"), CASES)
def test_the_gate_refuses_without_asking(
    tool: str, read_only: bool, args: dict[str, Any], allow: list[str], deny: list[str]
) -> None:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> ApprovalChoice:
        asked.append(request)
        return ApprovalChoice.ONCE  # never reached: a deny is no question

    policy = Policy("ask", allow=allow, deny=deny, workspace=WS, home=HOME)
    for gate in (Gate(policy, approver), Gate(policy, None)):
        gate.grant(allow[0])  # "allow for this session" answered earlier
        outcome = gate.check(tool, read_only, args)
        assert not outcome.allowed and outcome.decision is Decision.DENY
        hooked = gate.check(tool, read_only, args, hook_allow=True)  # a hook's "allow" neither
        assert not hooked.allowed and hooked.decision is Decision.DENY
    assert asked == []
