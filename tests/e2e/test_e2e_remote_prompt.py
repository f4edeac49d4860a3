"""Remote-SSH as a person drives it, against the built .pyz and a real sshd.

The first ``reasonix remote test HOST`` shows OpenSSH's host-key question on
the terminal; the answer is typed on a real pseudo-terminal (yes connects and
names the fingerprint, no refuses and records nothing). ``remote forward add``
takes OpenSSH's own ``-L`` syntax (``[BIND:]PORT:HOST:HOSTPORT``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_term import Term
from remote.sshd_kit import Sshd, fingerprint, make_sshd, missing

pytestmark = [pytest.mark.e2e, pytest.mark.interop]


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


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "REASONIX_HOME": str(tmp_path / "rx"),
    }


def _rx(pyz: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(pyz), *args], env=env, cwd=env["HOME"],
                          capture_output=True, text=True, timeout=90)  # fmt: skip


def _add_box(pyz: Path, env: dict[str, str], sshd: Sshd) -> None:
    opts = [a for o in sshd.host_options() for a in ("-o", o)]
    res = _rx(pyz, env, "remote", "add", "box", f"{sshd.user}@127.0.0.1", "-p", str(sshd.port),
              "-i", str(sshd.client_key), "-F", str(sshd.ssh_config), *opts)  # fmt: skip
    assert res.returncode == 0, res.stderr


def _remote_test_on_a_tty(
    pyz: Path, env: dict[str, str], answer: str, last: str
) -> tuple[int, str]:
    """Run ``remote test box`` on a pty, type ``answer`` at the question, read up to ``last``."""
    term = Term([sys.executable, str(pyz), "remote", "test", "box"], Path(env["HOME"]), env)
    try:
        term.expect("Trust the host key of box", timeout=60)
        term.expect("[yes/no]")
        term.send(answer + "\n")
        term.expect(last, timeout=60)
        code = term.close()
    except BaseException:
        term.proc.kill()
        raise
    return code, term.screen


def test_a_new_host_key_answered_yes_on_a_terminal_connects(
    pyz: Path, tmp_path: Path, sshd: Sshd
) -> None:
    sshd.known_hosts.write_text("")
    env = _env(tmp_path)
    _add_box(pyz, env, sshd)
    fp = fingerprint(sshd.host_key.with_suffix(".pub"))
    code, screen = _remote_test_on_a_tty(pyz, env, "yes", "ready")
    assert code == 0, screen
    assert "Traceback" not in screen
    assert "box: connected to" in screen and "ready" in screen
    assert screen.count(fp) >= 2, screen  # in the question, and named as accepted
    assert f"host key {fp} accepted" in screen
    assert f"[127.0.0.1]:{sshd.port}" in sshd.known_hosts.read_text()  # trusted on first use
    again = _rx(pyz, env, "remote", "test", "box")  # known now: no question, no terminal needed
    assert again.returncode == 0, again.stderr
    assert "connected to" in again.stdout and "Trust the host key" not in again.stderr


def test_a_new_host_key_answered_no_on_a_terminal_refuses(
    pyz: Path, tmp_path: Path, sshd: Sshd
) -> None:
    sshd.known_hosts.write_text("")
    env = _env(tmp_path)
    _add_box(pyz, env, sshd)
    code, screen = _remote_test_on_a_tty(pyz, env, "no", "refused")
    assert code != 0, screen
    assert "host key was not confirmed" in screen
    assert "connected to" not in screen and "Traceback" not in screen
    assert sshd.known_hosts.read_text() == ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_forward_add_takes_openssh_syntax(pyz: Path, tmp_path: Path, sshd: Sshd) -> None:
    sshd.trust_host_key()
    env = _env(tmp_path)
    _add_box(pyz, env, sshd)
    local, target = _free_port(), _free_port()
    for spec in (f"{local}:127.0.0.1:{target}", f"localhost:{local + 1}:db.internal:5432",
                 f"{local + 2}:{target}"):  # fmt: skip
        added = _rx(pyz, env, "remote", "forward", "add", "box", spec)
        assert added.returncode == 0, added.stderr
        assert f"forward {spec} saved" in added.stdout
    listed = _rx(pyz, env, "remote", "forward", "ls", "box")
    assert listed.returncode == 0, listed.stderr
    assert f"-L 127.0.0.1:{local} -> remote 127.0.0.1:{target}" in listed.stdout
    assert f"-L localhost:{local + 1} -> remote db.internal:5432" in listed.stdout
    assert f"-L 127.0.0.1:{local + 2} -> remote 127.0.0.1:{target}" in listed.stdout
    # the same forward written another way is the same forward
    removed = _rx(
        pyz, env, "remote", "forward", "rm", "box", f"127.0.0.1:{local}:127.0.0.1:{target}"
    )
    assert removed.returncode == 0, removed.stderr
    left = _rx(pyz, env, "remote", "forward", "ls", "box").stdout
    assert f"127.0.0.1:{local} ->" not in left and f"localhost:{local + 1}" in left
    for bad in (f"0.0.0.0:{local}:127.0.0.1:{target}", f"*:{local}:h:1", "8080:-oProxy=x:80",
                "8080", "a:b", f"{local}:127.0.0.1:99999"):  # fmt: skip
        refused = _rx(pyz, env, "remote", "forward", "add", "box", bad)
        assert refused.returncode == 2, (bad, refused.stdout, refused.stderr)
        assert "Traceback" not in refused.stderr
