"""The chat view's sub-agent panel: live counters of this turn's sub-agents (issue 36).

Above the composer while a turn has started sub-agents: one row per child
(nested ones indented) with its state, tokens, cost, turns and time, against
its budget where it has one. The rows come from the turn's
:class:`~reasonix.agent.events.SubagentProgress` events; the turn's end clears them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .width import Line, fit

if TYPE_CHECKING:
    from typing import Any

    from .state import AppState

__all__ = ["MAX_ROWS", "note", "panel_rows"]

MAX_ROWS = 6  # children shown; the rest are counted in the header
_STYLE = {"running": "hint", "complete": "ok", "cancelled": "warn", "budget": "warn"}


def note(state: AppState, event: Any) -> None:
    """Keep a child's latest counters (the label is model text: made printable)."""
    from .ingest import clean_line

    state.subagents[str(event.run_id)] = (clean_line(str(event.label)), event)


def _tokens(n: float) -> str:
    from .view import human_tokens

    return human_tokens(int(n))


def _row(label: str, event: Any, width: int) -> Line:
    limits = event.limits
    tokens = _tokens(event.tokens) + (f"/{_tokens(limits['tokens'])}" if "tokens" in limits else "")
    cost = "unpriced" if event.cost is None else f"${event.cost:.4f}"
    if "cost" in limits:
        cost += f"/${limits['cost']:.2f}"
    turns = f"{event.turns}" + (f"/{int(limits['turns'])}" if "turns" in limits else "")
    name = label or str(event.run_id)[:8] or "sub-agent"
    indent = "  " * max(0, int(event.depth) - 1)
    facts = f" {tokens} tok · {cost} · {turns} turns · {event.seconds:.0f}s"
    spans = ((f"  {indent}{name} ", "text"), (event.state, _STYLE.get(event.state, "dim")),
             (facts, "dim"))  # fmt: skip
    return fit(spans, width, ellipsis=True)


def panel_rows(state: AppState, width: int) -> list[Line]:
    """The panel's rows (none without sub-agents this turn)."""
    if not state.subagents:
        return []
    children: list[tuple[str, Any]] = list(state.subagents.values())  # (label, progress event)
    running = sum(1 for _, e in children if e.state == "running")
    more = len(children) - MAX_ROWS
    head = f"sub-agents: {running} running, {len(children) - running} done"
    head += f" (+{more} not shown)" if more > 0 else ""
    rows = [fit(((head, "dim"),), width, ellipsis=True)]
    shown = sorted(children, key=lambda c: c[1].state != "running")[:MAX_ROWS]
    return rows + [_row(label, event, width) for label, event in shown]
