"""Rewind and undo put back what a path *was*: a symlink as a symlink, a directory where a
file or a link now stands (and the other way round), and never leave temporary files."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from reasonix.agent.checkpoints import CheckpointStore
from reasonix.agent.rewind import rewind, undo
from reasonix.agent.session import Session
from reasonix.agent.turnrecorder import TurnRecorder


def _agent_turn(ws: Path, store: CheckpointStore, change: Callable[[], None]) -> Session:
    """One recorded turn in which the agent makes ``change`` to the workspace."""
    session = Session.create(ws)
    rec = TurnRecorder(store)
    rec.begin(session.id, len(session.records()), "change things")
    rec.tools_starting()
    rec.before_write()
    change()
    rec.tools_done()
    rec.end()
    store.settle()
    session.close()
    assert not rec.notices
    return session


def _state(root: Path) -> dict[str, str]:
    """Every name under ``root`` (the agent's state excluded): what it is, and holds."""
    seen: dict[str, str] = {}
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(here) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                seen[rel] = "link -> " + os.readlink(path)
            elif path.is_dir():
                seen[rel] = "dir"
            else:
                seen[rel] = "file " + path.read_text()
    return seen


def _no_temporaries(root: Path) -> None:
    left = [str(p) for p in root.rglob("*") if ".rewind-" in p.name]
    assert left == []


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "target.txt").write_text("the link's target\n")
    (ws / "real").mkdir()
    (ws / "real" / "inner.txt").write_text("inside real\n")
    return ws


def _rm(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


# (what is there before the turn, what the agent leaves) — each a type change
CASES: dict[str, tuple[Callable[[Path], None], Callable[[Path], None]]] = {
    "link-edited-through": (
        lambda ws: os.symlink("target.txt", ws / "link"),
        lambda ws: (_rm(ws / "link"), (ws / "link").write_text("a file now\n")),
    ),
    "file-to-link": (
        lambda ws: (ws / "f").write_text("the link's target\n"),  # same bytes as the target
        lambda ws: (_rm(ws / "f"), os.symlink("target.txt", ws / "f")),
    ),
    "link-retargeted": (
        lambda ws: os.symlink("target.txt", ws / "link"),
        lambda ws: (_rm(ws / "link"), os.symlink("real/inner.txt", ws / "link")),
    ),
    "dangling-link-removed": (
        lambda ws: os.symlink("nowhere", ws / "link"),
        lambda ws: _rm(ws / "link"),
    ),
    "dir-to-link": (
        lambda ws: ((ws / "d").mkdir(), (ws / "d" / "x.txt").write_text("x\n")),
        lambda ws: (_rm(ws / "d"), os.symlink("real", ws / "d")),
    ),
    "link-to-dir": (
        lambda ws: os.symlink("real", ws / "d"),
        lambda ws: (
            _rm(ws / "d"),
            (ws / "d" / "sub").mkdir(parents=True),
            (ws / "d" / "sub" / "x.txt").write_text("x\n"),
        ),
    ),
    "file-to-dir": (
        lambda ws: (ws / "f").write_text("a file\n"),
        lambda ws: (_rm(ws / "f"), (ws / "f").mkdir(), (ws / "f" / "y.txt").write_text("y\n")),
    ),
    "dir-to-file": (
        lambda ws: (
            (ws / "g" / "h").mkdir(parents=True),
            (ws / "g" / "h" / "z.txt").write_text("z\n"),
        ),
        lambda ws: (_rm(ws / "g"), (ws / "g").write_text("a file now\n")),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rewind_and_undo_put_back_links_and_changed_types(tmp_path: Path, case: str) -> None:
    ws = _workspace(tmp_path)
    setup, change = CASES[case]
    setup(ws)
    before = _state(ws)
    store = CheckpointStore(ws)
    session = _agent_turn(ws, store, lambda: change(ws))
    after = _state(ws)
    assert after != before

    result = rewind(store, session.path, 1, "code")
    assert _state(ws) == before
    assert result.warnings == []
    _no_temporaries(ws)
    # nothing was written through a link into what it points at
    assert (ws / "real" / "inner.txt").read_text() == "inside real\n"
    assert sorted(os.listdir(ws / "real")) == ["inner.txt"]

    undo(store)
    assert _state(ws) == after
    _no_temporaries(ws)


def test_a_directory_in_the_way_with_unknown_files_is_named_not_a_crash(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "f").write_text("a file\n")
    store = CheckpointStore(ws)

    def change() -> None:
        (ws / "f").unlink()
        (ws / "f").mkdir()
        (ws / "f" / "y.txt").write_text("y\n")

    session = _agent_turn(ws, store, change)
    (ws / "f" / "run.log").write_text("ignored, so in no snapshot\n")
    result = rewind(store, session.path, 1, "code")
    # the ignored file is not thrown away: f stays a directory, and the rewind says so
    assert (ws / "f" / "run.log").read_text() == "ignored, so in no snapshot\n"
    assert any(w.startswith("f: not restored") for w in result.warnings), result.warnings
    assert result.removed == ["f/y.txt"]
    _no_temporaries(ws)


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / "a.txt").write_text("one\n")
    (ws / "b.txt").write_text("two\n")
    store = CheckpointStore(ws)

    def change() -> None:
        (ws / "a.txt").write_text("ONE\n")
        (ws / "b.txt").write_text("TWO\n")

    session = _agent_turn(ws, store, change)
    # a.txt cannot be replaced: a directory the snapshot does not know is where it was
    (ws / "a.txt").unlink()
    (ws / "a.txt").mkdir()
    (ws / "a.txt" / "keep.me").write_text("mine\n")
    result = rewind(store, session.path, 1, "code")
    assert (ws / "b.txt").read_text() == "two\n"  # the rest is still restored
    assert result.restored == ["b.txt"]
    assert any(w.startswith("a.txt: not restored") for w in result.warnings)
    _no_temporaries(ws)
    # and `undo` has a record to work from
    undo(store)
    assert (ws / "b.txt").read_text() == "TWO\n"


def test_nothing_is_written_or_removed_through_a_linked_directory(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "d").mkdir()
    (ws / "d" / "a.txt").write_text("one\n")
    store = CheckpointStore(ws)

    def change() -> None:
        (ws / "d" / "a.txt").write_text("ONE\n")
        (ws / "d" / "new.txt").write_text("made by the agent\n")

    session = _agent_turn(ws, store, change)
    # afterwards, outside the agent, d becomes a link to a directory elsewhere
    shutil.rmtree(ws / "d")
    os.symlink(outside, ws / "d")
    (outside / "a.txt").write_text("not the workspace's\n")
    (outside / "new.txt").write_text("not the workspace's either\n")
    result = rewind(store, session.path, 1, "code")
    assert (outside / "a.txt").read_text() == "not the workspace's\n"
    assert (outside / "new.txt").read_text() == "not the workspace's either\n"
    assert result.restored == [] and result.removed == []
    assert any(w.startswith("d/a.txt: not restored: d is no directory") for w in result.warnings)
    _no_temporaries(outside)
