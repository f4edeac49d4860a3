"""Issue 12 item 1 for the agent's files: transcripts, leases, instruction files,
memory facts, history search and OAuth state never block, never read without end,
and are refused with an error naming the file (or skipped where a listing must go on).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hostile import SHAPES, plant

from reasonix.agent.instructions import FILE_CAP_BYTES, load_instructions
from reasonix.agent.memory.facts import FactError, FactStore
from reasonix.agent.memory.history import HistorySource
from reasonix.agent.session import Session, list_sessions, read_records
from reasonix.errors import ConfigError, SessionError
from reasonix.plugin.mcp import oauth_store
from reasonix.provider.types import Message, Role

pytestmark = pytest.mark.timeout(30)


def _closed_session(ws: Path) -> Path:
    with Session.create(ws, {"system": "s"}) as s:
        s.set_title("hello")
        s.append_message(Message(Role.USER, "find this needle"))
    return s.path


@pytest.mark.parametrize("shape", SHAPES)
def test_a_hostile_transcript_is_refused(tmp_path: Path, shape: str) -> None:
    path = plant(_closed_session(tmp_path), shape)
    with pytest.raises(SessionError) as info:
        Session.open(path)
    assert str(path) in str(info.value)
    with pytest.raises(SessionError, match=r"regular file|too large"):
        read_records(path)
    assert [i.path for i in list_sessions(tmp_path)] == [path]  # a listing goes on
    assert not path.with_suffix(".lease").exists()  # the refused open left no lease


@pytest.mark.parametrize("shape", [*SHAPES, "symlink"])
def test_a_hostile_lease_is_taken_over(tmp_path: Path, shape: str) -> None:
    path = _closed_session(tmp_path)
    lease = path.with_suffix(".lease")
    if shape == "symlink":  # never followed: a lease is a file only we write
        (tmp_path / "other").write_text('{"pid": 1, "host": null}')
        lease.symlink_to(tmp_path / "other")
    else:
        plant(lease, shape)
    with Session.open(path) as session:
        assert session.title == "hello"
        assert lease.is_file() and not lease.is_symlink()
    assert not lease.exists()


@pytest.mark.parametrize("shape", ["fifo", "dev-zero", "socket", "dev-null"])
@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.local.md", "REASONIX.md"])
def test_a_special_instruction_file_is_refused(tmp_path: Path, name: str, shape: str) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    target = plant(ws / name, shape)
    with pytest.raises(ConfigError) as info:
        load_instructions(home, ws)
    assert str(target) in str(info.value)
    plant(home / name, shape)
    target.unlink()
    with pytest.raises(ConfigError, match=re.escape(str(home))):
        load_instructions(home, ws)


def test_a_huge_instruction_file_is_read_only_to_its_cap(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    target = plant(ws / "AGENTS.md", "huge")
    with open(target, "r+b") as fh:
        fh.write(b"# rules\n" + b"x" * (2 << 20))
    files = load_instructions(tmp_path, ws)
    assert len(files) == 1 and files[0].text.startswith("# rules")
    assert len(files[0].text.encode()) < FILE_CAP_BYTES + 200
    assert "truncated" in files[0].text


@pytest.mark.parametrize("shape", SHAPES)
def test_a_hostile_fact_file_is_skipped_by_listings_and_refused_by_id(
    tmp_path: Path, shape: str
) -> None:
    store = FactStore(tmp_path / "memory", "project")
    good = store.create("uses pytest", type="project", title="tests")
    bad = store.create("other", type="project", title="other")
    plant(store.root / f"{bad.id}.md", shape)
    assert [f.id for f in store.facts()] == [good.id]
    with pytest.raises(FactError):
        store.get(bad.id)


@pytest.mark.parametrize("shape", SHAPES)
def test_history_search_skips_a_hostile_transcript(tmp_path: Path, shape: str) -> None:
    folder = tmp_path / "sessions"
    good = _closed_session(tmp_path)
    folder.mkdir()
    os.replace(good, folder / good.name)
    plant(folder / "evil.jsonl", shape)
    source = HistorySource(project_dirs=[folder])
    docs = source.documents("project")
    assert {d.session for d in docs} == {good.stem}


@pytest.mark.parametrize("shape", [*SHAPES, "symlink"])
def test_hostile_oauth_state_counts_as_none(tmp_path: Path, shape: str) -> None:
    path = oauth_store.state_path("srv")
    if shape == "symlink":
        (tmp_path / "elsewhere.json").write_text("{}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(tmp_path / "elsewhere.json")
    else:
        plant(path, shape)
    assert oauth_store.load("srv", "https://mcp.example/") is None
