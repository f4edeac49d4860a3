"""``reasonix remote connect|run``: the remote agent, with the key broker at home.

The local process resolves the model and its API key exactly as ``run``
would, starts the broker (remote/broker.py) on the local loopback, reverse-
forwards it to the remote loopback, and starts the remote ``.pyz`` whose
provider points at that port with the broker token as its "key".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit, urlunsplit

from reasonix.cli.remote_forwards import ForwardSync
from reasonix.cli.remote_hosts import find_host
from reasonix.cli.remote_tools import open_connection
from reasonix.cli.safe_text import printable
from reasonix.config.tomledit import dumps_value
from reasonix.errors import UsageError
from reasonix.remote.bootstrap import install
from reasonix.remote.broker import Broker
from reasonix.remote.connection import Connection
from reasonix.remote.errors import ConnectionLost, RemoteError
from reasonix.remote.forward import Forward
from reasonix.remote.session import TOKEN_VAR, prepare

__all__ = ["execute", "local_pyz"]

_RECONNECTS = 3


def local_pyz() -> Path:
    """The .pyz to install remotely: ``$REASONIX_REMOTE_PYZ``, else the running one."""
    override = os.environ.get("REASONIX_REMOTE_PYZ")
    if override:
        return Path(override)
    import reasonix

    if reasonix.ARCHIVE:  # started from a .pyz (its modules may come from the unpacked copy)
        return Path(reasonix.ARCHIVE)
    parts = Path(reasonix.__file__).parts
    for i, part in enumerate(parts):
        if part.endswith(".pyz"):
            return Path(*parts[: i + 1])
    raise UsageError(
        "remote needs the reasonix .pyz to install on the host: run the .pyz "
        "(python build_zipapp.py builds dist/reasonix.pyz) or set REASONIX_REMOTE_PYZ"
    )


def _split_flags(rest: list[str]) -> tuple[list[str], str, str]:
    """Pull ``--trust FP`` and ``--model REF`` out (the model is resolved locally too)."""
    out: list[str] = []
    trust = model = ""
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--trust" and i + 1 < len(rest):
            trust = rest[i + 1]
            i += 2
            continue
        if word == "--model" and i + 1 < len(rest):
            model = rest[i + 1]
        elif word.startswith("--model="):
            model = word.split("=", 1)[1]
        out.append(word)
        i += 1
    return out, trust, model


def _rebase(url: str, port: int | str) -> str:
    if not url:
        return ""
    parts = urlsplit(url)
    return urlunsplit(("http", f"127.0.0.1:{port}", parts.path, parts.query, ""))


def broker_for(model: str) -> tuple[Broker, str, str]:
    """(broker, remote config.toml text builder template, model ref) for the local model."""
    from reasonix.config import load, require_api_key

    cfg = load(Path.cwd())
    resolved = cfg.resolve_model(model) if model else cfg.default_resolved()
    provider = resolved.provider
    key = require_api_key(provider)  # MissingAPIKey: said here, locally, clearly
    url = provider.request_url or provider.chat_url or provider.base_url
    parts = urlsplit(url)
    auth: dict[str, str] = dict(provider.headers)
    if key:
        if provider.kind == "anthropic":
            auth["x-api-key"] = key
        else:
            auth["Authorization"] = f"Bearer {key}"
    broker = Broker(f"{parts.scheme}://{parts.netloc}", auth)
    return broker, provider.name, f"{provider.name}/{resolved.model}"


def remote_config(model_ref: str, port: int | str) -> str:
    """The remote's config.toml: the same provider, its URLs on the forwarded port.

    ``port`` may be a placeholder the remote end fills in (cli/remote_daemon.py).
    """
    from reasonix.config import load

    cfg = load(Path.cwd())
    resolved = cfg.resolve_model(model_ref)
    p = resolved.provider
    fields: dict[str, object] = {
        "name": p.name,
        "kind": p.kind,
        "base_url": _rebase(p.base_url, port),
        "request_url": _rebase(p.request_url, port),
        "chat_url": _rebase(p.chat_url, port),
        "models": list(dict.fromkeys([*p.models, resolved.model])),
        "default": resolved.model,
        "api_key_env": TOKEN_VAR,
        "context_window": p.context_window,
        "max_output_tokens": p.max_output_tokens,
        "probe_window": False,
        "web_search": p.web_search,
    }
    lines = [f"default_model = {dumps_value(model_ref)}", "", "[[providers]]"]
    lines += [f"{k} = {dumps_value(v)}" for k, v in fields.items() if v != ""]
    return "\n".join(lines) + "\n"


def _session(
    conn: Connection, args: argparse.Namespace, remote_args: list[str], model: str, *, tty: bool
) -> int:
    installed = install(conn, local_pyz())
    broker, _, model_ref = broker_for(model)
    with broker:
        rfwd = Forward(conn, "R", 0, broker.port).start()
        sync = ForwardSync(conn, args.name, quiet=tty).start()
        agent = prepare(conn, installed, remote_config(model_ref, rfwd.listen_port), broker.token)
        try:
            argv = agent.argv(remote_args, workdir=args.dir, tty=tty)
            code = subprocess.run(argv, check=False).returncode
        finally:
            sync.stop()
            if conn.master is not None and conn.master.poll() is None:
                agent.cleanup()
            rfwd.stop()
    # 255: ssh lost the channel; < 0: the ssh client itself was killed.
    if code == 255 or code < 0 or conn.master is None or conn.master.poll() is not None:
        if tty:
            _reset_terminal()
        raise ConnectionLost(f"{conn.host.name}: the SSH connection was lost")
    return code


def _reset_terminal() -> None:
    """Undo what the remote full-screen chat left set when its link died under it."""
    if sys.stdout.isatty():
        # leave the alternate screen, show the cursor, stop bracketed paste and mouse reports
        sys.stdout.write("\x1b[?1049l\x1b[?25h\x1b[?2004l\x1b[?1000l\x1b[?1006l\x1b[0m\r\n")
        sys.stdout.flush()
    subprocess.run(["stty", "sane"], check=False, stderr=subprocess.DEVNULL)


class HungUp(SystemExit):
    """SIGHUP or SIGTERM arrived: unwind, so the master and the forwards are closed."""


@contextlib.contextmanager
def _signals_unwind() -> Iterator[None]:
    """SIGHUP (the terminal closed) and SIGTERM raise :class:`HungUp` in the main thread.

    The ssh master runs in a session of its own (a Ctrl-C must not kill it
    mid-teardown), so a signal's default action, which ends this process
    without its ``finally`` blocks, would leave it running: the next connect
    to the host would find "another connection open".
    """

    def unwind(signum: int, frame: FrameType | None) -> None:
        raise HungUp(128 + signum)

    previous = {sig: signal.signal(sig, unwind) for sig in (signal.SIGHUP, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def execute(args: argparse.Namespace) -> int:
    """Run ``connect`` (chat, reconnecting with -c) or ``run`` (one task)."""
    with _signals_unwind():
        return _execute(args)


def _execute(args: argparse.Namespace) -> int:
    rest = list(args.rest)
    if args.dir.startswith("-"):
        rest.insert(0, args.dir)
        args.dir = ""
    rest, trust, model = _split_flags(rest)
    host, _ = find_host(args.name)
    workspace = ["--dir", args.dir] if args.dir else []
    if args.action == "run":
        if not args.dir:
            raise UsageError("usage: reasonix remote run NAME DIR [run flags] [PROMPT]")
        with open_connection(host, trust) as conn:
            try:
                return _session(conn, args, ["run", *workspace, *rest], model, tty=False)
            except ConnectionLost as err:
                print(printable(f"reasonix: {err}; run again with -c to continue the session"),
                      file=sys.stderr)  # fmt: skip
                return 1
    if not sys.stdin.isatty():
        raise UsageError("remote connect needs a terminal; use `reasonix remote run` in scripts")
    chat = [*workspace, *rest]
    for attempt in range(_RECONNECTS + 1):
        try:
            with open_connection(host, trust) as conn:
                return _session(conn, args, chat, model, tty=True)
        except (ConnectionLost, RemoteError) as err:
            if attempt == _RECONNECTS or (not isinstance(err, ConnectionLost) and attempt == 0):
                raise
            print(printable(f"\nreasonix: {err}; reconnecting to the same session (-c)…"),
                  file=sys.stderr)  # fmt: skip
            time.sleep(min(2.0 * (attempt + 1), 6.0))
            if "-c" not in chat and "--continue" not in chat:
                chat.append("-c")
    return 1
