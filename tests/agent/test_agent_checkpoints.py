"""The shadow-git checkpoint store: .gitignore honoured, big files named, no user git config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reasonix.agent import checkpoints
from reasonix.agent.checkpoints import CheckpointStore
from reasonix.agent.rewind import rewind
from reasonix.agent.session import Session
from reasonix.agent.turnrecorder import TurnRecorder


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


class _Counting(CheckpointStore):
    """The real store, noting which git subcommands a snapshot ran."""

    ran: list[str]

    def __init__(self, workspace: Path, *, native: bool = False) -> None:
        super().__init__(workspace)
        self.native = native  # the trees git writes (reasonix.agent.snaptree has its own tests)

    def git(self, *args: str, data: bytes | None = None, work_tree: bool = True) -> bytes:
        self.ran = [*getattr(self, "ran", []), args[0]]
        return super().git(*args, data=data, work_tree=work_tree)


def _shadow(store: CheckpointStore, *args: str) -> str:
    return store.git(*args, work_tree=False).decode()


def test_a_snapshot_commit_is_the_one_git_commit_tree_writes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    store = CheckpointStore(ws)
    first, _ = store.snapshot("before turn 1")
    (ws / "a.txt").write_text("two\n")
    second, _ = store.snapshot("after turn 1")
    assert _shadow(store, "rev-parse", "refs/reasonix/latest").strip() == second
    store.git("fsck", "--strict", "--no-dangling", work_tree=False)
    body = _shadow(store, "cat-file", "commit", second)
    tree = body.split("\n", 1)[0].removeprefix("tree ")
    date = body.split("\n")[1].rsplit(" ", 2)[-2:]
    # git itself, given the same moment, produces the very same object (byte for byte)
    env = {**store._env(), "GIT_AUTHOR_DATE": " ".join(date), "GIT_COMMITTER_DATE": " ".join(date)}
    again = subprocess.run(["git", "commit-tree", tree, "-m", "after turn 1"], env=env, cwd=ws,
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert again == second != first
    ident = _shadow(store, "var", "GIT_COMMITTER_IDENT").split()
    assert ident[-1] == date[1] and abs(int(ident[-2]) - int(date[0])) < 60  # git's local offset
    assert store.content(first, "a.txt") == b"one\n" and store.content(second, "a.txt") == b"two\n"


def test_an_unchanged_workspace_reuses_its_tree_and_any_change_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "FILE_LIMIT", 1000)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    (ws / "big.bin").write_bytes(b"y" * 5000)
    store = _Counting(ws)
    first, big = store.snapshot("t1")
    store.ran = []
    second, big2 = store.snapshot("t2")
    assert store.ran == ["ls-files"] and big == big2 == ["big.bin"]  # no add, no write-tree
    assert store.changed(first, second) == []
    (ws / "a.txt").write_text("two\n")
    third, _ = store.snapshot("t3")
    assert store.changed(second, third) == ["a.txt"]
    (ws / "new.txt").write_text("n\n")
    store.git("add", "--", "new.txt")  # someone else moves the index on: no stale tree
    store.ran = []
    fourth, _ = store.snapshot("t4")
    assert "write-tree" in store.ran and store.changed(third, fourth) == ["new.txt"]
    (ws / "a.txt").unlink()
    fifth, _ = store.snapshot("t5")
    assert store.content(fifth, "a.txt") is None


@pytest.mark.parametrize("native", [False, True], ids=["git", "native"])
@pytest.mark.parametrize("process", ["same", "next"])
def test_a_kept_file_that_grows_too_big_keeps_its_last_kept_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: bool, process: str
) -> None:
    monkeypatch.setattr(checkpoints, "FILE_LIMIT", 1000)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "log.txt").write_text("small\n")
    store = _Counting(ws, native=native)
    store.snapshot("t1")
    if process == "next":  # a store of a new process knows only what is on disk
        store = _Counting(ws, native=native)
    (ws / "log.txt").write_bytes(b"z" * 5000)
    for label in ("t2", "t3"):  # the second time from the kept tree
        commit, too_big = store.snapshot(label)
        assert too_big == ["log.txt"] and store.content(commit, "log.txt") == b"small\n"
        assert (store.git_dir / "index").exists() is not native
    (ws / "log.txt").write_text("small again\n")
    commit, too_big = store.snapshot("t4")
    assert too_big == [] and store.content(commit, "log.txt") == b"small again\n"


def test_a_repository_of_another_object_format_is_committed_by_git(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    store = CheckpointStore(ws)
    store.root.mkdir(parents=True)
    store.git("init", "-q", "--object-format=sha256", work_tree=False)
    commit, _ = store.snapshot("t")
    assert len(commit) == 64 and store.content(commit, "a.txt") == b"one\n"
    assert _shadow(store, "rev-parse", "refs/reasonix/latest").strip() == commit


def test_turns_are_numbered_on_across_recorders_and_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore(ws)
    first = TurnRecorder(store)
    for title in ("one", "two"):
        first.begin("s1", 0, title)
        first.end()
    first.begin("s2", 0, "other")
    first.end()
    later = TurnRecorder(CheckpointStore(ws))  # the next process continuing s1
    later.begin("s1", 0, "three")
    first.begin("s1", 0, "four")  # back to s1 after another session: counted from the log
    assert [t.title for t in store.turns("s1")] == ["one", "two", "three", "four"]
    assert [t.number for t in store.turns("s1")] == [1, 2, 3, 4]
