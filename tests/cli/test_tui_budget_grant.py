"""Issue 36: the chat view asks whether to grant more when a run budget is spent."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from coord_kit import project

from reasonix.agent.events import Done
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cli.tui.app import App
from reasonix.cli.tui.bridge import Commands
from reasonix.cli.tui.live import Live
from reasonix.cli.tui.state import ConfirmOverlay
from reasonix.provider.types import Usage


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    ws = tmp_path / "repo"
    project(ws, "http://127.0.0.1:9", planner=False, agent="max_tokens = 1000")
    view = App(argparse.Namespace())
    rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
    view.built = view.live = Live(view, rt, Commands(rt))
    yield view
    rt.close()
    for fd in (view.wake_r, view.wake_w):
        os.close(fd)


def test_a_spent_budget_asks_and_yes_grants_the_same_again(app: App) -> None:
    app._handle("event", (Done("", "complete", 1, Usage()), {}))
    assert not app.state.overlays  # a turn that ended otherwise asks nothing
    app._handle("event", (Done("", "budget", 2, Usage()), {}))
    (ask,) = app.state.overlays
    assert isinstance(ask, ConfirmOverlay) and "grant the same amount again" in ask.question
    assert app.state.status.budget == "budget 1.0k tok left"
    assert ask.yes is not None
    app.state.overlays.pop()  # what the y key does (control.py), then its action
    app._act(ask.yes)
    rt = _live(app).rt
    assert rt.run_budget.max_tokens == 1000  # nothing spent yet: the same amount again
    assert rt.run_budget.base == (0.0, 1000, 0.0)
    assert "granted: budget 1.0k tok left" in app.state.transcript.blocks[-1].text


def _live(app: App) -> Live:
    assert isinstance(app.live, Live)
    return app.live
