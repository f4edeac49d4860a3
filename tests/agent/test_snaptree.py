"""Trees written by reasonix.agent.snaptree are the trees git writes for the same workspace."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonix.agent import snaptree
from reasonix.agent.checkpoints import CheckpointStore

pytestmark = pytest.mark.skipif(not CheckpointStore.available(), reason="MISSING: git")


def _stores(tmp: Path, ws: Path) -> tuple[CheckpointStore, CheckpointStore]:
    ours = CheckpointStore(ws, root=tmp / "native")
    gits = CheckpointStore(ws, root=tmp / "git")
    gits.native = False
    return ours, gits


def _index_exists(store: CheckpointStore) -> bool:
    return (store.git_dir / "index").exists()


def _ls_tree(store: CheckpointStore, tree: str) -> list[str]:
    out = store.git("ls-tree", "-r", "-z", "--full-tree", tree)
    return sorted(n for n in out.decode("utf-8", "replace").split("\0") if n)


def _fill(ws: Path) -> None:
    """Names whose order differs between plain sorting and git's tree sorting, modes, links."""
    for rel, data in {
        "a": b"file a\n",
        "a.b": b"dotted\n",
        "a-b/x": b"under a-b\n",
        "ab/c/d.txt": b"deep\n",
        "b/a": b"b/a\n",
        "b.txt": b"",
        "\u00e9t\u00e9.md": "\u00e9t\u00e9\n".encode(),
        "name with spaces": b"spaces\r\n",
        "crlf.txt": b"one\r\ntwo\r\n",
        "logs/keep.txt": b"kept\n",
        "logs/drop.log": b"ignored\n",
        "build/out.o": b"ignored dir\n",
    }.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(ws / "run.sh", 0o755)
    os.symlink("a.b", ws / "link")
    os.symlink("/nowhere/at/all", ws / "dangling")
    (ws / ".gitignore").write_text("*.log\n/build/\n")
    (ws / ".gitattributes").write_text("* text=auto\n*.txt ident\n")  # must change nothing


def test_a_native_tree_is_the_tree_git_writes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _fill(ws)
    ours, gits = _stores(tmp_path, ws)
    tree, too_big = ours.tree()
    assert not _index_exists(ours)  # git listed; the objects are ours
    assert (tree, too_big) == gits.tree()
    assert _index_exists(gits)
    names = [line.split("\t", 1)[1] for line in _ls_tree(ours, tree)]
    assert "logs/drop.log" not in names and "build/out.o" not in names
    assert {"link", "dangling", "run.sh", "\u00e9t\u00e9.md"} <= set(names)
    commit = ours.commit(tree, "t")
    assert ours.content(commit, "crlf.txt") == b"one\r\ntwo\r\n"  # the bytes as they are
    assert ours.mode(commit, "run.sh") == 0o100755
    assert ours.content(commit, "link") == b"a.b"
    subprocess.run(["git", "fsck", "--strict"], env=ours._env(), check=True, capture_output=True)


def test_the_git_path_keeps_line_endings_despite_gitattributes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _fill(ws)
    _, gits = _stores(tmp_path, ws)
    commit = gits.commit(gits.tree()[0], "t")
    assert gits.content(commit, "crlf.txt") == b"one\r\ntwo\r\n"


def test_an_empty_workspace_gives_the_empty_tree(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ours, gits = _stores(tmp_path, ws)
    assert ours.tree() == gits.tree() == ("4b825dc642cb6eb9a060e54bf8d69288fbee4904", [])


def test_a_file_over_the_limit_is_left_out_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reasonix.agent.checkpoints as checkpoints

    monkeypatch.setattr(checkpoints, "FILE_LIMIT", 10)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small").write_text("tiny")
    (ws / "big").write_text("x" * 11)
    ours, gits = _stores(tmp_path, ws)
    assert ours.tree() == gits.tree()
    assert ours.tree()[1] == ["big"]


@pytest.mark.parametrize("case", ["nested repository", "too many files", "too many bytes"])
def test_git_builds_the_tree_where_ours_might_differ_or_cost_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (ws / "b.txt").write_text("b" * 100)
    if case == "nested repository":
        inner = ws / "inner"
        subprocess.run(["git", "init", "-q", str(inner)], check=True)
        (inner / "f").write_text("f\n")
        who = ["-c", "user.name=t", "-c", "user.email=t@t", "-C", str(inner)]
        subprocess.run(["git", *who, "add", "f"], check=True)
        subprocess.run(["git", *who, "commit", "-qm", "f"], check=True)
    elif case == "too many files":
        monkeypatch.setattr(snaptree, "NATIVE_FILES", 1)
    else:
        monkeypatch.setattr(snaptree, "NATIVE_BYTES", 50)
    ours, gits = _stores(tmp_path, ws)
    assert ours.tree() == gits.tree()  # an embedded repository: git's `add` decides
    assert _index_exists(ours)  # git built it, and keeps doing so in this repository
    (ws / "c.txt").write_text("c\n")
    monkeypatch.setattr(snaptree, "NATIVE_FILES", 2000)
    monkeypatch.setattr(snaptree, "NATIVE_BYTES", 1 << 20)
    assert ours.tree() == gits.tree()


def test_unchanged_files_are_not_read_again_but_changed_ones_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    old, fresh = ws / "old.txt", ws / "fresh.txt"
    old.write_text("old\n")
    time.sleep(snaptree._SETTLED + 0.1)  # its times (ctime too) are settled now
    fresh.write_text("fresh\n")
    ours, gits = _stores(tmp_path, ws)
    first = ours.tree()
    reads: list[str] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    assert ours.tree() == first
    assert reads == ["fresh.txt"]  # changed within the last second: read again to be sure
    fresh.write_text("FRESH\n")  # same size, same second: still seen
    assert ours.tree() == gits.tree() != first


_NAME = st.text(alphabet="ab.-_ \u00e9X", min_size=1, max_size=4).filter(
    lambda n: n not in (".", "..") and not n.startswith(".git") and n.strip() == n
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    files=st.dictionaries(
        st.lists(_NAME, min_size=1, max_size=3).map(tuple),
        st.tuples(st.binary(max_size=40), st.booleans()),
        max_size=12,
    ),
    ignores=st.lists(
        st.sampled_from(["*.b", "a*", "/X", "**/b", "!ab", "*/", "\u00e9"]), max_size=3
    ),
)
def test_any_small_workspace_gets_the_same_tree_from_both(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[tuple[str, ...], tuple[bytes, bool]],
    ignores: list[str],
) -> None:
    tmp = tmp_path_factory.mktemp("case")
    ws = tmp / "ws"
    ws.mkdir()
    for parts, (data, executable) in files.items():
        path = ws.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a name that is both a file and a directory: keep the first
        if executable:
            os.chmod(path, 0o755)
    (ws / ".gitignore").write_text("\n".join(ignores) + "\n")
    ours, gits = _stores(tmp, ws)
    assert ours.tree() == gits.tree()
    assert not _index_exists(ours)


def test_a_big_file_with_a_glob_in_its_name_keeps_only_its_own_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reasonix.agent.checkpoints as checkpoints

    monkeypatch.setattr(checkpoints, "FILE_LIMIT", 100)
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "a*b.log").write_text("small\n")
    (ws / "d" / "axb.log").write_text("other\n")
    CheckpointStore(ws, root=tmp_path / "cp").snapshot("t1")
    (ws / "d" / "a*b.log").write_bytes(b"z" * 500)
    (ws / "d" / "axb.log").write_text("changed\n")
    later = CheckpointStore(ws, root=tmp_path / "cp")  # the next process: kept bytes from git
    commit, too_big = later.snapshot("t2")
    assert too_big == ["d/a*b.log"]
    assert later.content(commit, "d/a*b.log") == b"small\n"
    assert later.content(commit, "d/axb.log") == b"changed\n"  # not matched by the '*'
