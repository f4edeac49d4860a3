"""The supervisor of a remote ``reasonix serve`` (runs ON the remote host, from the .pyz).

``python -c "…; from reasonix.cli import remote_daemon; …" start|status|stop DIR``
(see reasonix/remote/serving.py) prints one JSON line and exits with its status:

* ``start`` forks a detached supervisor (its own session, stdio on
  ``DIR/serve.log``) that runs ``reasonix serve`` as a child and the broker
  relay (reasonix/remote/relay.py), writes ``DIR/serve.pid`` and, once serve
  printed its URL, ``DIR/serve.json`` (pid, port, start time, workspace; never
  the token). The parent waits for that, so the caller learns at once whether
  serve came up.
* ``status`` prints the state; ``stop`` ends the supervisor with SIGTERM (serve
  ends its turns and releases its sessions) and waits until the pid file is gone.
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

from reasonix.pids import pid_alive
from reasonix.remote.relay import read_state, serve_relay, write_private

__all__ = ["main"]


# -- the supervisor ---------------------------------------------------------------


def _supervise(directory: Path, meta: dict[str, object], serve_argv: list[str]) -> int:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    relay_port = listener.getsockname()[1]
    template = (directory / "config.toml.in").read_text(encoding="utf-8")
    write_private(directory / "config.toml", template.replace("@RELAY_PORT@", str(relay_port)))
    name = str(meta.get("host", "NAME"))
    threading.Thread(target=serve_relay, args=(listener, directory, name), daemon=True).start()
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
        write_private(directory / "serve.json", json.dumps(state))
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
            write_private(directory / "serve.pid", f"{os.getpid()}\n")
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
    while pid_alive(pid) and (directory / "serve.pid").exists():
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
