"""Real sshd: TOFU, changed host keys, commands, -L forwards, SFTP, bootstrap upload."""

from __future__ import annotations

import socket
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from reasonix.cancel import Cancel
from reasonix.cli.remote_forwards import ForwardSync
from reasonix.cli.remote_hosts import save_host
from reasonix.remote.bootstrap import find_python, install, probe
from reasonix.remote.connection import Connection
from reasonix.remote.errors import HostKeyChanged, HostKeyRejected, PromptFailed
from reasonix.remote.forward import Forward
from reasonix.remote.sftpfs import SftpFS
from reasonix.remote.ssh import Host
from remote.sshd_kit import Sshd, fingerprint, keygen

pytestmark = pytest.mark.interop


def test_tofu_accept_records_key_then_no_prompt(sshd: Sshd, host: Host, sockdir: str) -> None:
    sshd.known_hosts.write_text("")
    asked: list[tuple[str, str]] = []

    def yes(kind: str, text: str) -> str:
        asked.append((kind, text))
        return "yes"

    with Connection(host, on_prompt=yes, socket_dir=sockdir) as conn:
        assert conn.run("echo hi").stdout == b"hi\n"
    assert [k for k, _ in asked] == ["hostkey"]
    assert fingerprint(sshd.host_key.with_suffix(".pub")) in asked[0][1]
    assert f"[127.0.0.1]:{sshd.port}" in sshd.known_hosts.read_text()
    asked.clear()
    with Connection(host, on_prompt=yes, socket_dir=sockdir) as conn:
        assert conn.run("true").code == 0
    assert asked == []  # known now: trust on FIRST use only


def test_tofu_reject_refuses(sshd: Sshd, host: Host, sockdir: str) -> None:
    sshd.known_hosts.write_text("")
    with pytest.raises(HostKeyRejected):
        Connection(host, on_prompt=lambda k, t: "no", socket_dir=sockdir).open()
    with pytest.raises(HostKeyRejected):
        Connection(host, on_prompt=None, socket_dir=sockdir).open()
    assert sshd.known_hosts.read_text() == ""


def test_a_failing_prompt_callback_is_reported_not_swallowed(
    sshd: Sshd, host: Host, sockdir: str
) -> None:
    sshd.known_hosts.write_text("")
    asked: list[str] = []

    def broken(kind: str, text: str) -> str:
        asked.append(kind)
        raise OSError(6, "No such device or address: '/dev/tty'")

    with pytest.raises(PromptFailed) as err:
        Connection(host, on_prompt=broken, socket_dir=sockdir).open()
    assert asked == ["hostkey"]
    text = str(err.value)
    assert "hostkey prompt failed" in text and "OSError" in text and "/dev/tty" in text
    assert isinstance(err.value.__cause__, OSError)
    assert sshd.known_hosts.read_text() == ""  # refused: nothing was trusted


def test_changed_host_key_refused_loudly(
    sshd: Sshd, host: Host, tmp_path: Path, sockdir: str
) -> None:
    other = tmp_path / "other"
    keygen(other)
    pub = other.with_suffix(".pub").read_text().split()
    sshd.known_hosts.write_text(f"[127.0.0.1]:{sshd.port} {pub[0]} {pub[1]}\n")
    asked: list[str] = []
    with pytest.raises(HostKeyChanged) as err:
        Connection(host, on_prompt=lambda k, t: asked.append(k) or "yes",  # type: ignore[func-returns-value]
                   socket_dir=sockdir).open()  # fmt: skip
    assert "HOST KEY HAS CHANGED" in str(err.value)
    assert asked == []  # never offered for confirmation


def test_control_dir_private_and_master_gone_after_close(host: Host, sockdir: str) -> None:
    conn = Connection(host, socket_dir=sockdir).open()
    assert (Path(sockdir).stat().st_mode & 0o777) == 0o700
    assert Path(conn.control_path).name.startswith("cm-")
    assert host.hostname not in Path(conn.control_path).name
    master = conn.master
    assert master is not None and conn.alive
    conn.close()
    assert master.poll() is not None
    assert not Path(conn.control_path).exists()


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


def test_local_forward_passes_data_and_closes_on_cancel(host: Host, sockdir: str) -> None:
    srv, thread = _echo_server()
    target = srv.getsockname()[1]
    cancel = Cancel()
    try:
        with Connection(host, socket_dir=sockdir) as conn:
            fwd = Forward(conn, "L", 0, target).start(cancel)
            assert fwd.healthy()
            with socket.create_connection(("127.0.0.1", fwd.listen_port), timeout=5) as c:
                c.sendall(b"ping over ssh")
                assert c.recv(100) == b"ping over ssh"
            cancel.cancel()
            assert not fwd.active
            with pytest.raises(OSError):
                socket.create_connection(("127.0.0.1", fwd.listen_port), timeout=2).close()
    finally:
        srv.close()
        thread.join(2)


def test_saved_forwards_in_openssh_syntax_carry_data(host: Host, sockdir: str) -> None:
    srv, thread = _echo_server()
    target = srv.getsockname()[1]
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    # as `ssh -L` takes them: PORT:HOST:HOSTPORT and BIND:PORT:HOST:HOSTPORT
    specs = [f"{ports[0]}:127.0.0.1:{target}", f"localhost:{ports[1]}:localhost:{target}"]
    save_host(host, specs)
    try:
        with Connection(host, socket_dir=sockdir) as conn:
            sync = ForwardSync(conn, "box")
            sync.sync()
            try:
                assert sorted(sync.active) == sorted(specs)
                for port in ports:
                    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                        c.sendall(b"ping over ssh -L")
                        assert c.recv(100) == b"ping over ssh -L"
            finally:
                sync.stop()
            for port in ports:
                with pytest.raises(OSError):
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        srv.close()
        thread.join(2)


def test_sftp_round_trip(sshd: Sshd, host: Host, sockdir: str) -> None:
    with Connection(host, socket_dir=sockdir) as conn:
        home = conn.home()
        assert home == str(sshd.remote_home)
        fs = SftpFS(conn)
        fs.mkdir(f"{home}/work/sub dir")
        fs.write(f"{home}/work/sub dir/a.txt", "héllo\n".encode())
        assert fs.read(f"{home}/work/sub dir/a.txt") == "héllo\n".encode()
        fs.rename(f"{home}/work/sub dir/a.txt", f"{home}/work/b.txt")
        names = {e.name: e for e in fs.listdir(f"{home}/work")}
        assert set(names) == {"sub dir", "b.txt"} and names["sub dir"].is_dir
        st = fs.stat(f"{home}/work/b.txt")
        assert st is not None and st.size == len("héllo\n".encode())
        assert fs.stat(f"{home}/work/missing") is None
    assert (sshd.remote_home / "work/b.txt").read_text() == "héllo\n"


def test_bootstrap_uploads_once_then_skips_by_checksum(sshd: Sshd, host: Host, tmp_path: Path,
                                                       sockdir: str) -> None:  # fmt: skip
    pyz = tmp_path / "fake.pyz"
    pyz.write_bytes(b"PK fake build one")
    with Connection(host, socket_dir=sockdir) as conn:
        info = probe(conn)
        assert info.os == "Linux" and info.pythons
        _path, version = find_python(conn, info)
        assert tuple(int(x) for x in version.split(".")[:2]) >= (3, 10)
        first = install(conn, pyz)
        assert first.uploaded and first.path.startswith(
            f"{sshd.remote_home}/.reasonix/remote/bin/reasonix-"
        )
        remote = Path(first.path)
        assert remote.read_bytes() == pyz.read_bytes() and remote.stat().st_mode & 0o777 == 0o700
        again = install(conn, pyz)
        assert not again.uploaded and again.path == first.path
        remote.write_bytes(b"tampered")  # same name, wrong content: uploaded again
        assert install(conn, pyz).uploaded
        assert remote.read_bytes() == pyz.read_bytes()


def test_wrong_user_key_is_auth_failure(host: Host, tmp_path: Path, sockdir: str) -> None:
    from reasonix.remote.errors import AuthFailed

    stranger = tmp_path / "k"
    keygen(stranger)
    with pytest.raises(AuthFailed):
        Connection(replace(host, identity=str(stranger)), socket_dir=sockdir).open()
