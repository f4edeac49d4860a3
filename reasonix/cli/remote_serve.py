"""``reasonix remote serve start|status|logs|stop`` and ``reasonix remote open``.

The division of labour (docs/REMOTE.md §4): ``serve start`` leaves nothing
running locally — a detached ``reasonix serve`` runs on the remote loopback
with its login token in a 0600 file there. Its provider requests go to a
relay in the remote supervisor, which passes them to the key broker only
while a ``reasonix remote open`` holds one (``-R``) together with the ``-L``
forward the browser uses; without it, a turn fails at once with a message
that says to run ``remote open``. ``open`` starts the serve when none runs
(and stops it again at exit), and holds until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING

from reasonix.cli.remote_agent import broker_for, local_pyz, remote_config
from reasonix.cli.remote_forwards import ForwardSync
from reasonix.cli.remote_hosts import find_host
from reasonix.cli.remote_tools import open_connection
from reasonix.cli.safe_text import printable
from reasonix.errors import UsageError
from reasonix.remote.bootstrap import install
from reasonix.remote.connection import Connection
from reasonix.remote.errors import ConnectionLost, RemoteError
from reasonix.remote.forward import Forward
from reasonix.remote.serving import RELAY_PLACEHOLDER, RemoteServe

if TYPE_CHECKING:
    from typing import Any

__all__ = ["configure", "execute_open", "execute_serve"]


def configure(sub: Any, trust: Any) -> None:
    """Declare ``serve`` and ``open`` on the ``remote`` sub-parsers."""
    serve = sub.add_parser("serve", help="a detached `reasonix serve` on the remote host")
    ssub = serve.add_subparsers(dest="verb", required=True, metavar="VERB")
    start = ssub.add_parser("start", help="start it (bound to the remote loopback)")
    start.add_argument("name")
    start.add_argument("dir", nargs="?", default="", help="remote workspace (default: home)")
    start.add_argument("--model", default="", help="model ref (default: the local default)")
    for verb, text in (("status", "running? pid, port, uptime, broker"),
                       ("stop", "stop it cleanly"), ("logs", "the tail of its log")):  # fmt: skip
        p = ssub.add_parser(verb, help=text)
        p.add_argument("name")
        if verb == "logs":
            p.add_argument("-n", "--lines", type=int, default=50)
        trust(p)
    trust(start)
    opn = sub.add_parser("open", help="forward the remote serve to a local port; print the URL")
    opn.add_argument("name")
    opn.add_argument("dir", nargs="?", default="", help="remote workspace if serve must start")
    opn.add_argument("--model", default="", help="model ref if serve must start")
    trust(opn)


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    return f"{s // 3600}h {s % 3600 // 60}m"


def _say(text: str, *, err: bool = False) -> None:
    print(printable(text), file=sys.stderr if err else sys.stdout, flush=True)


def _start(rs: RemoteServe, name: str, workdir: str, model: str) -> dict[str, Any]:
    _broker, _, model_ref = broker_for(model)  # the key is checked here, locally, at once
    _broker.close()
    state = rs.start(remote_config(model_ref, RELAY_PLACEHOLDER), workdir=workdir, model=model_ref)
    if not state.get("running"):
        tail = rs.logs(15).strip()
        raise RemoteError(
            f"{name}: the remote serve did not start" + (f"; its log ends:\n{tail}" if tail else "")
        )
    return state


def _serve_start(rs: RemoteServe, args: argparse.Namespace) -> int:
    state = rs.status()
    if state.get("running"):
        _say(f"{args.name}: serve already running (pid {state.get('pid')}, remote port "
             f"{state.get('port')}); open it with `reasonix remote open {args.name}`")  # fmt: skip
        return 0
    state = _start(rs, args.name, args.dir, args.model)
    _say(f"{args.name}: serve started (pid {state['pid']}, remote 127.0.0.1:{state['port']}, "
         f"workspace {state.get('dir')}, model {state.get('model')})")  # fmt: skip
    _say(f"open it with `reasonix remote open {args.name}`: that forwards the page to this "
         "machine and connects the key broker (the API key never leaves this machine; "
         "without `open` the serve's turns fail and say so)")  # fmt: skip
    return 0


def _serve_status(rs: RemoteServe, name: str) -> int:
    state = rs.status()
    if not state.get("running"):
        _say(f"{name}: serve not running (start it with `reasonix remote serve start {name}`)")
        return 1
    up = _duration(float(state.get("uptime", 0)))
    _say(f"{name}: serve running (pid {state['pid']}, remote 127.0.0.1:{state.get('port')}, "
         f"up {up})")  # fmt: skip
    _say(f"  workspace: {state.get('dir')}  model: {state.get('model')}")
    broker = (
        "connected" if state.get("broker") else f"not connected (`reasonix remote open {name}`)"
    )
    _say(f"  key broker: {broker}")
    return 0


def execute_serve(args: argparse.Namespace) -> int:
    """Run one ``remote serve`` verb."""
    host, _ = find_host(args.name)
    with open_connection(host, args.trust) as conn:
        rs = RemoteServe(conn, install(conn, local_pyz()))
        if args.verb == "start":
            return _serve_start(rs, args)
        if args.verb == "status":
            return _serve_status(rs, args.name)
        if args.verb == "logs":
            sys.stdout.write(printable(rs.logs(max(1, args.lines))))
            sys.stdout.flush()
            return 0
        state = rs.stop()
        if "stopped" not in state:
            _say(f"{args.name}: serve was not running")
            return 0
        _say(f"{args.name}: serve stopped (pid {state['stopped']})")
        return 0


class _Hold:
    """Wait for Ctrl-C / SIGTERM or a dead connection.

    SIGTERM and SIGHUP are caught from the start, so one arriving during set-up
    still unwinds everything; Ctrl-C stays a KeyboardInterrupt until
    :meth:`catch_interrupt` (a slow connect can still be interrupted).
    """

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.previous: dict[int, Any] = {}

    def _catch(self, sig: int) -> None:
        def on_signal(signum: int, frame: FrameType | None) -> None:
            self.stop.set()

        self.previous.setdefault(sig, signal.signal(sig, on_signal))

    def __enter__(self) -> _Hold:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._catch(sig)
        return self

    def catch_interrupt(self) -> None:
        """From now on Ctrl-C ends the hold like SIGTERM."""
        self._catch(signal.SIGINT)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    def until_lost(self, conn: Connection) -> bool:
        """Block; True when the connection died (rather than being asked to stop)."""
        while not self.stop.wait(2.0):
            if not conn.alive:
                return True
        return False


def _open_held(
    conn: Connection, rs: RemoteServe, state: dict[str, Any], name: str, hold: _Hold
) -> bool:
    broker, _, _ = broker_for(str(state.get("model", "")))
    broker.token = rs.broker_token()  # the token the remote serve already holds
    with broker:
        rfwd = Forward(conn, "R", 0, broker.port).start()
        sync: ForwardSync | None = None
        lfwd: Forward | None = None
        try:
            rs.attach_broker(rfwd.listen_port)
            lfwd = Forward(conn, "L", 0, int(state["port"])).start()
            sync = ForwardSync(conn, name).start()
            hold.catch_interrupt()
            url = f"http://127.0.0.1:{lfwd.listen_port}/#token={rs.login_token()}"
            print(url, flush=True)  # like `reasonix serve`: the first stdout line is the URL
            _say(f"reasonix: {name}: serving {state.get('dir')} through {lfwd.describe()}; "
                 "the key broker is connected; Ctrl-C stops", err=True)  # fmt: skip
            return hold.until_lost(conn)
        finally:
            if sync is not None:
                sync.stop()
            if lfwd is not None:
                lfwd.stop()
            if conn.alive:
                rs.detach_broker()
            rfwd.stop()


def execute_open(args: argparse.Namespace) -> int:
    """Forward the remote serve here, print the URL, hold until Ctrl-C/SIGTERM."""
    host, _ = find_host(args.name)
    # Signals are caught from the start: a SIGTERM during set-up must still unwind
    # (forwards, serve, master), never leave an ssh process behind.
    with _Hold() as hold, open_connection(host, args.trust, purpose="open") as conn:
        rs = RemoteServe(conn, install(conn, local_pyz()))
        state = rs.status()
        started = False
        if not state.get("running"):
            state = _start(rs, args.name, args.dir, args.model)
            started = True
        elif args.dir and args.dir.rstrip("/") != str(state.get("dir", "")).rstrip("/"):
            raise UsageError(
                f"{args.name}: the remote serve serves {state.get('dir')}, not {args.dir}; "
                f"stop it first (`reasonix remote serve stop {args.name}`)"
            )
        try:
            lost = False if hold.stop.is_set() else _open_held(conn, rs, state, args.name, hold)
        finally:
            if started and conn.alive:
                rs.stop()
    if lost:
        raise ConnectionLost(
            f"{args.name}: the SSH connection was lost; the page no longer reaches the serve. "
            f"Run `reasonix remote open {args.name}` again"
        )
    _say(f"reasonix: {args.name}: forward closed" + ("; serve stopped" if started else ""),
         err=True)  # fmt: skip
    return 0
