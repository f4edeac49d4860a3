"""A tool round that completes normally never cancels its turn (a race once did)."""

from __future__ import annotations

import sys

from reasonix.agent.execute import run_in_worker
from reasonix.cancel import Cancel
from reasonix.provider.types import ToolCall
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool


def _registry() -> Registry:
    reg = Registry()
    reg.add(
        FunctionTool(
            name="noop",
            description="does nothing",
            schema={"type": "object", "properties": {}},
            fn=lambda args, ctx: "ok",
            read_only=True,
        )
    )
    return reg


def test_completed_rounds_leave_the_turn_running() -> None:
    """The worker is still alive for a moment after queuing its last event; that
    moment must not count as an early close (it did, and aborted turns on 3.13)."""
    reg = _registry()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, to open the window wide
    try:
        _rounds(reg)
    finally:
        sys.setswitchinterval(old)


def _rounds(reg: Registry) -> None:
    for _ in range(300):
        cancel = Cancel()
        gen = run_in_worker([ToolCall("c1", "noop", "{}")], reg, None, ToolContext(), cancel, None)
        try:
            while True:
                next(gen)
        except StopIteration as stop:
            results = stop.value
        assert [r.content for r in results] == ["ok"]
        assert not cancel.cancelled


def test_closing_the_round_early_cancels_it() -> None:
    cancel = Cancel()
    gen = run_in_worker(
        [ToolCall("c1", "noop", "{}")], _registry(), None, ToolContext(), cancel, None
    )
    next(gen)  # the first event (tool start)
    gen.close()
    assert cancel.cancelled
