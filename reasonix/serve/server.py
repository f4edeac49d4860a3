"""The server of ``reasonix serve``: settings, the exposure rule (D15) and the lifecycle.

``ServeApp(settings)`` binds the socket (port 0 picks a free one), and
``serve_forever()`` answers until ``close()``: that stops every running turn,
waits for it to end cleanly, releases every session lease and closes every
connection, so each transcript stays loadable. At most ``max_connections``
connections are open at once; one more is answered 503 and closed at once,
without a thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import ConfigError
from reasonix.lazy import dataclass

from .auth import RateLimiter, Secrets, new_token
from .guard import Guard, Headers, is_loopback
from .handler import Handler, refusal
from .manager import Manager

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ServeApp", "ServeSettings", "check_exposure", "static_files"]

AUTH_MODES = ("none", "token", "password")
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


@dataclass
class ServeSettings:
    """What one launch serves and how it is protected."""

    workspace: Path
    host: str = "127.0.0.1"
    port: int = 0  # 0: pick a free port
    auth_mode: str = "none"
    behind_proxy: bool = False
    token: str = ""  # token mode; "" = a fresh one for this launch
    password_hash: str = ""  # password mode: the stored PBKDF2 hash
    release_after: float = 60.0  # idle seconds before a session's lease is released
    tunnel: bool = False  # reached through an SSH -L forward (reasonix remote open)
    max_body: int = 1 << 20
    max_connections: int = 100  # open at once (SSE streams included); more get 503
    head_timeout: float = 20.0  # seconds for a request's line and headers (slowloris)


def check_exposure(settings: ServeSettings) -> None:
    """D15: ``none`` only on a loopback bind that no proxy exposes; else refuse to start.

    Also refuses limits that would leave the server unusable (no connection, no time).
    """
    if settings.auth_mode not in AUTH_MODES:
        raise ConfigError(f"unknown auth mode {settings.auth_mode!r}; known: none, token, password")
    if settings.max_connections < 1:
        raise ConfigError("serve.max_connections must be at least 1", key="serve.max_connections")
    if not settings.head_timeout > 0:
        raise ConfigError("serve.head_timeout_seconds must be above 0",
                          key="serve.head_timeout_seconds")  # fmt: skip
    if settings.auth_mode != "none":
        return
    if not is_loopback(settings.host):
        raise ConfigError(
            f"refusing to serve {settings.host} without authentication: auth_mode 'none' is "
            "only allowed on a loopback address; use --auth-mode token (or password), "
            "or bind 127.0.0.1",
            key="serve.auth_mode",
        )
    if settings.behind_proxy:
        raise ConfigError(
            "behind_proxy = true exposes the server through the proxy: auth_mode 'none' is not "
            "allowed then; use token or password",
            key="serve.auth_mode",
        )


def static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files shipped in the package (works from the .pyz): name -> (bytes, type)."""
    from importlib import resources

    out: dict[str, tuple[bytes, str]] = {}
    for entry in resources.files("reasonix.serve").joinpath("static").iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1] if "." in entry.name else ""
        if entry.is_file() and suffix in _TYPES:
            out[entry.name] = (entry.read_bytes(), _TYPES[suffix])
    return out


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # many tabs reconnecting at once must not be reset (default 5)

    def __init__(
        self, address: tuple[str, int], handler: type[Handler], max_connections: int = 100
    ) -> None:
        self.connections: set[socket.socket] = set()
        self.threads: set[threading.Thread] = set()
        self.track = threading.Lock()
        self.max_connections = max_connections
        self.refused = 0  # connections turned away by the cap
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.track:
            full = len(self.connections) >= self.max_connections
        if full:
            self.refused += 1
            self._refuse(request)
            return
        thread = threading.Thread(
            target=self._serve_one, args=(request, client_address), daemon=True
        )
        with self.track:
            self.connections.add(request)
            self.threads.add(thread)
        thread.start()

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self.track:
                self.connections.discard(request)
                self.threads.discard(threading.current_thread())

    def _refuse(self, request: socket.socket) -> None:
        """Over the cap: a 503 and close, on the accept thread, never blocking it."""
        with contextlib.suppress(OSError):
            request.setblocking(False)
            request.send(refusal(503, "Service Unavailable",
                                 "too many open connections; try again shortly"))  # fmt: skip
            with contextlib.suppress(OSError):  # what the client already sent: read away, so
                request.recv(65536)  # closing does not reset the connection before it reads
        self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that broke outside a handler (reset while reading): no traceback."""

    def hang_up(self, timeout: float) -> None:
        """Shut every open connection and wait for its thread."""
        with self.track:
            conns, threads = list(self.connections), list(self.threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout)


class _HTTPServer6(_HTTPServer):
    address_family = socket.AF_INET6


class ServeApp:
    """One launch of the browser frontend."""

    def __init__(self, settings: ServeSettings, log: Callable[[str], None] | None = None) -> None:
        check_exposure(settings)
        self.settings = settings
        self.log: Callable[[str], None] = log or (lambda line: None)
        token = settings.token or (new_token() if settings.auth_mode == "token" else "")
        if settings.auth_mode == "password" and not settings.password_hash:
            raise ConfigError("auth_mode 'password' needs a password hash (--set-password)")
        self.secrets = Secrets(
            settings.auth_mode, token=token, password_hash=settings.password_hash
        )
        self.static = static_files()
        self.manager = Manager(settings.workspace, release_after=settings.release_after)
        handler = type("BoundHandler", (Handler,), {"app": self})
        server_cls = _HTTPServer6 if ":" in settings.host else _HTTPServer
        try:
            self.httpd = server_cls((settings.host, settings.port), handler,
                                    max_connections=settings.max_connections)  # fmt: skip
        except OSError as err:
            raise ConfigError(
                f"cannot listen on {settings.host}:{settings.port}: {err.strerror or err}"
            ) from err
        self.port = int(self.httpd.server_address[1])
        self.guard = Guard(self.secrets, host=settings.host, port=self.port,
                           behind_proxy=settings.behind_proxy, limiter=RateLimiter(),
                           tunnel=settings.tunnel)  # fmt: skip
        self._closed = threading.Event()
        self._serving = threading.Event()
        self._life = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The address to open, with the token in the fragment (never sent to a server)."""
        host = self.settings.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        shown = f"[{host}]" if ":" in host else host
        base = f"http://{shown}:{self.port}/"
        return base + f"#token={self.secrets.token}" if self.secrets.mode == "token" else base

    def hello(self, headers: Headers, peer: str) -> dict[str, Any]:
        """What the page needs before anything else: the auth mode, the CSRF token."""
        from reasonix import __version__

        authed = self.secrets.mode == "none" or self.secrets.cookie_ok(self.guard.cookie(headers))
        return {"auth": self.secrets.mode, "authenticated": authed, "csrf": self.secrets.csrf,
                "version": __version__}  # fmt: skip

    def describe(self) -> dict[str, Any]:
        """The workspace, the models and modes the page offers."""
        from reasonix import config as config_mod
        from reasonix.boot import PERMISSION_MODES

        cfg = config_mod.load(self.settings.workspace)
        models = [f"{p.name}/{m}" for p in cfg.providers for m in p.models]
        return {"workspace": str(self.settings.workspace), "models": models,
                "modes": [m for m in PERMISSION_MODES if m not in ("manual", "yolo")],
                "default_model": cfg.default_model, "mode": cfg.permissions.mode,
                "release_after": self.settings.release_after}  # fmt: skip

    # -- lifecycle ------------------------------------------------------------------
    def serve_forever(self) -> None:
        """Answer requests until :meth:`close` (blocks)."""
        with self._life:
            if self._closed.is_set():
                return
            self._serving.set()
        self.manager.start()
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> ServeApp:
        """Serve on a background thread (tests, bench); returns self."""
        self._thread = threading.Thread(target=self.serve_forever, name="serve", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop turns cleanly, release every lease, close every connection (idempotent)."""
        with self._life:
            if self._closed.is_set():
                return
            self._closed.set()
        self.manager.close()  # turns end, transcripts synced, leases released, streams closed
        if self._serving.is_set():  # shutdown() waits for a serve_forever loop to end
            self.httpd.shutdown()
        self.httpd.hang_up(5.0)
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5.0)
