"""An Ask decision as ``session/request_permission``, and the answer back as a choice.

The four ACP option kinds map onto the permission layer: allow once →
:attr:`ApprovalChoice.ONCE`; allow always → :attr:`ApprovalChoice.ALWAYS`,
which the gate saves as an allow rule in ``./reasonix.toml``; reject once →
DENY; reject always → DENY plus the same rule saved under
``[permissions].deny`` and applied to the live policy. The option names show
the rule that "always" saves. A cancelled request, a request the client could
not answer and an unknown option all deny.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass
from reasonix.permission import ApprovalChoice, ApprovalRequest

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Answer", "options_for", "read_answer", "save_deny_rule"]

ALLOW_ONCE, ALLOW_ALWAYS = "allow-once", "allow-always"
REJECT_ONCE, REJECT_ALWAYS = "reject-once", "reject-always"


@dataclass(frozen=True)
class Answer:
    """The user's decision: the choice for the gate and, maybe, a rule to deny from now on."""

    choice: ApprovalChoice
    deny_rule: str = ""


def options_for(request: ApprovalRequest) -> list[dict[str, Any]]:
    """The ``PermissionOption`` list for one request (only "once" without a rule to save)."""
    rule = request.suggested_rule
    remember = ApprovalChoice.ALWAYS in request.choices and bool(rule)
    options = [{"optionId": ALLOW_ONCE, "name": "Allow once", "kind": "allow_once"}]
    if remember:
        options.append(
            {
                "optionId": ALLOW_ALWAYS,
                "name": f"Always allow {rule} (saved to ./reasonix.toml)",
                "kind": "allow_always",
            }
        )
    options.append({"optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once"})
    if remember:
        options.append(
            {
                "optionId": REJECT_ALWAYS,
                "name": f"Always reject {rule} (saved to ./reasonix.toml)",
                "kind": "reject_always",
            }
        )
    return options


def read_answer(result: Any, request: ApprovalRequest) -> Answer:
    """Map a ``RequestPermissionResponse`` onto the gate's choice (anything odd denies)."""
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return Answer(ApprovalChoice.DENY)  # cancelled (or malformed): a deny
    offered = {o["optionId"] for o in options_for(request)}
    option = outcome.get("optionId")
    if option not in offered:
        return Answer(ApprovalChoice.DENY)
    if option == ALLOW_ONCE:
        return Answer(ApprovalChoice.ONCE)
    if option == ALLOW_ALWAYS:
        return Answer(ApprovalChoice.ALWAYS)
    if option == REJECT_ALWAYS:
        return Answer(ApprovalChoice.DENY, request.suggested_rule)
    return Answer(ApprovalChoice.DENY)


def save_deny_rule(gate: Any, workspace: Path, rule: str) -> str:
    """Deny ``rule`` for this session now and in ``./reasonix.toml``; a note on failure."""
    from reasonix.config import tomledit
    from reasonix.errors import ReasonixError

    gate.policy = gate.policy.with_deny([rule])
    try:
        tomledit.append_to_array(workspace / "reasonix.toml", "permissions", "deny", rule)
    except (OSError, ReasonixError) as err:
        return f"rejected for this session; saving the deny rule {rule!r} failed: {err}"
    return ""
