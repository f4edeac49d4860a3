"""``reasonix remote serve …``, ``remote open`` and ``remote forward`` against a real sshd.

The remote serve is a real detached ``reasonix serve`` from the built .pyz; the
page is reached through the real ``-L`` forward of ``open``, and a turn goes
remote serve -> relay -> ``-R`` -> the local key broker -> the fake provider,
which must see the real key while no remote process or file ever holds it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Turn
from serve.serve_kit import Client, turn_end

from remote.cli_kit import KEY, add_box, all_cmdlines, cli, files_containing, remote_processes
from remote.sshd_kit import Sshd

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def _serve_dir(sshd: Sshd) -> Path:
    return sshd.remote_home / ".reasonix" / "remote" / "serve"


def _secrets(sshd: Sshd) -> list[str]:
    d = _serve_dir(sshd)
    broker = (d / ".env").read_text().split("=", 1)[1].strip()
    return [KEY, (d / "token").read_text().strip(), broker]


def _no_secret_on_a_command_line(secrets: list[str]) -> None:
    for pid, cmd in all_cmdlines().items():
        for secret in secrets:
            assert secret.encode() not in cmd, f"a secret is on the command line of pid {pid}"


def _wait(predicate: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_serve_start_status_logs_stop(local: tuple[dict[str, str], Path], sshd: Sshd) -> None:
    env, ws = local
    add_box(env, sshd, "http://127.0.0.1:9")
    assert "not running" in cli(env, "remote", "serve", "status", "box").stdout
    res = cli(env, "remote", "serve", "start", "box", str(ws))
    assert res.returncode == 0, res.stderr
    assert "serve started" in res.stdout and "reasonix remote open box" in res.stdout
    d = _serve_dir(sshd)
    try:
        assert (d.stat().st_mode & 0o777) == 0o700
        for name in ("token", ".env", "serve.pid", "serve.json", "config.toml"):
            assert ((d / name).stat().st_mode & 0o777) == 0o600, name
        state = json.loads((d / "serve.json").read_text())
        assert "token" not in json.dumps(state).lower()
        _no_secret_on_a_command_line(_secrets(sshd))
        assert not files_containing(sshd.remote_home, KEY)
        status = cli(env, "remote", "serve", "status", "box")
        assert status.returncode == 0, status.stderr
        assert (
            f"serve running (pid {state['pid']}, remote 127.0.0.1:{state['port']}" in status.stdout
        )
        assert f"workspace: {ws}" in status.stdout
        assert "key broker: not connected" in status.stdout
        again = cli(env, "remote", "serve", "start", "box", str(ws))
        assert "already running" in again.stdout
        # Without `open` there is no broker: a provider request gets the reason, not a reset.
        with socket.create_connection(("127.0.0.1", state["relay_port"]), timeout=5) as c:
            c.sendall(b"POST /chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            answer = c.makefile("rb").read().decode()
        assert answer.startswith("HTTP/1.1 401") and "reasonix remote open box" in answer
        logs = cli(env, "remote", "serve", "logs", "box")
        assert logs.returncode == 0 and "supervisor: serve (pid" in logs.stdout
        assert f"serving {ws}" in logs.stdout  # serve's own start-up line
    finally:
        stop = cli(env, "remote", "serve", "stop", "box")
    assert stop.returncode == 0 and "serve stopped" in stop.stdout, stop.stderr
    assert not (d / "serve.pid").exists() and not (d / "serve.json").exists()
    assert not remote_processes(sshd.remote_home), "remote processes left running"
    assert "not running" in cli(env, "remote", "serve", "status", "box").stdout
    assert "serve exited with status 0" in cli(env, "remote", "serve", "logs", "box").stdout


def _echo_server() -> tuple[socket.socket, threading.Thread]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve() -> None:
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            with c:
                while data := c.recv(4096):
                    c.sendall(data)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _echo_through(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"ping through the forward")
        return c.recv(100)


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return True
    return False


def _a_turn_through_the_page(port: int, token: str) -> list[dict[str, Any]]:
    c = Client(port)
    c.hello()
    assert c.get("/api/sessions")[0] == 401  # the forward does not bypass the login
    assert c.login(token) == 200
    sid = c.new_session()
    stream = c.events(sid)
    try:
        assert c.post(f"/api/sessions/{sid}/prompt", {"text": "hello remote"})[0] == 200
        return stream.until(turn_end, timeout=60)
    finally:
        stream.close()


def test_open_forwards_the_page_brokers_the_key_and_follows_forwards(
    local: tuple[dict[str, str], Path], sshd: Sshd
) -> None:
    env, ws = local
    echo, echo_thread = _echo_server()
    with FakeServer("openai", [Turn.text_only("SERVED-REMOTELY-77")]) as srv:
        add_box(env, sshd, srv.url)
        proc = subprocess.Popen([sys.executable, "-m", "reasonix", "remote", "open", "box",
                                 str(ws)], env=env, cwd=env["HOME"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and "#token=" in url, proc.stderr
            port = int(url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            token = url.split("#token=", 1)[1]
            assert token == (_serve_dir(sshd) / "token").read_text().strip()
            state = json.loads((_serve_dir(sshd) / "serve.json").read_text())
            assert port != state["port"]  # a real forward, not the remote port itself
            events = _a_turn_through_the_page(port, token)
            assert "SERVED-REMOTELY-77" in "".join(e.get("text", "") for e in events)
            assert [r.header("authorization") for r in srv.requests] == [f"Bearer {KEY}"]
            _no_secret_on_a_command_line(_secrets(sshd))
            for pid, data in remote_processes(sshd.remote_home).items():
                assert KEY.encode() not in data, f"key visible in remote process {pid}"
            assert not files_containing(sshd.remote_home, KEY)
            assert "key broker: connected" in cli(env, "remote", "serve", "status", "box").stdout

            # forward add -> live at once in the held connection; ls; rm -> closed
            spec = f"{_free_port()}:{echo.getsockname()[1]}"
            local_port = int(spec.split(":")[0])
            added = cli(env, "remote", "forward", "add", "box", spec)
            assert added.returncode == 0, added.stderr
            _wait(lambda: not _refused(local_port))
            assert _echo_through(local_port) == b"ping through the forward"
            listed = cli(env, "remote", "forward", "ls", "box").stdout
            remote_port = spec.split(":")[1]
            assert f"-L 127.0.0.1:{local_port} -> remote 127.0.0.1:{remote_port}" in listed
            assert "(live)" in listed
            assert cli(env, "remote", "forward", "rm", "box", spec).returncode == 0
            _wait(lambda: _refused(local_port))
            assert "no forwards" in cli(env, "remote", "forward", "ls", "box").stdout
        finally:
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=60)
            echo.close()
            echo_thread.join(2)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "serve stopped" in err
    assert _refused(port)
    assert not (_serve_dir(sshd) / "broker.port").exists()
    assert not (_serve_dir(sshd) / "serve.pid").exists()  # open started it, so open stopped it
    time.sleep(0.3)
    assert not remote_processes(sshd.remote_home), "remote processes left running"


def test_open_leaves_a_serve_it_did_not_start(
    local: tuple[dict[str, str], Path], sshd: Sshd
) -> None:
    env, ws = local
    add_box(env, sshd, "http://127.0.0.1:9")
    assert cli(env, "remote", "serve", "start", "box", str(ws)).returncode == 0
    try:
        other = cli(env, "remote", "open", "box", str(sshd.remote_home))
        assert other.returncode == 2 and "stop it first" in other.stderr
        proc = subprocess.Popen([sys.executable, "-m", "reasonix", "remote", "open", "box"],
                                env=env, cwd=env["HOME"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert proc.stdout is not None
        assert "#token=" in proc.stdout.readline()
        os.kill(proc.pid, signal.SIGINT)  # Ctrl-C
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "Traceback" not in err, err
        assert "serve running" in cli(env, "remote", "serve", "status", "box").stdout
    finally:
        assert cli(env, "remote", "serve", "stop", "box").returncode == 0
    assert not remote_processes(sshd.remote_home)
