"""The session lease under contention: real processes race for one transcript.

Two worker processes are woken by the same pipe write and both call
``Session.open`` on one transcript, round after round, starting from no lease,
from the lease of a dead process, and from a long-abandoned empty lease. Each
round exactly one of them may believe it holds the transcript. A lease that
another process has created but not yet written (empty or torn, and fresh) is
held by that process, not stale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.agent.lease import LEASE_GRACE
from reasonix.agent.session import Session
from reasonix.errors import SessionError

ROOT = Path(__file__).resolve().parents[2]

# One worker: wait for a byte on the shared "go" pipe, try to open the session,
# say "held" or "busy", then close when told and say "closed".
_WORKER = """
import os, sys
from pathlib import Path
from reasonix.agent.session import Session
from reasonix.errors import SessionError

go, path = int(sys.argv[1]), Path(sys.argv[2])
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() != "round":
        break
    os.read(go, 1)
    try:
        session = Session.open(path)
    except SessionError:
        session = None
    print("held" if session is not None else "busy", flush=True)
    sys.stdin.readline()  # "close"
    if session is not None:
        session.close()
    print("closed", flush=True)
"""


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(proc.stdout)


def _transcript(tmp_path: Path) -> Path:
    with Session.create(tmp_path) as s:
        return s.path


def _age(path: Path) -> None:
    """Make ``path`` older than the grace period (as if written long ago)."""
    old = path.stat().st_mtime - LEASE_GRACE - 60
    os.utime(path, (old, old))


def _read(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, f"worker {proc.pid} ended early"
    return line


def _worker(argv: list[str], env: dict[str, str], go: int) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, env=env, text=True, pass_fds=(go,), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)  # fmt: skip


@pytest.mark.slow
def test_two_processes_racing_never_both_hold_the_lease(tmp_path: Path) -> None:
    path = _transcript(tmp_path)
    lease = path.with_suffix(".lease")
    dead = _dead_pid()
    go_read, go_write = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-c", _WORKER, str(go_read), str(path)]
    workers = [_worker(argv, env, go_read) for _ in range(2)]
    os.close(go_read)
    holders: list[int] = []
    starts = ("none", "stale", "abandoned")
    try:
        for w in workers:
            assert _read(w) == "ready"
        for n in range(360):
            start = starts[n % len(starts)]
            if start == "stale":
                lease.write_text(json.dumps({"pid": dead, "start": "1", "host": None}))
            elif start == "abandoned":
                lease.write_text("")
                _age(lease)
            for w in workers:
                assert w.stdin is not None
                w.stdin.write("round\n")
                w.stdin.flush()
            os.write(go_write, b"xx")  # one write wakes both: they race
            answers = [_read(w) for w in workers]
            holders.append(answers.count("held"))
            for w in workers:
                assert w.stdin is not None
                w.stdin.write("close\n")
                w.stdin.flush()
            assert [_read(w) for w in workers] == ["closed", "closed"]
            assert not lease.exists(), f"round {n} ({start}): the holder left its lease"
    finally:
        os.close(go_write)
        for w in workers:
            assert w.stdin is not None and w.stdout is not None
            w.stdin.close()
            w.wait(timeout=30)
            w.stdout.close()
    bad = [(n, starts[n % len(starts)], h) for n, h in enumerate(holders) if h != 1]
    assert not bad, f"rounds where not exactly one process held the lease: {bad}"
    assert not list(tmp_path.rglob("*.tmp")), "a temp lease was left behind"


@pytest.mark.parametrize("body", ["", '{"pid": 12', "\x00\x00"])
def test_a_fresh_unwritten_lease_is_held_then_stale_after_the_grace(
    tmp_path: Path, body: str
) -> None:
    path = _transcript(tmp_path)
    lease = path.with_suffix(".lease")
    lease.write_text(body)  # another process created it and has not written it yet
    with pytest.raises(SessionError, match="being opened by another"):
        Session.open(path)
    assert lease.read_text() == body  # left alone
    _age(lease)  # its creator died before writing it
    with Session.open(path):
        assert json.loads(lease.read_text())["pid"] == os.getpid()
    assert not lease.exists()


def test_a_lease_is_never_seen_half_written(tmp_path: Path) -> None:
    """The lease appears at its name complete: created aside, then linked into place."""
    path = _transcript(tmp_path)
    lease = path.with_suffix(".lease")
    with Session.open(path):
        info = json.loads(lease.read_text())
        assert info["pid"] == os.getpid() and info["token"]
        assert lease.stat().st_nlink == 1  # the temp name is gone
        assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, lease.name])
