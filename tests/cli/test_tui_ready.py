"""The chat view between "the runtime is built" and "the view has taken it".

The boot thread sets ``App.rt`` and then posts "ready"; the UI thread installs the
command registry when it handles that post. A line submitted in between must wait
with the other early lines, not reach a registry that is not there yet (a remote
chat hit this: ``/memory`` typed the moment the prompt appeared).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

import pytest

from reasonix.cli.tui.app import App


@pytest.fixture
def app() -> Iterator[App]:
    view = App(argparse.Namespace())
    yield view
    for fd in (view.wake_r, view.wake_w):
        os.close(fd)


def test_a_line_typed_before_the_view_is_ready_waits(app: App) -> None:
    app.rt = object()  # built by the boot thread; "ready" not handled yet
    app._submit("/memory")
    app._submit("hello")
    assert app.pending == ["/memory", "hello"]
    assert app.state.hint == "sending when ready…"
    assert app.job is None  # nothing started


def test_mode_cycling_and_commands_wait_for_the_view_too(app: App) -> None:
    app.rt = object()  # has no set_mode: touching it would raise
    app._cycle_mode()
    app._start_command("/compact", echo=True)
    assert app.job is None and not app.state.transcript.blocks
