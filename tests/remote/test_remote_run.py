"""``reasonix remote add/test/run`` end to end against a real sshd and the fake provider.

The fake API key exists only in the local environment; the remote (this
machine under a temp HOME, reached through sshd) must never see it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

from remote.cli_kit import KEY, add_box, cli, remote_processes
from remote.sshd_kit import Sshd, ssh_pids

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def test_add_list_test_remove(local: tuple[dict[str, str], Path], sshd: Sshd) -> None:
    env, _ = local
    add_box(env, sshd, "http://127.0.0.1:9")
    listed = cli(env, "remote", "list")
    assert f"box  {sshd.user}@127.0.0.1:{sshd.port}" in listed.stdout
    res = cli(env, "remote", "test", "box")
    assert res.returncode == 0, res.stderr
    assert "os: Linux" in res.stdout and "suitable Python:" in res.stdout
    assert "latency:" in res.stdout
    assert cli(env, "remote", "remove", "box").returncode == 0
    assert "no remote hosts" in cli(env, "remote", "list").stdout


def test_fs_round_trip_cli(local: tuple[dict[str, str], Path], sshd: Sshd, tmp_path: Path) -> None:
    env, ws = local
    add_box(env, sshd, "http://127.0.0.1:9")
    src = tmp_path / "up.txt"
    src.write_text("uploaded\n")
    assert cli(env, "remote", "fs", "put", "box", str(src), f"{ws.name}/up.txt").returncode == 0
    assert (ws / "up.txt").read_text() == "uploaded\n"
    listing = cli(env, "remote", "fs", "ls", "box", ws.name)
    assert "up.txt" in listing.stdout and "notes.txt" in listing.stdout
    back = tmp_path / "back.txt"
    assert cli(env, "remote", "fs", "get", "box", f"{ws}/notes.txt", str(back)).returncode == 0
    assert back.read_text() == "REMOTE-NOTE-4242\n"


def test_remote_run_key_stays_local(local: tuple[dict[str, str], Path], sshd: Sshd) -> None:
    env, ws = local
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "notes.txt"}')], delay=0.05),
        Turn(text="The remote note says REMOTE-NOTE-4242.", delay=0.05),
    ]
    seen: dict[int, bytes] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(remote_processes(sshd.remote_home))
            time.sleep(0.02)

    with FakeServer("openai", script) as srv:
        add_box(env, sshd, srv.url)
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            res = cli(env, "remote", "run", "box", str(ws), "--json", "read the note")
        finally:
            stop.set()
            watcher.join()
        assert res.returncode == 0, res.stderr
        assert '"success"' in res.stdout or "REMOTE-NOTE-4242" in res.stdout
        assert "REMOTE-NOTE-4242" in res.stdout
        # the broker added the real key on the way to the provider
        assert [r.header("authorization") for r in srv.requests] == [f"Bearer {KEY}"] * 2
        assert "REMOTE-NOTE-4242" in srv.requests[1].body.decode()  # the remote workspace
    pythons = [p for p, env_ in seen.items() if b".pyz" in env_]
    assert pythons, "the remote reasonix process was never observed"
    for pid, data in seen.items():
        assert KEY.encode() not in data, f"key visible in remote process {pid}"
    for path in sshd.remote_home.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"key written to {path}"
    sessions = list((sshd.remote_home / ".reasonix" / "sessions").rglob("*.jsonl"))
    assert sessions, "the session must live in the remote catalog"
    assert not list((Path(env["REASONIX_HOME"]) / "sessions").rglob("*.jsonl"))


def _master_pid(port: int) -> int | None:
    for pid in ssh_pids(str(port)):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"ControlMaster=yes" in cmd:
            return pid
    return None


def test_kill_master_mid_turn_then_continue(local: tuple[dict[str, str], Path], sshd: Sshd) -> None:
    env, ws = local
    slow = Turn(text=" ".join(f"w{i}" for i in range(400)), delay=0.05)
    with FakeServer("openai", [Turn.text_only("FIRST-ANSWER-1"), slow]) as srv:
        add_box(env, sshd, srv.url)
        first = cli(env, "remote", "run", "box", str(ws), "remember FIRST-QUESTION")
        assert first.returncode == 0, first.stderr
        proc = subprocess.Popen([sys.executable, "-m", "reasonix", "remote", "run", "box", str(ws),
                                 "-c", "second question"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 60
        while len(srv.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(srv.requests) == 2, "the second turn never reached the provider"
        pid = _master_pid(sshd.port)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1
        assert "connection was lost" in err and "-c" in err
        srv.add(Turn.text_only("THIRD-ANSWER"))
        third = cli(env, "remote", "run", "box", str(ws), "-c", "third question")
        assert third.returncode == 0, third.stderr
        assert "THIRD-ANSWER" in third.stdout
        body = srv.requests[-1].body.decode()
        assert "FIRST-QUESTION" in body and "FIRST-ANSWER-1" in body  # the same session
    time.sleep(0.5)
    assert not remote_processes(sshd.remote_home), "remote processes left running"


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_a_hangup_mid_turn_closes_the_connection(
    local: tuple[dict[str, str], Path], sshd: Sshd, sig: signal.Signals
) -> None:
    """A closed terminal (SIGHUP) or a SIGTERM unwinds: no ssh master is left running, so
    the next connect to the host is not refused as "another connection is open"."""
    env, ws = local
    slow = Turn(text=" ".join(f"w{i}" for i in range(400)), delay=0.05)
    with FakeServer("openai", [slow, Turn.text_only("AFTER-THE-HANGUP")]) as srv:
        add_box(env, sshd, srv.url)
        proc = subprocess.Popen([sys.executable, "-m", "reasonix", "remote", "run", "box", str(ws),
                                 "a long question"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 60
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.requests, "the turn never reached the provider"
        assert _master_pid(sshd.port) is not None
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig, err
        assert "Traceback" not in err
        gone = time.monotonic() + 5
        while ssh_pids(str(sshd.port)) and time.monotonic() < gone:
            time.sleep(0.05)
        assert not ssh_pids(str(sshd.port)), "the ssh master outlived the signal"
        again = cli(env, "remote", "run", "box", str(ws), "-c", "next question")
        assert again.returncode == 0, again.stderr
        assert "AFTER-THE-HANGUP" in again.stdout
    time.sleep(0.5)
    assert not remote_processes(sshd.remote_home), "remote processes left running"
