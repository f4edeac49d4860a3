"""The workspace trust question over ACP: one ``session/request_permission``.

An editor starts sessions in folders it opened, cloned ones included. When the
folder declares what needs trust (hooks, MCP servers, providers at other hosts,
widening rules; :mod:`reasonix.config.trust_rules`) and nothing answered yet,
the session's first prompt asks the editor's user, as a permission request
whose options say what they do: trust and remember (recorded in the user's
home), trust for this session, or leave those declarations out. A request the
client cannot answer, or a cancelled one, leaves them out (fail closed).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .rpc import RpcError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from reasonix.cancel import Cancel
    from reasonix.config.trust import TrustItem

__all__ = ["TRUST_ALWAYS", "TRUST_NO", "TRUST_ONCE", "ask_trust", "trust_request"]

TRUST_ALWAYS, TRUST_ONCE, TRUST_NO = "trust-always", "trust-once", "trust-no"
TRUST_CALL_ID = "reasonix-workspace-trust"


def trust_request(session_id: str, workspace: Path, items: list[TrustItem]) -> dict[str, Any]:
    """The ``session/request_permission`` params that ask to trust ``workspace``."""
    lines = [f"This folder is not trusted yet: {workspace}",
             "Its files declare what would run code or widen access:",
             *(f"- {item.line()}" for item in items),
             "A cloned repository is not you. Trust it only if you trust its authors."]  # fmt: skip
    return {
        "sessionId": session_id,
        "toolCall": {
            "toolCallId": TRUST_CALL_ID,
            "title": "Trust this workspace?",
            "kind": "other",
            "status": "pending",
            "content": [{"type": "content", "content": {"type": "text", "text": "\n".join(lines)}}],
        },
        "options": [
            {"optionId": TRUST_ALWAYS, "name": "Trust this folder (remember)",
             "kind": "allow_always"},
            {"optionId": TRUST_ONCE, "name": "Trust for this session", "kind": "allow_once"},
            {"optionId": TRUST_NO, "name": "Don't trust (leave them out)",
             "kind": "reject_once"},
        ],
    }  # fmt: skip


def ask_trust(
    request: Callable[[str, dict[str, Any], Cancel | None], Any],
    session_id: str,
    workspace: Path,
    items: list[TrustItem],
    cancel: Cancel,
) -> bool:
    """Ask; True when the user trusts the workspace (a "remember" is recorded in the home)."""
    from reasonix.errors import Cancelled, ReasonixError

    try:
        result = request(
            "session/request_permission", trust_request(session_id, workspace, items), cancel
        )
    except (RpcError, Cancelled, ReasonixError):
        return False
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return False
    option = outcome.get("optionId")
    if option == TRUST_ALWAYS:
        from reasonix.config.trust import grant

        grant(workspace)
    return option in (TRUST_ALWAYS, TRUST_ONCE)
