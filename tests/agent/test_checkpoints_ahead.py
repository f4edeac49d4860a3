"""Checkpoint trees prepared ahead on a background thread record what a turn did, exactly."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from reasonix.agent.checkpoints import CheckpointStore, StaleTree
from reasonix.agent.turnrecorder import TurnRecorder


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("start\n")
    return ws


def _turn(store: CheckpointStore, number: int = 1) -> tuple[str, str]:
    turn = store.turns("s")[number - 1]
    return turn.before, turn.after


def test_the_before_tree_is_the_state_the_tools_found(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "edit a")
    rec.tools_starting()  # a round of reads first: the tree is prepared meanwhile
    rec.tools_done()
    rec.tools_starting()
    rec.before_write()
    (ws / "a.txt").write_text("edited\n")
    rec.tools_done()
    rec.end()
    before, after = _turn(store)
    assert store.content(before, "a.txt") == b"start\n"
    assert store.content(after, "a.txt") == b"edited\n"


def test_a_write_after_the_after_tree_was_prepared_is_in_the_after_snapshot(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "two rounds of edits")
    rec.tools_starting()
    rec.before_write()
    (ws / "a.txt").write_text("round one\n")
    rec.tools_done()  # an "after" tree of round one is being made ...
    rec.tools_starting()
    rec.before_write()  # ... and round two writes again: it is stale now
    (ws / "b.txt").write_text("round two\n")
    rec.tools_done()
    rec.end()
    before, after = _turn(store)
    assert store.changed(before, after) == ["a.txt", "b.txt"]
    assert store.content(after, "a.txt") == b"round one\n"


def test_a_change_outside_the_tools_before_the_end_is_kept(tmp_path: Path) -> None:
    """A Stop hook may run a formatter after the last tool: the turn ends after it."""
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "edit and format")
    rec.tools_starting()
    rec.before_write()
    (ws / "a.txt").write_text("edited\n")
    rec.tools_done()
    rec.outside_change()
    (ws / "a.txt").write_text("edited and formatted\n")
    rec.end()
    _, after = _turn(store)
    assert store.content(after, "a.txt") == b"edited and formatted\n"


def test_a_turn_of_reads_records_no_snapshot(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "look around")
    rec.tools_starting()
    rec.tools_done()
    rec.end()
    assert _turn(store) == ("", "")
    assert not [r for r in store.records() if r["type"] in ("before", "after")]


def test_the_repository_made_without_git_init_is_one_git_accepts(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    commit, _ = store.snapshot("t")
    git = ["git", "--git-dir", str(store.git_dir)]
    fmt = subprocess.run([*git, "rev-parse", "--show-object-format"], capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    assert fmt == "sha1"
    subprocess.run([*git, "fsck", "--strict", "--no-dangling"], capture_output=True, check=True)
    log = subprocess.run([*git, "log", "--format=%s", "refs/reasonix/latest"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert log == "t\n" and len(commit) == 40
    excluded = (store.git_dir / "info" / "exclude").read_text().splitlines()
    assert ".git/" in excluded


def test_the_end_of_a_turn_is_in_the_log_before_anyone_reads_it(tmp_path: Path) -> None:
    """end() returns before git is done; the log, the next turn and rewind wait for it."""
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "edit")
    rec.tools_starting()
    rec.before_write()
    (ws / "a.txt").write_text("edited\n")
    rec.end()  # no tools_done: the end computes the tree itself, on its thread
    _, after = _turn(store)
    assert after and store.content(after, "a.txt") == b"edited\n"
    rec.begin("s", 0, "next")
    assert [t.number for t in store.turns("s")] == [1, 2]


def test_an_after_tree_a_write_made_stale_stops_before_writing_objects(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "two rounds of edits")
    rec.tools_starting()
    rec.before_write()
    (ws / "a.txt").write_text("round one\n")

    def objects() -> set[str]:
        return {str(p) for p in (store.git_dir / "objects").rglob("*") if p.is_file()}

    known = objects()
    with store._lock:  # the "after" tree of round one waits here ...
        rec.tools_done()
        stale = rec._after
        rec.tools_starting()
        rec.before_write()  # ... while round two writes: nobody will take it now
    assert stale is not None and stale.dropped
    stale.thread.join()
    assert isinstance(stale.error, StaleTree)
    assert objects() == known  # it listed the files, then gave up
    (ws / "b.txt").write_text("round two\n")
    rec.tools_done()
    rec.end()
    before, after = _turn(store)
    assert store.changed(before, after) == ["a.txt", "b.txt"]


def test_a_turn_that_only_read_leaves_no_objects_and_no_git_behind(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    rec.begin("s", 0, "just look")
    with store._lock:  # the "before" tree waits here while the reads run
        rec.tools_starting()
        before = rec._before
        rec.tools_done()
        assert before is not None and before.thread.is_alive()
        finished = threading.Thread(target=rec.end)
        finished.start()  # the turn ends without a write; end() waits for the tree
        deadline = time.monotonic() + 10
        while not before.dropped and time.monotonic() < deadline:
            time.sleep(0.001)  # end() gives the tree up before the lock lets it run
    finished.join()
    assert not before.thread.is_alive() and isinstance(before.error, StaleTree)
    objects = store.git_dir / "objects"
    assert not [p for p in objects.rglob("*") if p.is_file()]  # listed, never written
    assert _turn(store) == ("", "")


def test_a_tree_given_up_while_its_blobs_are_written_stops_at_the_next_file(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    for i in range(5):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    store = CheckpointStore(ws)
    answers = iter([True, True, False])  # listed: wanted; first file: wanted; then not
    with pytest.raises(StaleTree):
        store.tree(wanted=lambda: next(answers, False))
    blobs = [p for p in (store.git_dir / "objects").rglob("*") if p.is_file()]
    assert len(blobs) == 1  # the one file read before the tree was given up; no tree
    tree, _ = store.tree()  # asked for again, the whole tree is written
    assert store.changed(store.commit(tree, "x"), store.commit(tree, "y")) == []
    assert len([p for p in (store.git_dir / "objects").rglob("*") if p.is_file()]) > 6
