"""The remote end of ``reasonix remote serve``: its state files and the broker relay.

Runs ON the remote host inside the supervisor (reasonix/cli/remote_daemon.py),
imported from the uploaded ``.pyz``. The remote serve's provider points at
``127.0.0.1:<relay port>``; each connection is passed on to the reverse-
forwarded key broker named in ``DIR/broker.port`` (written by ``reasonix
remote open`` while it runs). With no broker there, the relay answers an HTTP
error saying so, instead of a bare "connection refused".
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from pathlib import Path

from reasonix.pids import pid_alive

__all__ = ["NO_BROKER", "read_state", "serve_relay", "write_private"]

NO_BROKER = (
    "reasonix remote serve: no key broker is connected, so this request cannot reach the "
    "model. Run `reasonix remote open {name}` on your own machine (the API key stays there) "
    "and try again."
)


def _ours(pid: int) -> bool:
    """A recycled pid is not our supervisor (Linux: its command line names this module)."""
    try:
        return b"remote_daemon" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no /proc (BSD, macOS): trust the pid file
    except OSError:
        return True


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, mode 0600."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def read_state(directory: Path) -> dict[str, object]:
    """What the serve directory says: running or not, and the details of a running one."""
    state: dict[str, object] = {"running": False}
    try:
        pid = int((directory / "serve.pid").read_text().strip())
    except (OSError, ValueError):
        return state
    if not pid_alive(pid) or not _ours(pid):
        return {"running": False, "stale_pid": pid}
    state.update(running=True, pid=pid)
    try:
        state.update(json.loads((directory / "serve.json").read_text()))
        state["uptime"] = max(0.0, time.time() - float(str(state.get("started", time.time()))))
    except (OSError, ValueError):
        state["starting"] = True
    broker = _broker_port(directory)
    state["broker"] = bool(broker) and _reachable(broker)
    return state


def _broker_port(directory: Path) -> int:
    try:
        return int((directory / "broker.port").read_text().strip())
    except (OSError, ValueError):
        return 0


def _reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


# -- the relay --------------------------------------------------------------------


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _refuse(conn: socket.socket, name: str) -> None:
    # Read the request head so the client sees the answer rather than a reset.
    conn.settimeout(5)
    with contextlib.suppress(OSError):
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
    message = NO_BROKER.format(name=name)
    body = json.dumps(
        {"type": "error", "error": {"type": "authentication_error", "message": message}}
    ).encode()
    # 401: not retried by the provider client, so the page shows the reason at once.
    head = (
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        conn.sendall(head.encode() + body)


def _relay_one(conn: socket.socket, directory: Path, name: str) -> None:
    with conn:
        port = _broker_port(directory)
        try:
            upstream = socket.create_connection(("127.0.0.1", port), timeout=5) if port else None
        except OSError:
            upstream = None
        if upstream is None:
            _refuse(conn, name)
            return
        with upstream:
            upstream.settimeout(None)
            back = threading.Thread(target=_pump, args=(upstream, conn), daemon=True)
            back.start()
            _pump(conn, upstream)
            back.join()


def serve_relay(listener: socket.socket, directory: Path, name: str) -> None:
    """Accept on ``listener`` until it is closed, one relay thread per connection."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay_one, args=(conn, directory, name), daemon=True).start()
