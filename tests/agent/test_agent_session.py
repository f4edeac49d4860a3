"""Session transcripts: append-only JSONL, torn-tail repair, lease, copy, find (LOOP-1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasonix.agent.lease import LEASE_GRACE
from reasonix.agent.session import Session, find_session, latest_session, list_sessions
from reasonix.errors import SessionError
from reasonix.provider.types import Message, Role, ToolCall


def test_messages_round_trip_in_order(workspace: Path) -> None:
    with Session.create(workspace, {"system": "S"}) as s:
        s.append_message(Message(Role.USER, "fix the parser please"))
        s.append_message(Message(Role.ASSISTANT, "", [ToolCall("1", "read_file", '{"p":1}')]))
        s.append_message(Message(Role.TOOL, "body", tool_call_id="1", name="read_file"), "raw!")
        s.append({"type": "note", "upto": 2, "summary": "x"})  # another layer's record
        path = s.path
    assert path.parent.parent.name == "sessions"
    with Session.open(path) as again:
        assert [m.role for m in again.messages()] == [Role.USER, Role.ASSISTANT, Role.TOOL]
        assert again.messages()[1].tool_calls[0].arguments == '{"p":1}'
        assert again.meta["system"] == "S" and again.title == "fix the parser please"
        kinds = [r["type"] for r in again.records()]
        assert kinds == ["meta", "title", "message", "message", "message", "note"]
        assert again.records()[4]["raw_content"] == "raw!"
    for line in path.read_text().splitlines():
        json.loads(line)  # every line is a complete record


def test_torn_last_line_is_repaired_on_open(workspace: Path) -> None:
    with Session.create(workspace) as s:
        s.append_message(Message(Role.USER, "hello"))
        path = s.path
    with path.open("ab") as fh:
        fh.write(b'{"type":"message","message":{"role":"assis')  # killed mid-write
    with Session.open(path) as again:
        assert [m.content for m in again.messages()] == ["hello"]
        again.append_message(Message(Role.ASSISTANT, "hi"))
    assert path.read_bytes().endswith(b"\n")
    with Session.open(path) as third:
        assert [m.content for m in third.messages()] == ["hello", "hi"]


def test_garbled_middle_lines_are_skipped(workspace: Path) -> None:
    with Session.create(workspace) as s:
        path = s.path
    with path.open("ab") as fh:
        fh.write(b"not json\n")
        fh.write(b'{"type":"message","message":{"role":"user","content":"ok"}}\n')
    with Session.open(path) as again:
        assert [m.content for m in again.messages()] == ["ok"]


def test_a_live_lease_refuses_a_second_writer(workspace: Path) -> None:
    s = Session.create(workspace)
    with pytest.raises(SessionError, match="--copy"):
        Session.open(s.path)
    s.close()
    Session.open(s.path).close()  # released on close


def test_lease_held_by_another_live_process(workspace: Path) -> None:
    s = Session.create(workspace)
    s.close()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lease = s.path.with_suffix(".lease")
        start = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        lease.write_text(json.dumps({"pid": child.pid, "start": start, "token": "t"}))
        with pytest.raises(SessionError, match=f"pid {child.pid}"):
            Session.open(s.path)
    finally:
        child.kill()
        child.wait()
    Session.open(s.path).close()  # the holder is dead now: taken over


def test_lease_of_a_dead_process_is_taken_over(workspace: Path) -> None:
    s = Session.create(workspace)
    s.close()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    lease = s.path.with_suffix(".lease")
    lease.write_text(json.dumps({"pid": int(dead.stdout), "start": "1", "token": "t"}))
    with Session.open(s.path):
        assert json.loads(lease.read_text())["pid"] == os.getpid()
    lease.write_text("")  # a lease file torn while being created, by a process that died
    old = lease.stat().st_mtime - LEASE_GRACE - 60  # long ago: no longer being written
    os.utime(lease, (old, old))
    Session.open(s.path).close()


def test_copy_continues_in_a_new_session(workspace: Path) -> None:
    s = Session.create(workspace, {"system": "S"})
    s.append_message(Message(Role.USER, "task one"))
    c = s.copy(workspace)
    try:
        assert c.id != s.id and c.meta["copied_from"] == s.id and c.meta["system"] == "S"
        assert [m.content for m in c.messages()] == ["task one"] and c.title == "task one"
    finally:
        c.close()
        s.close()


def test_listing_latest_and_find(workspace: Path) -> None:
    paths = []
    for title in ("refactor the lexer", "fix login bug", "fix logout bug"):
        with Session.create(workspace) as s:
            s.append_message(Message(Role.USER, title))
            paths.append(s.path)
        time.sleep(0.01)
    os.utime(paths[1], (time.time() + 5, time.time() + 5))
    assert next(i.title for i in list_sessions(workspace)) == "fix login bug"
    latest = latest_session(workspace)
    assert latest is not None and latest.path == paths[1]
    assert find_session(workspace, paths[0].stem) == paths[0]
    assert find_session(workspace, "LEXER") == paths[0]
    assert find_session(workspace, str(paths[2])) == paths[2].resolve()
    with pytest.raises(SessionError, match="2 sessions match") as err:
        find_session(workspace, "fix")
    assert "fix login bug" in str(err.value) and "fix logout bug" in str(err.value)
    with pytest.raises(SessionError, match="no session matches") as err2:
        find_session(workspace, "zzz")
    assert "refactor the lexer" in str(err2.value)


def test_other_workspaces_are_separate(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    Session.create(a).close()
    assert list_sessions(b) == [] and latest_session(b) is None


@pytest.mark.parametrize(
    ("stored", "typed"),
    [
        ("fix it", "fix it"),
        ("<instructions>\nrules\n</instructions>\n\nfix it", "fix it"),
        ("<skills>\n- explore\n</skills>\n\nfix it", "fix it"),
        ("<instructions>\nr\n</instructions>\n\n<skills>\n- x\n</skills>\n\nfix it", "fix it"),
        ("fix it\n\n<memory-recall>\n- a note\n</memory-recall>", "fix it"),
        ("plain </instructions>\n\n text", "plain </instructions>\n\n text"),
        ("<instructions> never closed", "<instructions> never closed"),
    ],
)
def test_typed_text_removes_only_the_hosts_additions(stored: str, typed: str) -> None:
    from reasonix.agent.prompt import typed_text

    assert typed_text(stored) == typed
