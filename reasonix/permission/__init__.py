"""Permission policy: decisions, rules, modes, the bash classifier and the approval gate.

Public surface (see docs/PERMISSIONS.md)::

    policy = Policy(mode, allow, ask, deny, allow_dynamic_bash=False, workspace=None)
    policy.decide(tool_name, read_only, args) -> Decision        # pure
    gate = Gate(policy.with_allow(parse_allowed_tools(flags)), approver, persist)
    gate.check(tool_name, read_only, args) -> GateOutcome

The OS sandbox for bash lives in :mod:`reasonix.permission.sandbox`; the
write-scope and sandbox-escape questions in :mod:`.scope` and :mod:`.escape`.
"""

from __future__ import annotations

from reasonix.permission.approval import (
    ApprovalChoice,
    ApprovalRequest,
    Approver,
    Gate,
    GateOutcome,
    build_gate,
    parse_allowed_tools,
)
from reasonix.permission.bash import BashAnalysis, Kind, Segment, analyze
from reasonix.permission.escape import ESCAPE_ARG, EscapeGate, EscapeOutcome
from reasonix.permission.modes import Decision, Mode, parse_mode
from reasonix.permission.policy import Policy, Verdict, suggest_rule
from reasonix.permission.rules import Rule, parse_rule
from reasonix.permission.scope import ScopeChoice, ScopeGate, ScopeOutcome, ScopeRequest

__all__ = [
    "ESCAPE_ARG",
    "ApprovalChoice",
    "ApprovalRequest",
    "Approver",
    "BashAnalysis",
    "Decision",
    "EscapeGate",
    "EscapeOutcome",
    "Gate",
    "GateOutcome",
    "Kind",
    "Mode",
    "Policy",
    "Rule",
    "ScopeChoice",
    "ScopeGate",
    "ScopeOutcome",
    "ScopeRequest",
    "Segment",
    "Verdict",
    "analyze",
    "build_gate",
    "parse_allowed_tools",
    "parse_mode",
    "parse_rule",
    "suggest_rule",
]
