"""reasonix.agent.snaplist against real ``git ls-files`` on generated work trees.

Wherever :func:`list_plain` answers, its names are exactly the ones git lists
for the same tree in a shadow repository made the way checkpoints make it;
wherever an ignore rule, a nested repository or a special file could make
them differ, it leaves the listing to git (None).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonix.agent.checkpoints import CheckpointStore
from reasonix.agent.snaplist import global_excludes, list_plain

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the listing is Linux-only")

# names git could treat specially if the listing were careless: spaces, tabs, Unicode,
# dot-files, a near-miss of the excluded checkpoints directory
PLAIN = ("a.txt", "b", "x.py", "dir", "deep", "-dash", ".hidden", "ignore-me")
ODD = (".reasonix-checkpointsX", "Ünï cödé.md", "space name", "tab\tname")
NAMES = st.sampled_from([*PLAIN, *ODD])


def _git_listing(store: CheckpointStore) -> set[bytes]:
    out = store.git("ls-files", "-z", "--others", "--exclude-standard")
    return {n for n in out.split(b"\0") if n}


def _ours(store: CheckpointStore, env: dict[str, str]) -> set[bytes] | None:
    rules = store.own_rules()
    assert rules is not None
    got = list_plain(store.workspace, rules, 2000, env)
    return None if got is None else {n for n in got.split(b"\0") if n}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A HOME without a global git excludes file (git reads it from there)."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return {"HOME": str(fake)}


def _store(ws: Path, tmp_path: Path) -> CheckpointStore:
    store = CheckpointStore(ws, root=tmp_path / "state" / "ck")
    store._ensure()
    return store


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tree=st.lists(
        st.tuples(
            st.lists(NAMES, min_size=1, max_size=3), st.sampled_from(["file", "link", "dir"])
        ),
        max_size=12,
    )
)
def test_the_listing_is_gits_where_it_answers(
    tree: list[tuple[list[str], str]],
    tmp_path_factory: pytest.TempPathFactory,
    home: dict[str, str],
) -> None:
    tmp_path = tmp_path_factory.mktemp("t")
    ws = tmp_path / "ws"
    ws.mkdir()
    for parts, kind in tree:
        path = ws.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                path.write_text("x")
            elif kind == "link":
                path.symlink_to("a.txt")
            else:
                path.mkdir(exist_ok=True)
        except OSError:
            continue  # a name taken by another kind, or a path through a link: left as is
    store = _store(ws, tmp_path)
    ours = _ours(store, home)
    assert ours is not None  # nothing here could make git leave a name out
    assert ours == _git_listing(store)


def test_the_projects_own_git_directory_is_skipped(tmp_path: Path, home: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "kept.txt").write_text("k")
    store = _store(ws, tmp_path)
    assert _ours(store, home) == _git_listing(store) == {b"kept.txt"}


@pytest.mark.parametrize(
    "make",
    [
        lambda ws: (ws / ".gitignore").write_text("*.log\n"),
        lambda ws: ((ws / "sub").mkdir(), (ws / "sub" / ".gitignore").write_text("x\n")),
        lambda ws: ((ws / "nested").mkdir(), (ws / "nested" / ".git").mkdir()),
        lambda ws: (ws / "deep" / ".reasonix-checkpoints").mkdir(parents=True),
    ],
    ids=["gitignore", "gitignore-below", "nested-repository", "checkpoints-dir"],
)
def test_anything_git_could_leave_out_goes_to_git(
    tmp_path: Path, home: dict[str, str], make: object
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    make(ws)  # type: ignore[operator]
    store = _store(ws, tmp_path)
    assert _ours(store, home) is None


def test_a_special_file_goes_to_git(tmp_path: Path, home: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "pipe")
    store = _store(ws, tmp_path)
    assert _ours(store, home) is None
    sock = socket.socket(socket.AF_UNIX)
    try:
        os.unlink(ws / "pipe")
        sock.bind(str(ws / "sock"))
        assert _ours(store, home) is None
    finally:
        sock.close()


def test_a_global_excludes_file_or_many_files_goes_to_git(
    tmp_path: Path, home: dict[str, str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(5):
        (ws / f"f{i}").write_text("x")
    store = _store(ws, tmp_path)
    rules = store.own_rules()
    assert rules is not None
    assert list_plain(ws, rules, 4, home) is None  # more names than the limit
    ignore = global_excludes(home)
    assert ignore is not None
    ignore.parent.mkdir(parents=True)
    ignore.write_text("f1\n")
    assert list_plain(ws, rules, 2000, home) is None
    assert global_excludes({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == Path("/x/git/ignore")
    assert global_excludes({}) is None


def test_the_state_directory_inside_the_workspace_goes_to_git(
    tmp_path: Path, home: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    (ws / "state").mkdir(parents=True)
    monkeypatch.setenv("REASONIX_STATE_HOME", str(ws / "state"))
    (ws / "a.txt").write_text("a")
    store = _store(ws, tmp_path)
    rules = store.own_rules()
    assert rules == ["/state/"]
    assert list_plain(ws, rules, 2000, home) is None


def test_an_edited_exclude_file_keeps_git_listing(tmp_path: Path, home: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = _store(ws, tmp_path)
    with (store.git_dir / "info" / "exclude").open("a") as fh:
        fh.write("*.secret\n")
    assert CheckpointStore(ws, root=store.root).own_rules() is None


def test_a_snapshot_without_git_listing_is_the_one_git_lists(
    tmp_path: Path, home: dict[str, str]
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "m.py").write_text("print(1)\n")
    (ws / "top.txt").write_text("t\n")
    store = _store(ws, tmp_path)
    tree, _ = store.tree()
    listed = store.git("ls-tree", "-r", "--name-only", "-z", tree)
    assert {n for n in listed.split(b"\0") if n} == _git_listing(store)


# a written file's path: plain names, names git's own rules concern, and the state folder
PARTS = st.sampled_from([*PLAIN, *ODD, ".git", ".GIT", ".reasonix-checkpoints", "state", "st"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    written=st.lists(st.lists(PARTS, min_size=1, max_size=4), min_size=1, max_size=6),
    state_inside=st.booleans(),
)
def test_written_names_are_judged_as_git_check_ignore_judges_them(
    written: list[list[str]],
    state_inside: bool,
    tmp_path_factory: pytest.TempPathFactory,
    home: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no ``.gitignore`` on their paths, the names a tracked turn keeps (judged
    without git where only the shadow repository's own rules apply) are the ones git
    keeps; a name of plain parts never starts git."""
    from reasonix.agent.snapedit import tracked_names

    tmp_path = tmp_path_factory.mktemp("t")
    ws = tmp_path / "ws"
    ws.mkdir()
    state = ws / "state" if state_inside else tmp_path / "elsewhere"
    monkeypatch.setenv("REASONIX_STATE_HOME", str(state))
    store = _store(ws, tmp_path)
    ran: list[str] = []
    real_git = store.git

    def counting_git(*args: str, **kwargs: object) -> bytes:
        ran.append(args[0])
        return real_git(*args, **kwargs)  # type: ignore[arg-type]

    store.git = counting_git  # type: ignore[method-assign]
    paths = [ws.joinpath(*parts) for parts in written]
    ours = tracked_names(store, paths)
    names = [os.fsencode(p.relative_to(ws).as_posix()) for p in paths]
    out = real_git("check-ignore", "--no-index", "-z", "--stdin",
                   data=b"\0".join(names) + b"\0", codes=(0, 1))  # fmt: skip
    ignored = set(out.split(b"\0"))
    assert ours == [n for n in names if n not in ignored]
    special = {".git", ".reasonix-checkpoints"}
    if not any(part.lower() in special for parts in written for part in parts):
        assert ran == []
