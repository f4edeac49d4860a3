"""Issue 36: the chat view's sub-agent panel shows each child's live counters above
the composer for the turn that started them (pure render; the events are the ones a
turn's sub-agents send)."""

from __future__ import annotations

from reasonix.agent.events import Done, SubagentProgress
from reasonix.cli.tui.ingest import apply_event
from reasonix.cli.tui.state import AppState
from reasonix.cli.tui.view import render_frame
from reasonix.cli.tui.width import plain
from reasonix.provider.types import Usage


def progress(run_id: str, state: str, tokens: int, turns: int, **kw: object) -> SubagentProgress:
    fields = {"call_id": "t0", "label": "", "depth": 1, "cost": None, "seconds": 3.0,
              "limits": {}, **kw}  # fmt: skip
    return SubagentProgress(run_id, state=state, tokens=tokens, turns=turns, **fields)  # type: ignore[arg-type]


def screen(state: AppState, width: int = 80, height: int = 16) -> list[str]:
    return [plain(r) for r in render_frame(state, width, height).rows]


def test_the_panel_shows_each_child_and_goes_with_the_turn() -> None:
    state = AppState()
    assert not any("sub-agents" in row for row in screen(state))
    apply_event(state, progress("a1", "running", 0, 0, label="explore",
                                limits={"tokens": 5000.0, "turns": 10.0}))  # fmt: skip
    apply_event(state, progress("b2", "running", 900, 1, label="review", cost=0.0123))
    apply_event(state, progress("a1", "running", 1234, 2, label="explore",
                                limits={"tokens": 5000.0, "turns": 10.0}))  # fmt: skip
    apply_event(state, progress("c3", "budget", 2000, 3, label="fix\x1b[31m", depth=2))
    rows = screen(state)
    text = "\n".join(rows)
    assert "sub-agents: 2 running, 1 done" in text
    explore = next(r for r in rows if "explore" in r)
    assert "running" in explore and "1.2k/5k tok" in explore and "unpriced" in explore
    assert "2/10 turns" in explore
    review = next(r for r in rows if "review" in r)
    assert "900 tok · $0.0123 · 1 turns" in review
    nested = next(r for r in rows if "budget" in r)
    assert nested.startswith("    fix") and "\x1b" not in nested  # indented, escape removed
    head = next(i for i, r in enumerate(rows) if r.startswith("sub-agents"))
    assert head + 4 < len(rows) - 2  # the panel sits above the composer and the footer
    apply_event(state, Done("ok", "complete", 1, Usage()))
    assert not any("sub-agents" in row for row in screen(state))


def test_a_small_screen_keeps_the_composer_and_footer() -> None:
    state = AppState()
    for i in range(10):
        apply_event(state, progress(f"r{i}", "running", i, i, label=f"item{i}"))
    rows = screen(state, width=60, height=12)
    assert len(rows) == 12
    assert any("(+4 not shown)" in r for r in rows)
    assert sum("item" in r for r in rows) == 6
