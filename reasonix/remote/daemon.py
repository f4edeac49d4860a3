"""The remote end of ``reasonix remote serve``: a detached supervisor and the broker relay.

This module runs ON the remote host, imported from the uploaded ``.pyz``
(``python -c "…; from reasonix.remote import daemon; daemon.main(argv)"``), so
it needs nothing but the standard library and the remote's files:

* ``start DIR`` forks a detached supervisor (its own session, stdio on
  ``DIR/serve.log``) that runs ``reasonix serve`` as a child, writes
  ``DIR/serve.pid`` and, once serve printed its URL, ``DIR/serve.json``
  (pid, port, start time, workspace; never the token). The parent waits for
  that and prints it, so the caller learns at once whether serve came up.
* The supervisor also runs the **relay**: serve's provider points at
  ``127.0.0.1:<relay port>``; each connection is passed on to the reverse-
  forwarded key broker named in ``DIR/broker.port`` (written by ``reasonix
  remote open`` while it runs). With no broker there, the relay answers an
  HTTP error saying so, instead of a bare "connection refused".
* ``status DIR`` prints the state as JSON; ``stop DIR`` ends the supervisor
  with SIGTERM (serve ends its turns and releases its sessions) and waits
  until the pid file is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["main", "read_state"]

NO_BROKER = (
    "reasonix remote serve: no key broker is connected, so this request cannot reach the "
    "model. Run `reasonix remote open {name}` on your own machine (the API key stays there) "
    "and try again."
)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ours(pid: int) -> bool:
    """A recycled pid is not our supervisor (Linux: its command line names this module)."""
    try:
        return b"reasonix.remote" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no /proc (BSD, macOS): trust the pid file
    except OSError:
        return True


def _write_private(path: Path, text: str) -> None:
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
    if not _pid_alive(pid) or not _ours(pid):
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


def _relay(listener: socket.socket, directory: Path, name: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay_one, args=(conn, directory, name), daemon=True).start()


# -- the supervisor ---------------------------------------------------------------


def _supervise(directory: Path, meta: dict[str, object], serve_argv: list[str]) -> int:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    relay_port = listener.getsockname()[1]
    template = (directory / "config.toml.in").read_text(encoding="utf-8")
    _write_private(directory / "config.toml", template.replace("@RELAY_PORT@", str(relay_port)))
    name = str(meta.get("host", "NAME"))
    threading.Thread(target=_relay, args=(listener, directory, name), daemon=True).start()
    stopping = threading.Event()
    child = subprocess.Popen(serve_argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)

    def on_signal(signum: int, frame: object) -> None:
        stopping.set()
        with contextlib.suppress(OSError):
            child.send_signal(signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    assert child.stdout is not None
    first = child.stdout.readline().decode("utf-8", "replace").strip()
    # The URL carries the token in its fragment: keep only the port, never log the line.
    url = first.split("#", 1)[0].rstrip("/")
    port = url.rsplit(":", 1)[-1]
    if port.isdigit():
        state = {**meta, "pid": os.getpid(), "serve_pid": child.pid, "port": int(port),
                 "relay_port": relay_port, "started": time.time()}  # fmt: skip
        _write_private(directory / "serve.json", json.dumps(state))
        print(f"supervisor: serve (pid {child.pid}) listens on 127.0.0.1:{port}", flush=True)
    for _ in child.stdout:
        pass  # nothing else is printed on stdout; drain it so serve never blocks
    try:
        code = child.wait(timeout=None if not stopping.is_set() else 30)
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
    listener.close()
    for stale in ("serve.json", "serve.pid", "config.toml"):
        with contextlib.suppress(OSError):
            (directory / stale).unlink()
    print(f"supervisor: serve exited with status {code}", flush=True)
    return 0 if stopping.is_set() else code


def _start(directory: Path) -> int:
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    serve_argv = [str(a) for a in meta.pop("argv")]
    state = read_state(directory)
    if state.get("running"):
        print(json.dumps(state))
        return 3
    for stale in ("serve.json", "serve.pid"):
        with contextlib.suppress(OSError):
            (directory / stale).unlink()
    pid = os.fork()
    if pid == 0:  # the supervisor: detached from the SSH session
        code = 1
        try:
            os.setsid()
            log = os.open(directory / "serve.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.close(null)
            os.close(log)
            sys.stdout = os.fdopen(1, "w", buffering=1)
            _write_private(directory / "serve.pid", f"{os.getpid()}\n")
            code = _supervise(directory, meta, serve_argv)
        except BaseException as err:  # noqa: BLE001 - the log is the only place left to tell
            print(f"supervisor: {type(err).__name__}: {err}", file=sys.stderr, flush=True)
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            print(json.dumps({"running": False, "failed": True}))
            return 1
        if (directory / "serve.json").exists():
            print(json.dumps(read_state(directory)))
            return 0
        time.sleep(0.05)
    print(json.dumps({"running": False, "failed": True, "timeout": True}))
    return 1


def _stop(directory: Path) -> int:
    state = read_state(directory)
    if not state.get("running"):
        print(json.dumps(state))
        return 1
    pid = int(str(state["pid"]))
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 40
    while _pid_alive(pid) and (directory / "serve.pid").exists():
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                (directory / "serve.pid").unlink()
            break
        time.sleep(0.05)
    print(json.dumps({"running": False, "stopped": pid}))
    return 0


def main(argv: list[str]) -> int:
    """``start|status|stop DIR``: print one JSON line, return the exit status."""
    if len(argv) != 2 or argv[0] not in ("start", "status", "stop"):
        print("usage: daemon start|status|stop DIR", file=sys.stderr)
        return 2
    directory = Path(argv[1])
    if argv[0] == "start":
        return _start(directory)
    if argv[0] == "stop":
        return _stop(directory)
    print(json.dumps(read_state(directory)))
    return 0
