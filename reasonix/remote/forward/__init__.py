"""Port-forward lifecycle for Remote-SSH (-L and -R over the ControlMaster).

Forwards are added to and cancelled on the running master (``ssh -O forward``
/ ``-O cancel``), so they cost no extra process and die with the master: a
forward can never outlive its connection.
"""

from __future__ import annotations

import socket
import subprocess

from reasonix.cancel import Cancel
from reasonix.errors import UsageError
from reasonix.lazy import dataclass
from reasonix.remote.connection import Connection
from reasonix.remote.errors import RemoteError

__all__ = ["Forward", "parse_spec"]


def parse_spec(spec: str) -> tuple[int, int]:
    """``LOCAL:REMOTE`` -> (local port, remote port); both loopback-only."""
    try:
        left, right = spec.split(":")
        local, remote = int(left), int(right)
    except ValueError:
        raise UsageError(f"forward {spec!r}: expected LOCAL:REMOTE port numbers") from None
    for port in (local, remote):
        if not 0 <= port <= 65535:
            raise UsageError(f"forward {spec!r}: port {port} out of range")
    return local, remote


@dataclass
class Forward:
    """One forward on a connection. ``kind`` is "L" (local port -> remote) or "R"."""

    conn: Connection
    kind: str
    listen_port: int
    target_port: int
    active: bool = False

    def _spec(self) -> list[str]:
        # Bind loopback only on both ends: a forward must not open a port to the LAN.
        return [f"-{self.kind}", f"127.0.0.1:{self.listen_port}:127.0.0.1:{self.target_port}"]

    def start(self, cancel: Cancel | None = None) -> Forward:
        """Add the forward; with listen port 0 the allocated port is filled in (-R)."""
        if self.kind not in ("L", "R"):
            raise UsageError(f"unknown forward kind {self.kind!r}")
        if self.kind == "L" and self.listen_port == 0:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.listen_port = s.getsockname()[1]
        argv = self.conn.control_argv("forward", *self._spec())
        proc = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise RemoteError(f"{self.conn.host.name}: forward {self.describe()} failed: {err}")
        out = proc.stdout.decode().strip()
        if self.kind == "R" and self.listen_port == 0:
            if not out.isdigit():
                raise RemoteError(f"{self.conn.host.name}: no port allocated for -R ({out!r})")
            self.listen_port = int(out)
        self.active = True
        if cancel is not None:
            cancel.on_cancel(self.stop)
        return self

    def describe(self) -> str:
        """``-L 127.0.0.1:8080 -> remote 127.0.0.1:80`` for messages."""
        if self.kind == "L":
            return f"-L local 127.0.0.1:{self.listen_port} -> remote 127.0.0.1:{self.target_port}"
        return f"-R remote 127.0.0.1:{self.listen_port} -> local 127.0.0.1:{self.target_port}"

    def healthy(self, timeout: float = 3.0) -> bool:
        """A -L forward accepts a TCP connection on its local port; -R: the master lives."""
        if not self.active or not self.conn.alive:
            return False
        if self.kind == "R":
            return True
        try:
            with socket.create_connection(("127.0.0.1", self.listen_port), timeout=timeout):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        """Cancel the forward (a no-op when the master is already gone)."""
        if not self.active:
            return
        self.active = False
        if self.conn.master is None or self.conn.master.poll() is not None:
            return
        argv = self.conn.control_argv("cancel", *self._spec())
        subprocess.run(argv, capture_output=True, timeout=30, check=False)
