"""A real OpenSSH server on 127.0.0.1 for the Remote-SSH tests.

The server runs as the current user on a free port with its own host key,
authorized_keys and sshd_config in a temp dir (``-D -e``: foreground, log to
stderr) and is killed in teardown. Sessions get ``HOME=<tmp>/rhome`` through
an ``environment=`` option in authorized_keys, so the "remote" is this machine
under a temp HOME, and the user's ~/.ssh is never read or written.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def missing() -> str:
    """A skip reason containing MISSING when a needed program is absent, else ""."""
    for prog in ("ssh", "sftp", "ssh-keygen"):
        if shutil.which(prog) is None:
            return f"MISSING {prog} (apt install openssh-client)"
    if not os.access(SSHD, os.X_OK):
        return f"MISSING {SSHD} (apt install openssh-server)"
    return ""


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def fingerprint(pub: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(pub)], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return out.split()[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Sshd:
    root: Path
    port: int
    client_key: Path
    host_key: Path
    known_hosts: Path
    ssh_config: Path
    remote_home: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def user(self) -> str:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name

    def start(self) -> None:
        cfg = self.root / "sshd_config"
        cfg.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.host_key}\n"
            f"AuthorizedKeysFile {self.root}/authorized_keys\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\n"
            "PermitRootLogin prohibit-password\nStrictModes no\nPermitUserEnvironment HOME\n"
            f"PidFile {self.root}/sshd.pid\nSubsystem sftp internal-sftp\n"
            "AllowTcpForwarding yes\nLogLevel ERROR\n"
        )
        if os.getuid() == 0:
            # sshd run as root insists on its privilege-separation dir (the
            # Debian service creates it at boot; a container may lack it).
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no test secrets in sshd
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], env=env,
                                     stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                self.stop()
                raise RuntimeError(f"sshd died: {err}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("sshd did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            if self.proc.stderr:
                self.proc.stderr.close()
            self.proc = None

    def trust_host_key(self) -> None:
        pub = (self.host_key.with_suffix(".pub")).read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {pub[0]} {pub[1]}\n")

    def host_options(self) -> tuple[str, ...]:
        return (f"UserKnownHostsFile={self.known_hosts}", "GlobalKnownHostsFile=/dev/null",
                "UpdateHostKeys=no", "LogLevel=ERROR")  # fmt: skip


def make_sshd(root: Path) -> Sshd:
    root.mkdir(parents=True, exist_ok=True)
    client = root / "client_key"
    host = root / "host_key"
    keygen(client)
    keygen(host)
    rhome = root / "rhome"
    rhome.mkdir()
    pub = client.with_suffix(".pub").read_text().strip()
    (root / "authorized_keys").write_text(f'environment="HOME={rhome}" {pub}\n')
    ssh_config = root / "ssh_config"
    ssh_config.write_text("")  # -F: the user's ~/.ssh/config is never read
    return Sshd(root, free_port(), client, host, root / "known_hosts", ssh_config, rhome)


def ssh_pids(marker: str) -> list[int]:
    """Pids of ssh/sftp processes whose command line mentions ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            cmd
            and os.path.basename(cmd[0]) in (b"ssh", b"sftp")
            and marker.encode() in b" ".join(cmd)
        ):
            found.append(int(entry.name))
    return found


def descendants(root: int) -> list[int]:
    """Pids of every live process below ``root`` (sshd's per-connection children)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: split after the last ")"
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == pid]
        found += kids
        frontier += kids
    return found
