"""The HTTP surface: routes, JSON bodies, static files and the per-session SSE stream.

Every request first passes :class:`~reasonix.serve.guard.Guard`; every
response carries the security headers, the stdlib's own refusals (400 bad
request line, 414, 431, 501 …) included. Errors become a JSON object
``{"error": message}`` with a status code — never a traceback. The request
head (line and headers) must arrive within ``head_timeout`` seconds of the
server starting to wait for it (slowloris), and a body nested too deeply for
the JSON parser is a 400.

Routes (``{id}`` is a session id)::

    GET  /                          the page          GET /static/<file>  its assets
    GET  /api/hello                 auth mode, CSRF token, logged in?
    POST /api/login {secret}        token or password -> login cookie
    POST /api/logout
    GET  /api/config                models, modes, workspace
    GET  /api/sessions              list             POST /api/sessions    new session
    GET  /api/usage?by=&since=&until=&all_projects=1   ``reasonix usage --json``'s report
    GET  /api/sessions/{id}         transcript + the sequence number to stream from
    GET  /api/sessions/{id}/events  SSE (``Last-Event-ID`` or ``?after=N`` resumes)
    GET  /api/sessions/{id}/complete?q=TEXT
    POST /api/sessions/{id}/prompt {text}     a user turn or a / command
    POST /api/sessions/{id}/cancel            the stop button
    POST /api/sessions/{id}/approve {id, choice}
    POST /api/sessions/{id}/mode {mode}       POST /api/sessions/{id}/model {model}
    POST /api/sessions/{id}/release           let `reasonix -c` take the session now
"""

from __future__ import annotations

import io
import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from reasonix.errors import ConfigError, ReasonixError, UsageError
from reasonix.lazy import Pattern

from .auth import LoginBusy
from .hub import pump
from .manager import NotFound
from .slot import Busy
from .sse import comment

if TYPE_CHECKING:
    from typing import Any

    from .server import ServeApp

__all__ = ["Handler", "HttpError", "refusal"]

SECURITY_HEADERS = (
    ("Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
    ("Cache-Control", "no-store"),
)  # fmt: skip
PING_SECONDS = 15.0  # keep-alive comment on an idle stream (proxies drop silent ones)
WRITE_TIMEOUT = 30.0  # a tab that takes nothing for this long is dropped
_SESSION = Pattern(r"\A/api/sessions/([^/]+)(?:/([a-z]+))?\Z")


def refusal(status: int, reason: str, message: str) -> bytes:
    """A whole ``Connection: close`` JSON error response, for a socket no handler owns
    (the connection cap), with the same security headers as every other response."""
    body = json.dumps({"error": message}).encode("utf-8")
    lines = [f"HTTP/1.1 {status} {reason}", "Server: reasonix"]
    lines += [f"{name}: {value}" for name, value in SECURITY_HEADERS]
    lines += ["Content-Type: application/json; charset=utf-8",
              f"Content-Length: {len(body)}", "Retry-After: 1", "Connection: close"]  # fmt: skip
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


class _HeadClock(io.RawIOBase):
    """The connection's reads, cut off once the request head's deadline passes.

    The socket timeout alone bounds one ``recv``: a client sending a header byte
    every few seconds would hold its thread forever. While armed, every read
    may only wait for what is left of the deadline; then it raises
    ``TimeoutError``, which the stdlib turns into closing the connection.
    """

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        super().__init__()
        self.sock, self.timeout = sock, timeout
        self.deadline: float | None = None

    def readable(self) -> bool:
        """Always (it is a reader)."""
        return True

    def readinto(self, buffer: Any) -> int:
        """One ``recv`` into ``buffer``, waiting no longer than the deadline allows."""
        wait = self.timeout
        if self.deadline is not None:
            wait = min(wait, self.deadline - time.monotonic())
            if wait <= 0:
                raise TimeoutError("the request head took too long")
        self.sock.settimeout(wait)
        return self.sock.recv_into(buffer)

    def disarm(self) -> None:
        """The head is in: no deadline, and the socket's own timeout back for the reply."""
        self.deadline = None
        self.sock.settimeout(self.timeout)


class HttpError(Exception):
    """A refusal with a status code and a message for the page."""

    def __init__(self, status: int, message: str, retry_after: float = 0.0) -> None:
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after


class Handler(BaseHTTPRequestHandler):
    """One connection of ``reasonix serve`` (HTTP/1.1, keep-alive)."""

    protocol_version = "HTTP/1.1"
    timeout = 60  # a silent or stuck client frees its thread
    app: ServeApp  # set on the subclass the server builds

    # -- plumbing -----------------------------------------------------------------
    def setup(self) -> None:
        """The stdlib's setup, with reads that honour the request-head deadline."""
        super().setup()
        self.rfile.close()  # the stdlib's reader; the socket itself stays open
        self._clock = _HeadClock(self.connection, float(self.timeout))
        self.rfile = io.BufferedReader(self._clock)

    def handle_one_request(self) -> None:
        """One request; its head must arrive within ``head_timeout`` of our waiting for it."""
        self._clock.deadline = time.monotonic() + self.app.settings.head_timeout
        try:
            super().handle_one_request()
        finally:
            self._clock.deadline = None

    def parse_request(self) -> bool:
        """The stdlib's parsing; once the head is in, the body reads have no deadline.

        HTTP/0.9 is refused: its replies have no headers, so none of ours either.
        """
        try:
            ok = super().parse_request()
        finally:
            self._clock.disarm()
        if ok and self.request_version == "HTTP/0.9":
            self.send_error(400, "HTTP/0.9 requests are not served")
            return False
        return ok

    def send_response(self, code: int, message: str | None = None) -> None:
        """Every response, the stdlib's error pages included, carries the security headers."""
        super().send_response(code, message)
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None
                   ) -> None:  # fmt: skip
        """The stdlib's own refusals (bad request line, headers too large, unknown method)
        as our JSON errors; the connection is closed after them."""
        short = self.responses.get(code, ("error", ""))[0]
        self.close_connection = True
        if getattr(self, "request_version", "") == "HTTP/0.9":
            # unparsed or 0.9 (the stdlib's default before a version is read): the stdlib
            # would send the body alone; a full HTTP/1.x reply carries the headers
            self.request_version = "HTTP/1.0"
        body = json.dumps({"error": message or short}, ensure_ascii=False).encode("utf-8")
        self.send_response(code)  # the standard phrase: never echo request text in the status
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if getattr(self, "command", "") != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)

    def version_string(self) -> str:
        """The ``Server`` header: no Python version advertised."""
        return "reasonix"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib's stderr log; requests are logged by :meth:`log_request`."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """One line per request: peer, method, path without its query, status."""
        path = urlsplit(self.path).path if hasattr(self, "path") else "-"
        method = getattr(self, "command", "-")
        status = code.value if hasattr(code, "value") else code
        self.app.log(f"{self.client_address[0]} {method} {path[:200]} {status}")

    def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
              ) -> None:  # fmt: skip
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", headers)

    def _error(self, status: int, message: str, retry_after: float = 0.0) -> None:
        headers = {"Retry-After": str(max(1, round(retry_after)))} if retry_after else None
        if status in (400, 411, 413, 415):
            self.close_connection = True  # the rest of the body may still be unread
            headers = {**(headers or {}), "Connection": "close"}
        self._json(status, {"error": message}, headers)

    def _body(self) -> dict[str, Any]:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HttpError(415, "send the request body as application/json")
        if self.headers.get("Transfer-Encoding"):
            raise HttpError(411, "send a Content-Length (chunked bodies are not accepted)")
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            raise HttpError(400, "bad Content-Length") from None
        if length < 0:
            raise HttpError(400, "bad Content-Length")
        cap = self.app.settings.max_body
        if length > cap:
            if length <= 8 * cap:  # read it away so the client sees the answer, not a reset
                for _ in range(0, length, 65536):
                    self.rfile.read(min(65536, length))
                    length -= 65536
            raise HttpError(413, f"request body over {cap} bytes")
        raw = self.rfile.read(length) if length else b"{}"
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise HttpError(400, f"malformed JSON: {err}") from None
        except RecursionError:  # "[[[[…" deeper than the parser's stack allows
            raise HttpError(400, "malformed JSON: nested too deeply") from None
        if not isinstance(value, dict):
            raise HttpError(400, "the body must be a JSON object")
        return value

    @staticmethod
    def _text(body: dict[str, Any], key: str) -> str:
        value = body.get(key)
        if not isinstance(value, str):
            raise HttpError(400, f"{key!r} must be a string")
        return value

    # -- dispatch -------------------------------------------------------------------
    def do_GET(self) -> None:
        """GET requests."""
        self._handle("GET")

    def do_HEAD(self) -> None:
        """HEAD requests (as GET, without a body)."""
        self._handle("HEAD")

    def do_POST(self) -> None:
        """POST requests."""
        self._handle("POST")

    def do_PUT(self) -> None:
        """Not used: 405."""
        self._handle("PUT")

    def do_DELETE(self) -> None:
        """Not used: 405."""
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        try:
            verdict = self.app.guard.check(method, url.path, self.headers, self.client_address[0])
            if verdict is not None:
                self._error(verdict.status, verdict.message, verdict.retry_after)
                return
            self._route(method, url.path, parse_qs(url.query))
        except HttpError as err:
            self._error(err.status, err.message, err.retry_after)
        except NotFound as err:
            self._error(404, str(err))
        except Busy as err:
            self._error(409, str(err))
        except (ConfigError, UsageError, ReasonixError) as err:
            self._error(400, str(err))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as err:  # noqa: BLE001 - the one place a bug becomes a 500
            self.app.log(f"internal error on {method} {url.path}: {type(err).__name__}: {err}")
            self._error(500, f"internal error: {type(err).__name__}")

    def _route(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        app = self.app
        if method in ("GET", "HEAD"):
            if path in ("/", "/index.html"):
                return self._static("index.html")
            if path.startswith("/static/"):
                return self._static(path[len("/static/") :])
            if path == "/api/hello":
                return self._json(200, app.hello(self.headers, self.client_address[0]))
            if path == "/api/config":
                return self._json(200, app.describe())
            if path == "/api/sessions":
                return self._json(200, {"sessions": app.manager.sessions()})
            if path == "/api/usage":
                from .usage_api import usage_report

                return self._json(200, usage_report(app.settings.workspace, query, app.log))
        elif method == "POST":
            if path == "/api/login":
                return self._login()
            if path == "/api/logout":
                self._body()
                cookie = app.guard.cookie_header(self.headers, clear=True)
                return self._json(200, {"ok": True}, {"Set-Cookie": cookie})
            if path == "/api/sessions":
                self._body()
                return self._json(201, {"id": app.manager.create().id})
        else:
            raise HttpError(405, f"method {method} is not used here")
        match = _SESSION.match(path)
        if match is None:
            raise HttpError(404, f"no such page: {path[:100]}")
        return self._session(method, match.group(1), match.group(2) or "", query)

    def _session(self, method: str, sid: str, action: str, query: dict[str, list[str]]) -> None:
        manager = self.app.manager
        if method in ("GET", "HEAD"):
            if action == "":
                return self._json(200, manager.get(sid).history())
            if action == "events":
                return self._events(sid, query)
            if action == "complete":
                text = (query.get("q") or [""])[0]
                return self._json(200, {"items": manager.complete(sid, text)})
            raise HttpError(404, f"no such page: {action}")
        body = self._body()
        if action == "prompt":
            return self._json(200, manager.send(sid, self._text(body, "text")))
        if action == "cancel":
            return self._json(200, {"stopped": manager.get(sid).stop()})
        if action == "approve":
            manager.get(sid).answer(self._text(body, "id"), self._text(body, "choice"))
            return self._json(200, {"ok": True})
        if action == "mode":
            return self._json(200, manager.set_mode(sid, self._text(body, "mode")))
        if action == "model":
            return self._json(200, manager.set_model(sid, self._text(body, "model")))
        if action == "release":
            return self._json(200, {"released": manager.get(sid).release()})
        raise HttpError(404, f"no such action: {action}")

    def _login(self) -> None:
        app = self.app
        body = self._body()
        key = app.guard.client_key(self.client_address[0], self.headers)
        if app.secrets.mode == "none":
            wait = app.guard.limiter.retry_after(key)
            if wait > 0:
                raise HttpError(429, "too many failed attempts; try again later", wait)
            return self._json(200, {"ok": True})
        secret = self._text(body, "secret")
        # The attempt is counted before the slow hash: a client over its budget, or
        # with a login still being checked, is refused without any hashing.
        wait = app.guard.limiter.begin(key)
        if wait > 0:
            raise HttpError(429, "too many login attempts; try again later", wait)
        ok: bool | None = None
        try:
            ok = app.secrets.check_login(secret)
        except LoginBusy as err:
            raise HttpError(503, str(err), 1.0) from None
        finally:
            app.guard.limiter.end(key, ok)
        if not ok:
            raise HttpError(401, "wrong token" if app.secrets.mode == "token" else "wrong password")
        cookie = app.guard.cookie_header(self.headers)
        self._json(200, {"ok": True}, {"Set-Cookie": cookie})

    def _static(self, name: str) -> None:
        found = self.app.static.get(name)
        if found is None:  # only the files shipped in the package, by exact name
            raise HttpError(404, "no such file")
        body, ctype = found
        self._send(200, body, ctype)

    # -- the event stream -------------------------------------------------------------
    def _events(self, sid: str, query: dict[str, list[str]]) -> None:
        slot = self.app.manager.get(sid)
        raw = self.headers.get("Last-Event-ID") or (query.get("after") or [""])[0]
        try:
            after: int | None = int(raw) if raw.strip() else None
        except ValueError:
            after = -1  # unreadable: the hub answers with a reset
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("X-Accel-Buffering", "no")  # nginx: do not buffer the stream
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"retry: 1000\n\n")
        sock = self.connection
        sock.setblocking(False)  # from here on events are written by the hub (see Subscriber)
        sub = slot.hub.subscribe(after, sock)
        try:
            pump(sub, sock, ping=comment("ping"), every=PING_SECONDS, write_timeout=WRITE_TIMEOUT)
        except OSError:
            pass  # the browser went away (or was too slow): it reconnects and resumes
        finally:
            slot.hub.unsubscribe(sub)
