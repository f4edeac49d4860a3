"""The chat view between "the runtime is built" and "the view has taken it".

The boot thread sets ``App.built`` (the runtime's half of the view, tui/live.py) and
then posts "ready"; the UI thread takes it as ``App.live`` when it handles that post.
A line submitted in between must wait with the other early lines, not reach a
registry that is not there yet (a remote chat hit this: ``/memory`` typed the
moment the prompt appeared).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

import pytest

from reasonix.cli.tui.app import App, Backend


@pytest.fixture
def app() -> Iterator[App]:
    view = App(argparse.Namespace())
    yield view
    for fd in (view.wake_r, view.wake_w):
        os.close(fd)


def test_a_line_typed_before_the_view_is_ready_waits(app: App) -> None:
    app.built = Backend()  # built by the boot thread; "ready" not handled yet (any call raises)
    app._act(("submit", "/memory"))
    app._act(("submit", "hello"))
    assert app.pending == ["/memory", "hello"]
    assert app.state.hint == "sending when ready…"
    assert app.live is None  # nothing reached the runtime


def test_mode_cycling_and_commands_wait_for_the_view_too(app: App) -> None:
    app.built = Backend()  # touching it would raise NotImplementedError
    for action in (("mode",), ("command", "/compact"), ("cancel",)):
        app._act(action)
    assert not app.pending and not app.state.transcript.blocks


def test_ready_hands_the_built_runtime_to_the_view(app: App) -> None:
    seen: list[tuple[str, tuple[object, ...]]] = []

    class Recorder(Backend):
        def handle(self, kind: str, payload: tuple[object, ...]) -> None:
            seen.append((kind, payload))

        def act(self, action: tuple[object, ...]) -> None:
            seen.append(("act", action))

    app.built = Recorder()
    app._handle("ready", ([], []))
    app._act(("submit", "hello"))
    assert app.live is app.built
    assert seen == [("ready", ([], [])), ("act", ("submit", "hello"))]
