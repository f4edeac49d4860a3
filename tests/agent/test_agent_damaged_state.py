"""Issue 12 item 2: well-formed JSON of the wrong shape in our own state files.

Transcript records, checkpoints, leases, memory facts and OAuth state are
validated on load: a bad record is skipped with a notice naming the file and
line (the session stays usable), a malformed lease counts as stale, a
damaged fact is listed as skipped, damaged OAuth state counts as none.
Before the fix several of these shapes ended in ``internal error: ValueError``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reasonix.agent.lease import LEASE_GRACE
from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.commands import list_facts
from reasonix.agent.memory.facts import FactStore
from reasonix.agent.session import Session, read_records
from reasonix.plugin.mcp import oauth_store
from reasonix.provider.types import Message, Role

BAD_RECORDS = [
    {"type": "message", "message": {"role": "alien"}},
    {"type": "message", "message": {"role": "user", "content": 5}},
    {"type": "message", "message": "a string"},
    {"type": "message"},
    {"type": "message", "message": {"role": "assistant", "content": "x", "tool_calls": [{}]}},
    {"type": "message", "message": {"role": "assistant", "tool_calls": {"id": "a"}}},
    {"type": "message", "message": {"role": "assistant", "reasoning_meta": [1]}},
    {"type": "message", "message": {"role": "tool", "content": "x", "tool_call_id": 7}},
    {"type": "meta", "id": 5, "system": ["not", "text"]},
    {"type": "title", "title": {"a": 1}},
    {"type": "checkpoint", "generation": "a", "covers_through": 0, "summary": "s"},
    {"type": "checkpoint", "generation": 1, "covers_through": 99, "summary": "hidden"},
    {"type": 5},
]


def _session_with(tmp_path: Path, *lines: str) -> Path:
    with Session.create(tmp_path, {"system": "sys"}) as s:
        s.append_message(Message(Role.USER, "first question"))
        s.append_message(Message(Role.ASSISTANT, "first answer"))
    with open(s.path, "a", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
    return s.path


@pytest.mark.parametrize("record", BAD_RECORDS, ids=lambda r: json.dumps(r)[:60])
def test_a_bad_record_is_skipped_with_a_notice(tmp_path: Path, record: dict[str, object]) -> None:
    good_after = json.dumps({"type": "message", "message": {"role": "user", "content": "later"}})
    path = _session_with(tmp_path, json.dumps(record), good_after)
    with Session.open(path) as session:
        texts = [m.content for m in session.messages()]
        assert texts == ["first question", "first answer", "later"]
        assert session.title == "first question"
        assert session.meta.get("system") == "sys"
        (notice,) = session.notices
        assert str(path) in notice and "line 5" in notice
        session.append_message(Message(Role.ASSISTANT, "still appends"))
    damaged: list[str] = []
    records = read_records(path, damaged)
    assert records[4]["type"] == "damaged"  # indexes after it stay where checkpoints expect
    assert len(damaged) == 1


@pytest.mark.parametrize("line", ["[1, 2]", '"text"', "{not json", "null", "[" * 100000])
def test_a_line_that_is_no_record_is_reported(tmp_path: Path, line: str) -> None:
    path = _session_with(tmp_path, line)
    with Session.open(path) as session:
        assert len(session.messages()) == 2
        assert "line 5" in session.notices[0]


def test_a_sound_transcript_has_no_notice(tmp_path: Path) -> None:
    with Session.open(_session_with(tmp_path)) as session:
        assert session.notices == []


@pytest.mark.parametrize(
    "body",
    ['{"pid":"abc"}', '{"pid":1,"host":["x"]}', "[]", '{"pid":true}', '{"pid":1e400}',
     '{"pid":99999999999999999999}', '{"pid":1,"start":7}', "garbage", ""],
)  # fmt: skip
def test_a_malformed_lease_is_stale(tmp_path: Path, body: str) -> None:
    path = _session_with(tmp_path)
    lease = path.with_suffix(".lease")
    lease.write_text(body)
    if body in ("garbage", ""):
        # Not JSON at all: maybe being written right now, so stale only once it is old
        # (test_session_lease_race covers the fresh case).
        old = lease.stat().st_mtime - LEASE_GRACE - 60
        os.utime(lease, (old, old))
    with Session.open(path) as session:
        assert len(session.messages()) == 2


@pytest.mark.parametrize(
    "front",
    ['id: "m1"\nrevision: "abc"\ntype: "project"\nscope: "project"',
     'id: 5\nrevision: 1\ntype: "project"\nscope: "project"',
     'id: "m20260101-aaaa0001"\nrevision: 1\ntype: ["project"]\nscope: "project"',
     'id: "m20260101-aaaa0001"\nrevision: 0\ntype: "project"\nscope: "project"',
     "id: {\nrevision: 1"],
)  # fmt: skip
def test_a_damaged_fact_is_listed_as_skipped(tmp_path: Path, front: str) -> None:
    store = FactStore(tmp_path / "memory", "project")
    good = store.create("uses pytest", type="project", title="tests")
    (store.root / "m20260101-aaaa0001.md").write_text(f"---\n{front}\n---\nbody\n")
    assert [f.id for f in store.facts()] == [good.id]
    memory = Memory(FactStore(tmp_path / "g", "global"), store)
    listing = list_facts(memory)
    assert good.id in listing and "skipped damaged fact file" in listing
    assert "m20260101-aaaa0001.md" in listing


@pytest.mark.parametrize(
    "doc",
    [[], {"server": "srv"}, {"server": "srv", "resource": "r", "metadata": "x", "client": {}},
     {"server": "srv", "resource": "r", "metadata": {}, "client": "c"},
     {"server": "srv", "resource": "r", "metadata": {"issuer": "i", "authorization_endpoint": "a",
      "token_endpoint": "t"}, "client": {}, "tokens": "tok"},
     {"server": "srv", "resource": "r", "metadata": {"issuer": "i", "authorization_endpoint": "a",
      "token_endpoint": "t"}, "client": {}, "wanted_scopes": "read"}],
)  # fmt: skip
def test_damaged_oauth_state_counts_as_none(doc: object) -> None:
    path = oauth_store.state_path("srv")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    assert oauth_store.load("srv", "https://mcp.example/") is None
