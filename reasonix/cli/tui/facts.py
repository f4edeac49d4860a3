"""What the chat view's footer shows, gathered from the runtime, and its completions.

Kept apart from :mod:`reasonix.cli.tui.app` so the app stays the event loop and
its wiring; these run on the UI thread and never raise into it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from .state import Status

__all__ = ["complete_ref", "complete_slash", "refresh_facts"]


def refresh_facts(rt: Any, s: Status) -> None:
    """Model, mode, session, context, cache hits, cost and budget left, from ``rt``."""
    from reasonix.agent.telemetry import estimate_cost

    s.model, s.mode, s.session = rt.resolved.ref, rt.mode, rt.session.id
    context = rt.context
    if context is not None:
        s.context_window = int(getattr(context, "context_window", 0) or 0)
        s.compact_at = int(getattr(context, "trigger", 0) or 0)
    telemetry = rt.telemetry
    s.cache_ratio = telemetry.cache_hit_ratio
    cost = estimate_cost(telemetry.total, rt.price)
    s.cost = str(cost) if cost is not None else ""
    s.budget = rt.run_budget.remaining(telemetry.total, rt.price)


def complete_slash(commands: Any, prefix: str) -> list[tuple[str, str]]:
    """``/`` completions (name, description); none rather than a crash."""
    if commands is None:
        return []
    from .ingest import clean_line

    try:
        return [(t, clean_line(d)) for t, d in commands.complete(prefix)]
    except Exception:  # noqa: BLE001 - no candidates rather than a crash
        return []


def complete_ref(commands: Any, word: str) -> list[tuple[str, str]]:
    """``@`` completions (path, description); none rather than a crash."""
    if commands is None:
        return []
    from .ingest import clean_line

    try:
        return [(clean_line(t), clean_line(d)) for t, d in commands.complete_ref(word)]
    except Exception:  # noqa: BLE001
        return []
