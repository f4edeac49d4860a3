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
from reasonix.lazy import Pattern, dataclass
from reasonix.remote.connection import Connection
from reasonix.remote.errors import RemoteError

__all__ = ["Forward", "ForwardSpec", "parse_spec"]

_NAME = Pattern(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?")
_IPV6 = Pattern(r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")
_LOOPBACK_V4 = Pattern(r"127\.\d{1,3}\.\d{1,3}\.\d{1,3}")
_FORMS = "[BIND:]PORT:HOST:HOSTPORT (as `ssh -L` takes it) or LOCAL:REMOTE port numbers"


@dataclass(frozen=True)
class ForwardSpec:
    """One saved ``-L`` forward: ``bind:port`` here -> ``host:hostport`` seen from the remote."""

    port: int
    host: str
    hostport: int
    bind: str = "127.0.0.1"

    def ssh_arg(self) -> str:
        """The argument of ``ssh -L`` (IPv6 addresses in brackets)."""
        return f"{_wrap(self.bind)}:{self.port}:{_wrap(self.host)}:{self.hostport}"

    def describe(self) -> str:
        """``-L 127.0.0.1:8080 -> remote 127.0.0.1:80`` for listings."""
        return f"-L {_wrap(self.bind)}:{self.port} -> remote {_wrap(self.host)}:{self.hostport}"


def _wrap(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _split(spec: str) -> list[str]:
    """``a:[::1]:b`` -> ["a", "::1", "b"]: colons inside brackets do not split."""
    parts: list[str] = []
    i = 0
    while True:
        if spec.startswith("[", i):
            end = spec.find("]", i)
            if end < 0 or spec[end + 1 : end + 2] not in ("", ":"):
                raise ValueError(spec)
            parts.append(spec[i + 1 : end])
            i = end + 2
            if end + 1 == len(spec):
                return parts
        else:
            colon = spec.find(":", i)
            if colon < 0:
                parts.append(spec[i:])
                return parts
            parts.append(spec[i:colon])
            i = colon + 1


def _port(spec: str, text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) <= 65535:
        raise UsageError(f"forward {spec!r}: port {text!r} is not a number from 1 to 65535")
    return int(text)


def _address(spec: str, text: str, what: str) -> str:
    if _NAME.fullmatch(text) or _IPV6.fullmatch(text):
        return text
    raise UsageError(f"forward {spec!r}: {what} {text!r} is not a host name or address")


def _loopback(bind: str) -> bool:
    return bind in ("localhost", "::1") or _LOOPBACK_V4.fullmatch(bind) is not None


def parse_spec(spec: str) -> ForwardSpec:
    """Parse a forward as ``ssh -L`` takes it, or the short ``LOCAL:REMOTE``.

    ``LOCAL:REMOTE`` is ``127.0.0.1:LOCAL:127.0.0.1:REMOTE``; without ``BIND``
    the local end binds 127.0.0.1. ``HOST`` is resolved on the remote side.
    A ``BIND`` that is not a loopback address is refused: a saved forward
    must never open a port to the network.
    """
    try:
        parts = _split(spec.strip())
    except ValueError:
        parts = []
    if len(parts) not in (2, 3, 4):
        raise UsageError(f"forward {spec!r}: expected {_FORMS}")
    if len(parts) == 2:
        return ForwardSpec(_port(spec, parts[0]), "127.0.0.1", _port(spec, parts[1]))
    bind = parts[0] if len(parts) == 4 else "127.0.0.1"
    port, host, hostport = parts[-3:]
    if not _loopback(bind):
        raise UsageError(
            f"forward {spec!r}: BIND {bind!r} would open the port to the network; saved "
            "forwards bind the loopback only (127.0.0.1, localhost or ::1)"
        )
    return ForwardSpec(_port(spec, port), _address(spec, host, "HOST"), _port(spec, hostport), bind)


@dataclass
class Forward:
    """One forward on a connection. ``kind`` is "L" (local port -> remote) or "R"."""

    conn: Connection
    kind: str
    listen_port: int
    target_port: int
    active: bool = False
    # Loopback by default on both ends: a forward must not open a port to the LAN
    # (parse_spec refuses any other bind). target_host is resolved by the far end.
    bind: str = "127.0.0.1"
    target_host: str = "127.0.0.1"

    @classmethod
    def local(cls, conn: Connection, spec: ForwardSpec) -> Forward:
        """The ``-L`` forward of a saved spec (not started)."""
        return cls(conn, "L", spec.port, spec.hostport, bind=spec.bind, target_host=spec.host)

    def _spec(self) -> list[str]:
        return [f"-{self.kind}", f"{_wrap(self.bind)}:{self.listen_port}:"
                f"{_wrap(self.target_host)}:{self.target_port}"]  # fmt: skip

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
        here = f"{_wrap(self.bind)}:{self.listen_port}"
        there = f"{_wrap(self.target_host)}:{self.target_port}"
        if self.kind == "L":
            return f"-L local {here} -> remote {there}"
        return f"-R remote {here} -> local {there}"

    def healthy(self, timeout: float = 3.0) -> bool:
        """A -L forward accepts a TCP connection on its local port; -R: the master lives."""
        if not self.active or not self.conn.alive:
            return False
        if self.kind == "R":
            return True
        try:
            with socket.create_connection((self.bind, self.listen_port), timeout=timeout):
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
