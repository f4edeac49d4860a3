"""The reassessment nudge (LOOP-8): a one-time hint when a todo list stops moving.

While the model's todo list (``todo_write``, kept in ``ctx.extra["todos"]``)
has unfinished items, every tool round that leaves the list unchanged counts
as a round without progress; re-sending the same list is an exact repeat and
does not count as progress either. After :data:`NUDGE_ROUNDS` such rounds in
a row the host appends :data:`NUDGE_TEXT` to that round's last tool result —
once per run, so a model that is legitimately busy is not nagged.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["NUDGE_ROUNDS", "NUDGE_TEXT", "ProgressWatch"]

NUDGE_ROUNDS = 8
NUDGE_TEXT = (
    "[reasonix] The last 8 tool rounds did not move your todo list. Step back: is the "
    "current approach working? Update the todo list with what you now know, change "
    "tactics, or tell the user what is blocking you."
)


class ProgressWatch:
    """Counts tool rounds without todo progress; says when to nudge."""

    def __init__(self) -> None:
        self.last = ""
        self.stale = 0
        self.fired = False

    def after_round(self, todos: Any) -> str:
        """Feed the todo list after one tool round; returns the nudge text or ""."""
        items = todos if isinstance(todos, list) else []
        snapshot = json.dumps(items, sort_keys=True)
        active = any(isinstance(t, dict) and t.get("status") != "completed" for t in items)
        if snapshot != self.last:
            self.last, self.stale = snapshot, 0
            return ""
        if not active or self.fired:
            return ""
        self.stale += 1
        if self.stale < NUDGE_ROUNDS:
            return ""
        self.fired = True
        return NUDGE_TEXT
