"""``reasonix remote test`` and ``reasonix remote fs``: probes and files."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from reasonix.cli.remote_hosts import find_host
from reasonix.cli.remote_prompt import make_prompt
from reasonix.cli.safe_text import printable
from reasonix.remote.bootstrap import MIN_PYTHON, probe
from reasonix.remote.connection import Connection
from reasonix.remote.sftpfs import SftpFS
from reasonix.remote.ssh import Host, control_dir

__all__ = ["execute", "open_connection"]


def open_connection(host: Host, trust: str = "", *, purpose: str = "") -> Connection:
    """Connect to ``host`` with the terminal prompt callback.

    A ``purpose`` gets its own control-socket directory, so a long-held
    connection (``open``) does not block ``connect``/``run`` to the same host.
    """
    sockets = str(control_dir() / purpose) if purpose else None
    return Connection(host, on_prompt=make_prompt(host.name, trust), socket_dir=sockets).open()


def _test(args: argparse.Namespace) -> int:
    host, _ = find_host(args.name)
    started = time.monotonic()
    with open_connection(host, args.trust) as conn:
        connect_s = time.monotonic() - started
        info = probe(conn)
        rtts = []
        for _ in range(3):
            t0 = time.monotonic()
            conn.run("true")
            rtts.append(time.monotonic() - t0)
    print(printable(f"{host.name}: connected to {host.label} in {connect_s * 1000:.0f} ms"))
    print(printable(f"  os: {info.os}  arch: {info.arch}"))
    for path, version in info.pythons:
        print(printable(f"  python: {path} {version}"))
    latency = min(rtts) * 1000
    print(f"  latency: {latency:.0f} ms (round trip of a command over the connection)")
    found = info.python
    need = ".".join(str(n) for n in MIN_PYTHON)
    if found is None:
        print(printable(f"  no suitable Python (>= {need}) found: install python3 {need}+ there"))
        return 1
    print(printable(f"  suitable Python: {found[0]} {found[1]} (>= {need}): ready"))
    return 0


def _remote_path(conn: Connection, path: str) -> str:
    if path.startswith("/"):
        return path
    home = conn.home()
    return f"{home}/{path}" if path else home


def _fs(args: argparse.Namespace) -> int:
    host, _ = find_host(args.name)
    with open_connection(host, args.trust) as conn:
        fs = SftpFS(conn)
        path = _remote_path(conn, args.path)
        if args.verb == "ls":
            for entry in fs.listdir(path):
                kind = "/" if entry.is_dir else ""
                print(printable(f"{entry.mode}  {entry.size:>10}  {entry.name}{kind}"))
            return 0
        if args.verb == "get":
            local = Path(args.local or Path(path).name)
            fs.get(path, local)
            print(printable(f"{host.name}:{path} -> {local}"))
            return 0
        fs.put(Path(args.local), path)
        print(printable(f"{args.local} -> {host.name}:{path}"))
        return 0


def execute(args: argparse.Namespace) -> int:
    """Run ``test`` or ``fs``."""
    if args.action == "test":
        return _test(args)
    return _fs(args)
