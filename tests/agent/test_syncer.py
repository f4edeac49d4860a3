"""The transcript's fsync thread: every ask is covered before close, a failure is told."""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.agent.session import Session
from reasonix.agent.syncer import Syncer


def test_every_ask_is_covered_when_it_finishes(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "t.jsonl", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        syncer = Syncer(fd)
        for i in range(50):
            os.write(fd, b"%d\n" % i)
            syncer.request()
        assert syncer.finish() is True
        assert not syncer._thread.is_alive()
    finally:
        os.close(fd)


def test_a_failing_fsync_is_reported_to_the_closer(tmp_path: Path) -> None:
    read, write = os.pipe()  # fsync of a pipe fails (EINVAL)
    try:
        syncer = Syncer(write)
        syncer.request()
        assert syncer.finish() is False
    finally:
        os.close(read)
        os.close(write)


def test_a_session_synced_on_its_thread_closes_with_every_record(tmp_path: Path) -> None:
    session = Session.create(tmp_path / "ws")
    for n in range(5):
        session.append({"type": "note", "n": n})
        session.sync()
    session.append({"type": "note", "n": 5})  # after the last boundary: close syncs it
    path = session.path
    session.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 7 and lines[-1] == '{"type":"note","n":5}'
