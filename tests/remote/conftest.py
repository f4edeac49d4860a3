"""Fixtures: a real sshd per test module, a Host for it, and a leak check."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix.remote.ssh import Host
from remote.sshd_kit import Sshd, make_sshd, missing, ssh_pids


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
        server.stop()


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
    marker = str(request.getfixturevalue("sshd").port)
    pids = ssh_pids(marker)
    assert not pids, f"ssh processes left behind: {pids}"


@pytest.fixture
def sockdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    # short path: Unix socket names are limited to ~104 bytes
    import tempfile

    return tempfile.mkdtemp(prefix="rxs")


def remote_home(sshd: Sshd) -> Path:
    return sshd.remote_home
