"""The shadow-git checkpoint store: .gitignore honoured, big files named, no user git config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reasonix.agent import checkpoints
from reasonix.agent.checkpoints import CheckpointStore, TurnRecorder
from reasonix.agent.rewind import rewind
from reasonix.agent.session import Session


def test_ignored_and_oversized_files_are_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:  # fmt: skip
    monkeypatch.setattr(checkpoints, "FILE_LIMIT", 1000)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"x" * 10)
    (ws / "big.bin").write_bytes(b"y" * 5000)
    (ws / "src.py").write_text("print(1)\n")
    store = CheckpointStore(ws)
    commit, too_big = store.snapshot("t")
    assert too_big == ["big.bin"]
    assert store.content(commit, "src.py") == b"print(1)\n"
    assert store.content(commit, "build/out.o") is None and store.content(commit, "big.bin") is None


def test_the_project_git_repository_is_never_touched(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "f.txt").write_text("one\n")
    CheckpointStore(ws).snapshot("t")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    assert status == "?? f.txt\n"  # still untracked: nothing was added to the user's index
    log = subprocess.run(["git", "log"], cwd=ws, capture_output=True, text=True)
    assert log.returncode != 0  # and nothing was committed there


def test_a_read_only_turn_takes_no_snapshot_and_rewind_of_it_restores_nothing(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("k\n")
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    s = Session.create(ws)
    rec.begin(s.id, len(s.records()), "look around")
    rec.end()
    s.close()
    assert not (store.git_dir / "HEAD").exists()  # no snapshot was ever needed
    result = rewind(store, s.path, 1, "code")
    assert result.restored == [] and result.removed == []
