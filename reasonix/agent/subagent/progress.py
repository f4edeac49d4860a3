"""Live counters of a running sub-agent, sent as :class:`~..events.SubagentProgress` (issue 36).

The spawn primitive runs inside the parent's tool call, on the parent turn's
tool worker; it sends progress through the same event queue as that turn's
approval requests (the parent runtime's approver), so every frontend that
reads the parent's events sees it. A nested child's progress reaches its own
parent's turn and is passed up from there (:meth:`~.spawn.TaskTool._run_turn`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..events import Event, SubagentProgress
from ..telemetry import estimate_cost

if TYPE_CHECKING:
    from typing import Any

    from .allowance import Grant

__all__ = ["Emit", "ProgressReporter"]

Emit = Callable[[Event], None]


class ProgressReporter:
    """Sends one child's counters to the parent's event stream (a no-op without one)."""

    def __init__(
        self,
        emit: Emit | None,
        child: Any,
        grant: Grant | None,
        *,
        call_id: str,
        label: str,
        depth: int,
    ) -> None:
        self.emit, self.child, self.grant = emit, child, grant
        self.call_id, self.label, self.depth = call_id, label, depth
        self.started = time.monotonic()
        self.state = "running"

    def counters(self) -> tuple[int, float | None, int]:
        """The child's own tokens, cost (None: unpriced) and model requests so far."""
        telemetry = self.child.telemetry
        total = telemetry.total
        cost = estimate_cost(total, getattr(self.child, "price", None))
        return (
            total.input_tokens + total.output_tokens,
            cost.amount if cost is not None else None,
            len(telemetry.per_request),
        )

    def event(self, state: str) -> SubagentProgress:
        """The child's counters now, in ``state``."""
        tokens, cost, turns = self.counters()
        limits = self.grant.cap.limits() if self.grant is not None else {}
        return SubagentProgress(
            run_id=str(getattr(self.child.session, "id", "")),
            call_id=self.call_id,
            label=self.label,
            depth=self.depth,
            state=state,
            tokens=tokens,
            cost=cost,
            turns=turns,
            seconds=round(time.monotonic() - self.started, 3),
            limits=limits,
        )

    def send(self, state: str = "running") -> None:
        """Report the counters."""
        self.state = state
        if self.emit is not None:
            self.emit(self.event(state))

    def relay(self, event: SubagentProgress) -> None:
        """Pass a nested child's progress up, under the parent's tool call that holds it."""
        if self.emit is not None:
            self.emit(event._replace(call_id=self.call_id))
