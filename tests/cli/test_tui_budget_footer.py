"""Issue 36: the chat view's footer shows what is left of the run budget."""

from __future__ import annotations

from reasonix.cli.tui.state import AppState
from reasonix.cli.tui.view import footer_row
from reasonix.cli.tui.width import plain


def test_footer_shows_the_budget_left_after_the_cost() -> None:
    state = AppState()
    s = state.status
    s.model, s.cost = "p/m", "$0.0123"
    assert "budget" not in plain(footer_row(state, 120))  # no run budget: nothing shown
    s.budget = "budget $0.42 · 8m left"
    assert "$0.0123 · budget $0.42 · 8m left" in plain(footer_row(state, 120))
