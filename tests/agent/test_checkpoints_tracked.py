"""A turn whose every write names its file is checkpointed from those files alone: no git
process lists or adds the tree, and its rewind restores exactly what it changed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from reasonix.agent import snaplist, snaptree
from reasonix.agent.checkpoints import CheckpointStore
from reasonix.agent.execute import run_calls
from reasonix.agent.rewind import rewind, undo
from reasonix.agent.session import Session
from reasonix.agent.snapedit import edit_tree, entry_now
from reasonix.agent.turnrecorder import TurnRecorder
from reasonix.cancel import Cancel
from reasonix.provider.types import ToolCall
from reasonix.tool import Registry, ToolContext

_SCANS = {"ls-files", "add", "write-tree", "status", "update-index"}


class _Counting(CheckpointStore):
    """The real store, noting each git subcommand it runs."""

    def __init__(self, workspace: Path, *, native: bool = True) -> None:
        super().__init__(workspace)
        self.native = native
        self.ran: list[str] = []

    def git(self, *args: str, data: bytes | None = None, work_tree: bool = True,
            codes: tuple[int, ...] = (0,)) -> bytes:  # fmt: skip
        self.ran.append(args[0])
        return super().git(*args, data=data, work_tree=work_tree, codes=codes)


def _tree(tmp_path: Path, files: int = 30) -> Path:
    ws = tmp_path / "ws"
    for i in range(files):
        leaf = ws / f"pkg{i % 3}" / f"d{i % 5}"
        leaf.mkdir(parents=True, exist_ok=True)
        (leaf / f"m{i}.py").write_text(f"v{i} = {i}\n")
    (ws / ".gitignore").write_text("build/\n")
    return ws


def _no_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing or writing the whole tree fails the test."""

    def walked(*_a: object, **_k: object) -> None:
        raise AssertionError("the tree was walked")

    monkeypatch.setattr(snaplist, "list_plain", walked)
    monkeypatch.setattr(snaptree, "native_tree", walked)


def _turn(rec: TurnRecorder, session: Session, writes: dict[Path, str | None]) -> None:
    """One turn whose file tool writes ``writes`` (None: remove), each file named."""
    rec.begin(session.id, len(session.records()), "edit")
    rec.tools_starting(full=False)
    for path, text in writes.items():
        rec.before_write([path])
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    rec.tools_done()
    rec.end()
    rec.settle()
    assert not rec.off, rec.off


@pytest.mark.parametrize("native", [True, False])
def test_a_turn_that_names_its_files_lists_and_adds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    ws = _tree(tmp_path)
    store = _Counting(ws, native=native)
    store.snapshot("first")  # a latest snapshot to start from
    store.ran.clear()
    _no_walk(monkeypatch)
    session = Session.create(ws)
    rec = TurnRecorder(store)
    three = [ws / "pkg0" / "d0" / "m0.py", ws / "pkg1" / "d1" / "m1.py", ws / "new.py"]
    _turn(rec, session, {three[0]: "edited 0\n", three[1]: "edited 1\n", three[2]: "new\n"})
    # one check-ignore per file (the ignore rules), one diff (the turn read back): no scan
    assert store.ran == ["check-ignore"] * 3 + ["diff"], store.ran
    turn = store.turns(session.id)[0]
    assert turn.paths == ["new.py", "pkg0/d0/m0.py", "pkg1/d1/m1.py"]
    assert sorted(store.changed(turn.before, turn.after)) == turn.paths
    monkeypatch.undo()  # the rewind takes a full snapshot first
    result = rewind(store, session.path, 1, "code")
    assert sorted(result.restored) == ["pkg0/d0/m0.py", "pkg1/d1/m1.py"]
    assert result.removed == ["new.py"] and not result.warnings
    assert three[0].read_text() == "v0 = 0\n" and three[1].read_text() == "v1 = 1\n"
    assert not three[2].exists()
    undo(store)
    assert three[0].read_text() == "edited 0\n" and three[2].read_text() == "new\n"
    session.close()


def test_a_named_write_goes_through_the_tracked_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix.tool.builtin.write_file import TOOL as WRITE

    ws = _tree(tmp_path)
    store = _Counting(ws)
    store.snapshot("first")
    store.ran.clear()
    _no_walk(monkeypatch)
    session = Session.create(ws)
    rec = TurnRecorder(store)
    registry = Registry()
    registry.add(WRITE)
    ctx = ToolContext(workspace=ws, extra={"checkpoints": rec})
    rec.begin(session.id, 0, "write")
    args = json.dumps({"path": "pkg2/d2/m2.py", "content": "agent\n"})
    results = run_calls([ToolCall("c1", "write_file", args)], registry, None, ctx, Cancel(),
                        lambda _e: None)  # fmt: skip
    assert not results[0].is_error, results[0].content
    rec.end()
    rec.settle()
    assert store.ran == ["check-ignore", "diff"], store.ran
    turn = store.turns(session.id)[0]
    assert store.content(turn.before, "pkg2/d2/m2.py") == b"v2 = 2\n"
    assert store.content(turn.after, "pkg2/d2/m2.py") == b"agent\n"
    session.close()


def test_an_edit_made_since_the_last_snapshot_is_what_rewind_brings_back(tmp_path: Path) -> None:
    ws = _tree(tmp_path)
    store = CheckpointStore(ws)
    session = Session.create(ws)
    rec = TurnRecorder(store)
    a, b = ws / "pkg0" / "d0" / "m0.py", ws / "pkg1" / "d1" / "m1.py"
    store.snapshot("first")
    _turn(rec, session, {a: "agent a\n"})  # turn 1
    b.write_text("mine\n")  # the user's edit: no snapshot sees it before turn 2 writes b
    _turn(rec, session, {b: "agent b\n"})  # turn 2
    turn2 = store.turns(session.id)[1]
    assert store.content(turn2.before, "pkg1/d1/m1.py") == b"mine\n"  # read before the write
    result = rewind(store, session.path, 1, "code")
    assert sorted(result.restored) == ["pkg0/d0/m0.py", "pkg1/d1/m1.py"], result
    assert a.read_text() == "v0 = 0\n"
    assert b.read_text() == "mine\n"  # as it was before the agent changed it, not older
    session.close()


def test_an_ignored_file_is_left_out_as_a_full_snapshot_leaves_it(tmp_path: Path) -> None:
    ws = _tree(tmp_path)
    store = CheckpointStore(ws)
    store.snapshot("first")
    session = Session.create(ws)
    rec = TurnRecorder(store)
    _turn(rec, session, {ws / "build" / "out.o": "x\n", ws / "pkg0" / "d0" / "m0.py": "e\n"})
    turn = store.turns(session.id)[0]
    assert turn.paths == ["pkg0/d0/m0.py"]
    assert store.content(turn.after, "build/out.o") is None
    assert rewind(store, session.path, 1, "code").removed == []
    assert (ws / "build" / "out.o").read_text() == "x\n"
    session.close()


def test_a_turn_that_then_runs_bash_is_snapshotted_whole_with_the_files_as_they_were(
    tmp_path: Path,
) -> None:
    ws = _tree(tmp_path)
    store = _Counting(ws, native=False)
    store.snapshot("first")
    session = Session.create(ws)
    rec = TurnRecorder(store)
    a, gen = ws / "pkg0" / "d0" / "m0.py", ws / "pkg2" / "gen.py"
    rec.begin(session.id, 0, "edit, then a generator")
    rec.tools_starting(full=False)
    rec.before_write([a])
    a.write_text("agent\n")
    rec.tools_done()
    rec.tools_starting()  # a round with bash
    store.ran.clear()
    rec.before_write()  # bash names no file: the turn becomes a full one
    assert "ls-files" in store.ran
    gen.write_text("generated\n")
    rec.tools_done()
    rec.end()
    rec.settle()
    turn = store.turns(session.id)[0]
    assert turn.paths is None  # a full "before" replaced the tracked one
    assert store.content(turn.before, "pkg0/d0/m0.py") == b"v0 = 0\n"
    assert sorted(store.changed(turn.before, turn.after)) == ["pkg0/d0/m0.py", "pkg2/gen.py"]
    result = rewind(store, session.path, 1, "code")
    assert a.read_text() == "v0 = 0\n" and not gen.exists(), result
    session.close()


def test_a_killed_turn_rewinds_only_its_own_files(tmp_path: Path) -> None:
    ws = _tree(tmp_path)
    store = CheckpointStore(ws)
    store.snapshot("first")
    session = Session.create(ws)
    rec = TurnRecorder(store)
    a, other = ws / "pkg0" / "d0" / "m0.py", ws / "pkg1" / "d1" / "m1.py"
    other.write_text("mine\n")  # edited since the last snapshot: stale in the "before" tree
    rec.begin(session.id, 0, "killed")
    rec.before_write([a])
    a.write_text("agent\n")  # and the process dies: no "after" is recorded
    assert store.turns(session.id)[0].after == ""
    result = rewind(store, session.path, 1, "code")
    assert result.restored == ["pkg0/d0/m0.py"], result
    assert other.read_text() == "mine\n"
    session.close()


def test_edit_tree_writes_the_trees_git_writes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for name in ("a", "a.b", "a-c", "b/x", "b/y/z", "c/d/e"):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(name)
    store = CheckpointStore(ws)
    store.native = False
    base, _ = store.tree()
    (ws / "a").unlink()
    (ws / "a").mkdir()
    (ws / "a" / "in").write_text("now a folder\n")
    (ws / "b" / "x").write_text("changed\n")
    (ws / "b" / "x").chmod(0o755)
    for gone in ("c/d/e", "b/y/z"):
        (ws / gone).unlink()
    (ws / "a.b").unlink()
    (ws / "a.b").symlink_to("b/x")
    (ws / "a.b.c").write_text("new\n")
    names = [b"a", b"a/in", b"b/x", b"b/y/z", b"c/d/e", b"a.b", b"a.b.c"]
    changes = {}
    for n in names:
        try:
            changes[n] = entry_now(ws, store.git_dir, n, 1 << 20)
        except Exception:  # noqa: BLE001 - "a" is a folder now: no file of that name
            changes[n] = None
    ours = edit_tree(store.git_dir, store.read_tree, base, changes)
    env = {**store._env(), "GIT_INDEX_FILE": str(tmp_path / "fresh-index")}
    subprocess.run(["git", "add", "-A"], cwd=ws, env=env, check=True)
    theirs = subprocess.run(["git", "write-tree"], cwd=ws, env=env, check=True,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    assert ours == theirs


def test_a_projects_first_turn_prepares_its_whole_before_tree_ahead(tmp_path: Path) -> None:
    """With no snapshot yet, a turn's first write starts from a whole tree: a round that
    only reads or names its files prepares it on the side, and the write takes it; once
    a snapshot exists, such a round prepares nothing."""
    ws = _tree(tmp_path)
    store = _Counting(ws)
    session = Session.create(ws)
    rec = TurnRecorder(store)
    target = ws / "pkg0" / "d0" / "m0.py"
    rec.begin(session.id, 0, "read, then edit")
    assert not store.has_snapshot()
    rec.tools_starting(full=False)  # a round of reads
    ahead = rec._before
    assert ahead is not None
    ahead.thread.join()
    rec.tools_done()
    rec.tools_starting(full=False)  # a round with an edit naming its file
    rec.before_write([target])
    assert rec._before is None and ahead.result is not None  # taken, not made again
    target.write_text("agent\n")
    rec.tools_done()
    rec.end()
    rec.settle()
    assert store.has_snapshot() and not rec.off, rec.off
    turn = store.turns(session.id)[0]
    assert store.content(turn.before, "pkg0/d0/m0.py") == b"v0 = 0\n"
    assert store.content(turn.after, "pkg0/d0/m0.py") == b"agent\n"

    rec.begin(session.id, 1, "read again")
    rec.tools_starting(full=False)
    assert rec._before is None  # a snapshot exists: the turn is recorded from its files
    rec.end()
    session.close()


def test_without_ignore_rules_on_their_paths_no_git_judges_the_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``.gitignore`` on a written file's path: only the shadow repository's own
    excludes can apply, and they are judged here as ``git check-ignore`` judges them
    (the state directory inside the workspace, held against git's own answer)."""
    from reasonix.agent.snapedit import tracked_names

    ws = tmp_path / "ws"
    (ws / "pkg" / "sub").mkdir(parents=True)
    (ws / "pkg" / "sub" / "a.py").write_text("a\n")
    (ws / "other").mkdir()
    monkeypatch.setenv("REASONIX_STATE_HOME", str(ws / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # no global excludes file
    store = _Counting(ws)
    store.snapshot("first")
    session = Session.create(ws)
    rec = TurnRecorder(store)
    store.ran.clear()
    writes = {ws / "pkg" / "sub" / "a.py": "b\n", ws / "other" / "n.py": "n\n",
              ws / "state" / "x.txt": "s\n"}  # fmt: skip
    _turn(rec, session, writes)
    assert "check-ignore" not in store.ran, store.ran
    turn = store.turns(session.id)[0]
    assert turn.paths == ["other/n.py", "pkg/sub/a.py"]  # the state dir is left out
    names = [ws / "pkg" / "sub" / "a.py", ws / "state" / "x.txt", ws / "statex" / "y",
             ws / "other" / "n.py"]  # fmt: skip
    ours = tracked_names(store, names)
    by_git = set(store.git("check-ignore", "--no-index", "-z", "--stdin", codes=(0, 1),
                           data=b"\0".join(os.fsencode(p.relative_to(ws)) for p in names) + b"\0"
                           ).split(b"\0"))  # fmt: skip
    assert ours == [os.fsencode(p.relative_to(ws)) for p in names
                    if os.fsencode(p.relative_to(ws)) not in by_git]  # fmt: skip
    assert b"state/x.txt" in by_git and b"state/x.txt" not in ours
    session.close()


@pytest.mark.parametrize("rule_at", ["", "pkg/"])
def test_a_gitignore_on_the_path_leaves_the_names_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rule_at: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg" / "sub").mkdir(parents=True)
    (ws / rule_at / ".gitignore").write_text("*.log\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    store = _Counting(ws)
    store.snapshot("first")
    session = Session.create(ws)
    rec = TurnRecorder(store)
    store.ran.clear()
    _turn(rec, session, {ws / "pkg" / "sub" / "x.log": "l\n", ws / "pkg" / "sub" / "k.py": "k\n"})
    assert "check-ignore" in store.ran
    assert store.turns(session.id)[0].paths == ["pkg/sub/k.py"]
    store.ran.clear()  # the same files again, the rules unchanged: git's answers are kept
    _turn(rec, session, {ws / "pkg" / "sub" / "x.log": "m\n", ws / "pkg" / "sub" / "k.py": "j\n"})
    assert "check-ignore" not in store.ran, store.ran
    assert store.turns(session.id)[1].paths == ["pkg/sub/k.py"]
    (ws / rule_at / ".gitignore").write_text("*.py\n")  # new rules: git judges again
    _turn(rec, session, {ws / "pkg" / "sub" / "x.log": "n\n", ws / "pkg" / "sub" / "k.py": "i\n"})
    assert "check-ignore" in store.ran
    assert store.turns(session.id)[2].paths == ["pkg/sub/x.log"]
    session.close()


def test_the_users_excludes_file_leaves_the_names_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix.agent.snapedit import tracked_names

    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "ignore").write_text("*.log\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    store = _Counting(ws)
    store.snapshot("first")
    store.ran.clear()
    assert tracked_names(store, [ws / "pkg" / "a.log", ws / "pkg" / "b.py"]) == [b"pkg/b.py"]
    assert store.ran == ["check-ignore"]
