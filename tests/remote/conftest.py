"""Fixtures: a real sshd per test module, a Host for it, and a leak check."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from reasonix.remote.ssh import Host
from remote.cli_kit import ROOT, local_env, remote_processes
from remote.sshd_kit import Sshd, descendants, make_sshd, missing, ssh_pids


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    reason = missing()
    if reason:
        pytest.skip(reason)
    server = make_sshd(tmp_path_factory.mktemp("sshd"))
    server.start()
    try:
        yield server
    finally:
        assert server.proc is not None
        left = _wait_gone(lambda: descendants(server.proc.pid))  # type: ignore[union-attr]
        server.stop()
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        assert not left, f"sshd sessions left behind: {left}"


def _wait_gone(find: Callable[[], Iterable[int]], timeout: float = 5.0) -> list[int]:
    """What ``find`` still reports after up to ``timeout`` seconds (processes end lazily)."""
    deadline = time.monotonic() + timeout
    while True:
        left = list(find())
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@pytest.fixture
def host(sshd: Sshd) -> Host:
    sshd.trust_host_key()
    return Host("box", "127.0.0.1", sshd.user, sshd.port, str(sshd.client_key), "",
                str(sshd.ssh_config), sshd.host_options())  # fmt: skip


@pytest.fixture(autouse=True)
def _no_leaked_ssh(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "sshd" not in request.fixturenames:
        return
    server: Sshd = request.getfixturevalue("sshd")
    pids = _wait_gone(lambda: ssh_pids(str(server.port)), 2.0)
    assert not pids, f"ssh processes left behind: {pids}"
    # everything started on the "remote" (agents, serve, its supervisor) has HOME=rhome
    remote = _wait_gone(lambda: remote_processes(server.remote_home))
    assert not remote, f"remote processes left behind: {remote}"


@pytest.fixture
def sockdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # short path: Unix socket names are limited to ~104 bytes; removed after the test
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="rxs")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def remote_home(sshd: Sshd) -> Path:
    return sshd.remote_home


@pytest.fixture(scope="session")
def pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built into a .pyz once per run: the build the remote end runs."""
    out = tmp_path_factory.mktemp("pyz") / "reasonix.pyz"
    subprocess.run([sys.executable, str(ROOT / "build_zipapp.py"), "--output", str(out)],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    return out


@pytest.fixture
def local(tmp_path: Path, pyz: Path, sshd: Sshd) -> Iterator[tuple[dict[str, str], Path]]:
    """(local environment, remote workspace with notes.txt)."""
    sshd.trust_host_key()
    ws = sshd.remote_home / f"repo-{tmp_path.name}"
    ws.mkdir()
    (ws / "notes.txt").write_text("REMOTE-NOTE-4242\n")
    yield local_env(tmp_path, pyz), ws
