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

from typing import TYPE_CHECKING

from reasonix.lazy import lazy_exports

if TYPE_CHECKING:
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
    from reasonix.permission.policy import Policy, Verdict
    from reasonix.permission.rules import Rule, parse_rule
    from reasonix.permission.scope import ScopeChoice, ScopeGate, ScopeOutcome, ScopeRequest
    from reasonix.permission.suggest import suggest_rule

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

# Lazy re-exports: importing one submodule (e.g. for a constant) must not load
# the whole package before the first request (issue 20, tests/test_import_weight.py).
_LAZY = {
    "ApprovalChoice": "reasonix.permission.approval",
    "ApprovalRequest": "reasonix.permission.approval",
    "Approver": "reasonix.permission.approval",
    "BashAnalysis": "reasonix.permission.bash",
    "Decision": "reasonix.permission.modes",
    "ESCAPE_ARG": "reasonix.permission.escape",
    "EscapeGate": "reasonix.permission.escape",
    "EscapeOutcome": "reasonix.permission.escape",
    "Gate": "reasonix.permission.approval",
    "GateOutcome": "reasonix.permission.approval",
    "Kind": "reasonix.permission.bash",
    "Mode": "reasonix.permission.modes",
    "Policy": "reasonix.permission.policy",
    "Rule": "reasonix.permission.rules",
    "ScopeChoice": "reasonix.permission.scope",
    "ScopeGate": "reasonix.permission.scope",
    "ScopeOutcome": "reasonix.permission.scope",
    "ScopeRequest": "reasonix.permission.scope",
    "Segment": "reasonix.permission.bash",
    "Verdict": "reasonix.permission.policy",
    "analyze": "reasonix.permission.bash",
    "build_gate": "reasonix.permission.approval",
    "parse_allowed_tools": "reasonix.permission.approval",
    "parse_mode": "reasonix.permission.modes",
    "parse_rule": "reasonix.permission.rules",
    "suggest_rule": "reasonix.permission.suggest",
}


__getattr__ = lazy_exports(__name__, _LAZY)
