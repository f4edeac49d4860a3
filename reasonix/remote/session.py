"""Run the remote ``reasonix`` with its provider pointed at the reverse-forwarded broker.

Each connection gets a private directory ``~/.reasonix/remote/conn/<id>/``
(0700) holding a generated ``config.toml`` (provider ``base_url`` = the
remote loopback end of the ``-R`` forward) and a ``.env`` with the broker
token — never the API key. The remote process runs with ``REASONIX_HOME`` set
to that directory and ``REASONIX_STATE_HOME`` set to the remote's own
``~/.reasonix``, so sessions and memory are the remote catalog (REMOTE-6).
"""

from __future__ import annotations

import secrets
import shlex

from reasonix.lazy import dataclass
from reasonix.remote.bootstrap import Installed
from reasonix.remote.connection import Connection
from reasonix.remote.errors import RemoteError

__all__ = ["RemoteAgent", "prepare"]

TOKEN_VAR = "REASONIX_BROKER_TOKEN"

# The remote supervisor: runs reasonix as its child and, when the SSH session
# dies under it (the parent sshd goes away: link cut, master killed), sends
# SIGTERM so the turn is cancelled and the session lease released, instead of
# leaving an orphan agent running (and holding the session) on the remote.
_SUPERVISOR = (
    "import os,signal,subprocess,sys,time\n"
    "p=subprocess.Popen(sys.argv[1:])\n"
    "for s in (signal.SIGTERM,signal.SIGINT,signal.SIGHUP):\n"
    " signal.signal(s,lambda n,f:p.send_signal(signal.SIGTERM))\n"
    "ppid=os.getppid()\n"
    "while p.poll() is None:\n"
    " if os.getppid()!=ppid:\n"
    "  p.terminate()\n"
    "  try: p.wait(15)\n"
    "  except subprocess.TimeoutExpired: p.kill()\n"
    " time.sleep(0.3)\n"
    "sys.exit(p.wait() if p.returncode is None else p.returncode)\n"
)


@dataclass(frozen=True)
class RemoteAgent:
    """A prepared remote run: where its files are and how to start it."""

    conn: Connection
    installed: Installed
    directory: str

    def script(self, args: list[str], *, workdir: str = "") -> str:
        """The ``sh -c`` script that starts the remote reasonix with ``args``."""
        words = " ".join(shlex.quote(a) for a in args)
        cd = f"cd {shlex.quote(workdir)} && " if workdir else ""
        py = shlex.quote(self.installed.python)
        return (
            f"{cd}REASONIX_HOME={shlex.quote(self.directory)} "
            f'REASONIX_STATE_HOME="$HOME/.reasonix" REASONIX_CACHE_HOME="$HOME/.reasonix/cache" '
            f"exec {py} -c {shlex.quote(_SUPERVISOR)} "
            f"{py} {shlex.quote(self.installed.path)} {words}"
        )

    def argv(self, args: list[str], *, workdir: str = "", tty: bool = False) -> list[str]:
        """Local argv (ssh over the master) running the remote reasonix."""
        return self.conn.argv(
            ["sh", "-c", shlex.quote(self.script(args, workdir=workdir))], tty=tty
        )

    def cleanup(self) -> None:
        """Remove the connection directory (best effort: the link may be gone)."""
        try:
            self.conn.run(f"rm -rf {shlex.quote(self.directory)}", timeout=15)
        except RemoteError:
            pass


def prepare(conn: Connection, installed: Installed, config_toml: str, token: str) -> RemoteAgent:
    """Write the per-connection config and token file on the remote host.

    Both go through stdin of a ``umask 077`` shell, so neither appears in a
    command line; stale directories of earlier (killed) connections older
    than a day are removed on the way.
    """
    if "\0" in config_toml or "\n" in token:
        raise RemoteError("invalid broker configuration")
    base = f"{installed.home}/.reasonix/remote/conn"
    directory = f"{base}/{secrets.token_hex(8)}"
    payload = f"{TOKEN_VAR}={token}\n\0{config_toml}".encode()
    script = (
        f"umask 077; mkdir -p {shlex.quote(directory)} && "
        f"find {shlex.quote(base)} -mindepth 1 -maxdepth 1 -type d -mtime +1 -exec rm -rf {{}} + ; "
        f"{shlex.quote(installed.python)} -c 'import sys; d=sys.stdin.buffer.read(); "
        f'e, c = d.split(b"\\0", 1); '
        f'open(sys.argv[1] + "/.env", "wb").write(e); '
        f'open(sys.argv[1] + "/config.toml", "wb").write(c)\' {shlex.quote(directory)}'
    )
    res = conn.run(script, stdin=payload)
    if res.code != 0:
        raise RemoteError(
            f"{conn.host.name}: cannot prepare the remote session: {res.stderr.strip()}"
        )
    return RemoteAgent(conn, installed, directory)
