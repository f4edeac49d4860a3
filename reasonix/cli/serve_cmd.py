"""``reasonix serve``: the browser frontend for the current workspace.

The first line on stdout is the URL to open (in token mode with the token in
its fragment); everything else goes to stderr. SIGTERM and Ctrl-C stop every
running turn cleanly, release the session leases and exit 0.
``reasonix serve --set-password`` stores a PBKDF2 hash for password mode.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from reasonix.errors import UsageError

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the serve flags."""
    parser.description = "Serve the browser frontend for this workspace (see docs/SERVE.md)."
    add = parser.add_argument
    add("--host", help="address to bind (default [serve].host, 127.0.0.1)")
    add("--port", type=int, help="port (0 = pick a free one; default [serve].port)")
    add("--auth-mode", choices=("none", "token", "password"), help="default [serve].auth_mode")
    add("--token-file", metavar="FILE", help="read the token from FILE, or write a new one (0600)")
    add("--open", action="store_true", help="open the URL in a web browser")
    add("--dir", metavar="DIR", help="serve DIR instead of the current directory")
    add("--verbose", "-v", action="store_true", help="log every request to stderr")
    add("--tunnel", action="store_true", help=argparse.SUPPRESS)  # reasonix remote open
    add("--set-password", action="store_true", help="store a password for --auth-mode password")


def _log(line: str) -> None:
    from reasonix.cli.safe_text import printable

    # request paths come from the network: never let them steer the terminal
    sys.stderr.write(f"reasonix serve: {printable(line, keep_newlines=False)}\n")
    sys.stderr.flush()


def _read_password() -> str:
    if sys.stdin.isatty():
        import getpass

        first = getpass.getpass("new password: ")
        if getpass.getpass("again: ") != first:
            raise UsageError("the passwords differ; nothing was saved")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def _set_password() -> int:
    from reasonix.serve.auth import save_password_hash

    path = save_password_hash(_read_password())
    print(f"password hash saved to {path} (mode 0600); use it with --auth-mode password")
    return 0


def execute(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/Ctrl-C; return the exit code."""
    if args.set_password:
        return _set_password()
    from reasonix import config as config_mod
    from reasonix.boot import RuntimeOptions
    from reasonix.serve.auth import load_password_hash, read_or_create_token
    from reasonix.serve.guard import is_loopback
    from reasonix.serve.server import ServeApp, ServeSettings

    workspace = RuntimeOptions(workspace=args.dir).resolved_workspace()
    from reasonix.cli.trust_prompt import settle_trust

    # before the config is read: the workspace's [serve] settings need trust too; a
    # page's sessions are built later, so only a remembered "yes" can reach them
    settle_trust(str(workspace), allow_once=False)
    cfg = config_mod.load(workspace)
    cfg.default_resolved()  # a misconfigured model is a start-up error, not a first-turn one
    mode = args.auth_mode or cfg.serve.auth_mode
    if args.token_file and args.auth_mode is None:
        mode = "token"
    if args.token_file and mode != "token":
        raise UsageError("--token-file goes with --auth-mode token")
    if args.token_file:
        # the token is a secret of this process: masked and refused like <home>/.env
        from reasonix.config.paths import register_secret

        register_secret(args.token_file)
    port = cfg.serve.port if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: expected 0-65535")
    settings = ServeSettings(
        workspace=workspace,
        host=args.host or cfg.serve.host,
        port=port,
        auth_mode=mode,
        behind_proxy=cfg.serve.behind_proxy,
        token=read_or_create_token(Path(args.token_file)) if args.token_file else "",
        password_hash=load_password_hash() if mode == "password" else "",
        release_after=cfg.serve.release_after_seconds,
        max_connections=cfg.serve.max_connections,
        head_timeout=cfg.serve.head_timeout_seconds,
        tunnel=args.tunnel and is_loopback(args.host or cfg.serve.host),
    )
    app = ServeApp(settings, log=_log if args.verbose else None)
    print(app.url, flush=True)
    _log(f"serving {workspace} on {settings.host}:{app.port} (auth: {mode}); Ctrl-C stops")
    if settings.host in ("0.0.0.0", "::"):
        _log("listening on every interface: from another machine use this machine's address")
    for note in cfg.warnings:
        _log(note)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        app.start()
        if args.open:
            import webbrowser

            webbrowser.open(app.url)
        while not stop.wait(0.5):
            pass
        _log("stopping: ending running turns and releasing sessions")
    finally:
        app.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
