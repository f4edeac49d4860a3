"""Fact files: ids, revisions, restore, archive and recovery, and what is refused (MEM-7, MEM-8)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix.agent.memory.facts import Fact, FactError, FactStore, format_fact, parse_fact


class Clock:
    """A settable clock so timestamps are deterministic."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> FactStore:
    return FactStore(tmp_path / "memory", "project", clock=clock)


def test_round_trip_format() -> None:
    fact = Fact("m1", 3, "reference", "global", "T: x", "body\n---\nmore", "a", "b")
    assert parse_fact(format_fact(fact)) == fact


def test_create_then_update_keeps_id_and_bumps_revision(store: FactStore, clock: Clock) -> None:
    f1 = store.create("uses pytest", type="project", title="tests")
    clock.t += 60
    f2 = store.update(f1.id, "uses pytest -q")
    assert (f2.id, f2.revision) == (f1.id, 2)
    assert f2.created_at == f1.created_at and f2.updated_at != f1.updated_at
    assert [f.revision for f in store.revisions(f1.id)] == [1, 2]
    assert store.revisions(f1.id)[0].content == "uses pytest"  # snapshot of the old one


def test_stale_expected_revision_is_refused(store: FactStore) -> None:
    f = store.create("a", type="project")
    store.update(f.id, "b")
    with pytest.raises(FactError, match="revision 2, not 1"):
        store.update(f.id, "c", expected_revision=1)


def test_restore_creates_a_higher_revision(store: FactStore) -> None:
    f = store.create("one", type="project")
    store.update(f.id, "two")
    store.update(f.id, "three")
    restored = store.restore(f.id, 1)
    assert restored.revision == 4 and restored.content == "one"
    assert [x.content for x in store.revisions(f.id)] == ["one", "two", "three", "one"]


def test_forget_archives_and_recover_comes_back_higher(store: FactStore) -> None:
    f = store.create("remember me", type="reference")
    store.update(f.id, "remember me v2")
    archive = store.forget(f.id)
    assert not store.exists(f.id) and archive.parent.name == ".archive"
    assert [a.id for _, a in store.archived()] == [f.id]
    back = store.recover(archive.name)
    assert back.revision == 3 and back.content == "remember me v2"
    assert store.archived() == [] and store.exists(f.id)


def test_recover_refuses_escapes_symlinks_foreign_files_and_collisions(
    store: FactStore, tmp_path: Path
) -> None:
    f = store.create("x", type="project")
    archive = store.forget(f.id)
    outside = tmp_path / "evil.r1.md"
    outside.write_text(format_fact(Fact("evil", 1, "project", "project", "", "x", "", "")))
    for bad in (str(outside), "../evil.r1.md", "../../evil.r1.md", "nothere.r1.md"):
        with pytest.raises(FactError):
            store.recover(bad)
    link = archive.parent / "linked.r1.md"
    os.symlink(outside, link)
    with pytest.raises(FactError, match="symlink"):
        store.recover(link.name)
    # An id that is active again cannot be recovered over.
    store.recover(archive.name)
    again = store.forget(f.id)
    store.root.joinpath(f"{f.id}.md").write_text(format_fact(store.revisions(f.id)[0]))
    with pytest.raises(FactError, match="active"):
        store.recover(again.name)


def test_symlinked_store_and_fact_files_are_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    store = FactStore(tmp_path / "link", "project")
    with pytest.raises(FactError, match="symlink"):
        store.create("x", type="project")
    ok = FactStore(tmp_path / "ok", "project")
    f = ok.create("x", type="project")
    target = tmp_path / "target.md"
    target.write_text(format_fact(f))
    path = ok.root / f"{f.id}.md"
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(FactError, match="symlink"):
        ok.get(f.id)
    with pytest.raises(FactError, match="symlink"):
        ok.update(f.id, "y")
    assert target.read_text() == format_fact(f)  # nothing written through the link


@pytest.mark.parametrize("bad", ["../x", "a/b", "", ".hidden", "x" * 65, "a b"])
def test_invalid_ids_are_refused(store: FactStore, bad: str) -> None:
    with pytest.raises(FactError):
        store.get(bad)


def test_snapshot_conflict_is_refused_not_overwritten(store: FactStore) -> None:
    f = store.create("one", type="project")
    snap = store.root / ".revisions" / f.id / "1.md"
    snap.parent.mkdir(parents=True)
    snap.write_text(format_fact(Fact(f.id, 1, "project", "project", "", "forged", "", "")))
    with pytest.raises(FactError, match="conflicts"):
        store.update(f.id, "two")
    assert store.get(f.id).content == "one"


def test_validation(store: FactStore) -> None:
    with pytest.raises(FactError):
        store.create("", type="project")
    with pytest.raises(FactError):
        store.create("x", type="opinion")
    with pytest.raises(FactError):
        store.create("x" * 8001, type="project")
