"""The tool list a session sends, pinned in its transcript (issue 37).

A provider caches the prompt it rendered, tools first, so a session must send
the same tool schemas from its first request to its last — across ``run -c``,
``/resume``, ``/model``, a continued sub-agent and an upgrade of reasonix
whose tools are worded differently. The first agent built for a session writes
the schemas it sends as one ``tools`` record; every later agent of the session
sends those, byte for byte (a JSON round trip keeps key order, text and
numbers). The registry still decides what runs: a pinned tool this build no
longer has answers as an unknown tool, and a tool this build adds is offered
from a new session on (the notice names them).

A session written before this record existed has none: the current schemas
are pinned at its next start, the best that can be known of what it sent.

A session started against a small context window (issue 37, item 4) pins a
short list (the core built-ins and ``use_capability``) and marks the record
``"small": true``: the choice is made once, and a resumed session keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from reasonix.provider.types import ToolSchema

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.session import Session

__all__ = ["TOOLS", "pin_tools", "pinned_record"]

TOOLS = "tools"  # the record type


def _valid(tools: Any) -> bool:
    return isinstance(tools, list) and all(
        isinstance(t, dict)
        and isinstance(t.get("name"), str)
        and isinstance(t.get("description"), str)
        and isinstance(t.get("parameters"), dict)
        for t in tools
    )


def pinned_record(session: Session) -> dict[str, Any] | None:
    """The session's latest valid ``tools`` record, or None when it has none."""
    found = None
    for rec in session.iter_type(TOOLS):  # the latest valid one wins
        if _valid(rec.get("tools")):
            found = rec
    return found


def pin_tools(
    session: Session, current: Sequence[dict[str, Any]], *, small: bool = False
) -> tuple[list[ToolSchema], str]:
    """The schemas ``session`` sends and a notice ("" when there is nothing to tell).

    ``current`` is what this build's registry offers (``Registry.schemas()``), or
    the small-window list (``small``); it is pinned when the session has no
    ``tools`` record yet.
    """
    rec = pinned_record(session)
    if rec is None:
        pinned = [dict(t) for t in current]
        record: dict[str, Any] = {"type": TOOLS, "tools": pinned}
        if small:
            record["small"] = True
        session.append(record)
        return [ToolSchema(**t) for t in pinned], ""
    pinned = rec["tools"]
    added = sorted({t["name"] for t in current} - {t["name"] for t in pinned})
    note = ""
    if added and not rec.get("small"):  # a small session reaches the others on demand
        note = (
            f"this session keeps the {len(pinned)} tools it started with, so the provider's "
            f"prompt cache still serves it; a new session (/new) also offers: " + ", ".join(added)
        )
    schemas = [ToolSchema(t["name"], t["description"], t["parameters"]) for t in pinned]
    return schemas, note
