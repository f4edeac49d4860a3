"""The streamable HTTP transport (``type = "http"`` / ``"streamable-http"``).

Every outgoing message is its own POST, made from a worker thread so a slow
tool call never blocks our answer to a server request that arrives meanwhile.
A reply is either one JSON body or an SSE stream carrying notifications,
server requests and finally the response. Handshake-era extras:

* ``Mcp-Session-Id`` from the initialize reply is echoed on every request;
  a 404 (or 400 "no valid session") means the server forgot it, and the
  transport replays ``initialize`` + ``notifications/initialized`` once and
  retries the request transparently;
* after ``notifications/initialized`` a GET stream is opened so the server can
  send requests (``roots/list``) outside any POST; 405 means it has none;
* an SSE reply cut before its response is resumed with ``Last-Event-ID``
  after the server's ``retry:`` delay; empty priming events are skipped;
* ``DELETE`` ends the session on close.

2026-07-28 requests are self-contained (version in ``_meta``, routing
headers): none of the session machinery applies to them.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import PluginError
from reasonix.plugin.mcp.http_conn import Connections, iter_sse, open_request
from reasonix.plugin.mcp.httpwire import (
    AuthHook,
    is_stale_session,
    media_type,
    request_headers,
)
from reasonix.plugin.mcp.jsonrpc import (
    ErrorResponse,
    FramingError,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
)
from reasonix.plugin.mcp.transport import Closed, Inbox, Incoming, TransportError
from reasonix.provider.sse import SSEDecoder

if TYPE_CHECKING:
    from typing import Any

__all__ = ["StreamableHttpTransport"]

DEFAULT_RETRY_MS = 1000  # reconnect delay when the server named none
MAX_RESUMES = 3  # attempts to resume one cut stream before giving up
MAX_GET_FAILURES = 5  # consecutive GET-stream failures before we stop reopening it
_BODY_EXCERPT = 300

Deliver = Callable[[Incoming], None]


class StreamableHttpTransport:
    """MCP over streamable HTTP (2025-03-26 and later, plus stateless 2026-07-28)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        server_name: str = "",
        auth: AuthHook | None = None,
    ) -> None:
        self.url = url
        self.static_headers = dict(headers or {})
        self.server_name = server_name
        self.auth = auth
        self.label = f"http: {url}"
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._inbox = Inbox()
        self._conns = Connections()
        self._lock = threading.Lock()
        self._init_request: Request | None = None
        self._initialized_sent = False
        self._get_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._workers: set[threading.Thread] = set()
        self._inflight: dict[RequestId, http.client.HTTPConnection] = {}
        self._session_lock = threading.Lock()  # one re-initialisation at a time

    # -- Transport ---------------------------------------------------------
    def start(self, cancel: Cancel) -> None:
        """Nothing to open yet: the first POST is the connection."""
        if self._conns.closed:
            raise PluginError("transport closed")

    def send(self, message: Message) -> None:
        """POST ``message``: requests from a worker thread, the rest inline.

        A request's reply may stream for minutes, so it gets its own worker.
        Notifications and responses are answered with a quick 202; sending
        them inline keeps them in order (``notifications/initialized`` must
        reach the server before the next request does).
        """
        if self._stop.is_set():
            raise PluginError("connection closed")
        if isinstance(message, Request):
            if message.method == "initialize":
                self._init_request = message
            worker = threading.Thread(
                target=self._post_worker, args=(message,), name="mcp-http-post", daemon=True
            )
            with self._lock:
                self._workers = {w for w in self._workers if w.is_alive()}
                self._workers.add(worker)
            worker.start()
        else:
            self._post_worker(message)

    def receive(self, timeout: float | None = None) -> Incoming | None:
        """The next incoming value."""
        return self._inbox.get(timeout)

    def abandon(self, request_id: RequestId) -> None:
        """Stop reading the reply of a request nobody waits for any more.

        In the stateless revision closing the reply stream *is* the
        cancellation; in the handshake era it frees the worker after
        ``notifications/cancelled`` was sent.
        """
        with self._lock:
            conn = self._inflight.get(request_id)
        if conn is not None:
            self._conns.shutdown(conn)

    def close(self) -> None:
        """DELETE the session, shut every connection, join the workers."""
        if self._stop.is_set():
            return
        self._stop.set()
        session_id = self.session_id
        self._conns.close_all()
        if session_id:
            self._delete_session(session_id)
        with self._lock:
            workers = list(self._workers)
        for w in [*workers, self._get_thread]:
            if w is not None and w is not threading.current_thread():
                w.join(timeout=5.0)
        self._inbox.put(Closed("connection closed"))

    # -- POST --------------------------------------------------------------
    def _post_worker(self, message: Message) -> None:
        try:
            self._post(message, self._inbox.put, retry_session=True)
        except PluginError as exc:
            if not self._stop.is_set():
                self._fail(message, str(exc), None)
        if (
            isinstance(message, Notification)
            and message.method == "notifications/initialized"
            and not self._stop.is_set()
        ):
            self._initialized_sent = True
            self._open_get_stream()

    def _headers(self, message: Message) -> dict[str, str]:
        headers = request_headers(
            message,
            static=self.static_headers,
            session_id=self.session_id,
            protocol_version=self.protocol_version,
        )
        if self.auth is not None:
            headers.update(self.auth.headers())
        return headers

    def _post(self, message: Message, deliver: Deliver, *, retry_session: bool) -> None:
        body = json.dumps(encode(message), ensure_ascii=False).encode()
        had_session = bool(self.session_id)
        auth_retry = self.auth is not None
        while True:
            sent_session = self.session_id
            conn, resp = open_request(
                self._conns, "POST", self.url, body=body, headers=self._headers(message)
            )
            if isinstance(message, Request):
                with self._lock:
                    self._inflight[message.id] = conn
            try:
                status = resp.status
                if status in (401, 403) and auth_retry:
                    auth_retry = False
                    assert self.auth is not None
                    try:
                        retry = self.auth.on_status(status, dict(resp.getheaders()))
                    except PluginError as exc:  # the hook's own advice ("run reasonix mcp auth")
                        self._fail(message, str(exc), status)
                        return
                    if retry:
                        continue
                if status >= 400:
                    text = _read_excerpt(resp)
                    if retry_session and is_stale_session(status, text, had_session):
                        with self._session_lock:
                            # Concurrent requests may all hit the stale session;
                            # the first makes the new one, the others just retry.
                            if self.session_id == sent_session:
                                self._new_session()
                        retry_session, had_session = False, bool(self.session_id)
                        continue
                    self._fail(message, self._status_message(status, text), status)
                    return
                sid = resp.getheader("Mcp-Session-Id")
                if sid and isinstance(message, Request) and message.method == "initialize":
                    self.session_id = sid
                self._read_reply(message, resp, deliver)
                return
            finally:
                if isinstance(message, Request):
                    with self._lock:
                        self._inflight.pop(message.id, None)
                self._conns.discard(conn)

    def _status_message(self, status: int, text: str) -> str:
        if status == 401:
            server = self.server_name or "SERVER"
            return (
                f"HTTP 401 Unauthorized from {self.url}: the server needs authorization; "
                f"run `reasonix mcp auth {server}`"
            )
        return f"HTTP {status} from {self.url}" + (f": {text}" if text else "")

    def _fail(self, message: Message, text: str, status: int | None) -> None:
        rid = message.id if isinstance(message, Request) else None
        self._inbox.put(TransportError(text, request_id=rid, status=status))

    def _read_reply(
        self, message: Message, resp: http.client.HTTPResponse, deliver: Deliver
    ) -> None:
        kind = media_type(resp.getheader("Content-Type"))
        want: RequestId | None = message.id if isinstance(message, Request) else None
        if kind == "text/event-stream":
            self._read_stream(resp, deliver, want, SSEDecoder())
            return
        data = resp.read()
        if not data.strip():
            if want is not None:
                deliver(TransportError("empty reply to a request", request_id=want))
            return  # 202 Accepted for a notification or response
        for item in decode(data):
            self._observe(item)
            deliver(item)

    def _read_stream(
        self,
        resp: http.client.HTTPResponse,
        deliver: Deliver,
        want: RequestId | None,
        decoder: SSEDecoder,
    ) -> None:
        """Deliver an SSE reply's messages; resume it when cut before the answer."""
        answered = want is None
        resumes = 0
        resumed_conn: http.client.HTTPConnection | None = None
        try:
            while True:
                for event in iter_sse(resp, decoder):
                    if event.event != "message" or not event.data.strip():
                        continue  # priming events carry only an id (and maybe retry:)
                    for item in decode(event.data):
                        self._observe(item)
                        if isinstance(item, (Response, ErrorResponse)) and item.id == want:
                            answered = True
                        deliver(item)
                if answered or self._stop.is_set():
                    return
                if not decoder.last_event_id or resumes >= MAX_RESUMES:
                    deliver(
                        TransportError("the reply stream ended before the answer", request_id=want)
                    )
                    return
                resumes += 1
                if self._stop.wait((decoder.retry or DEFAULT_RETRY_MS) / 1000.0):
                    return
                if resumed_conn is not None:
                    self._conns.discard(resumed_conn)
                    resumed_conn = None
                resumed = self._resume(decoder.last_event_id)
                if resumed is not None:
                    resumed_conn, resp = resumed
        finally:
            if resumed_conn is not None:
                self._conns.discard(resumed_conn)

    def _resume(
        self, last_event_id: str
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse] | None:
        headers = self._get_headers()
        headers["Last-Event-ID"] = last_event_id
        try:
            conn, resp = open_request(self._conns, "GET", self.url, body=None, headers=headers)
        except PluginError:
            return None
        if resp.status != 200 or media_type(resp.getheader("Content-Type")) != "text/event-stream":
            self._conns.discard(conn)
            return None
        return conn, resp

    def _observe(self, item: Message | FramingError) -> None:
        """Learn the agreed protocol version from the initialize reply."""
        init = self._init_request
        if isinstance(item, Response) and init is not None and item.id == init.id:
            version = item.result.get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version

    # -- session management -------------------------------------------------
    def _new_session(self) -> None:
        """Replay initialize + initialized to get a fresh session (one retry's worth)."""
        init = self._init_request
        self.session_id = None
        if init is None:
            return
        replay = Request(f"rx-reinit-{init.id}", init.method, init.params)
        got: list[Incoming] = []
        self._post(replay, got.append, retry_session=False)
        if not any(isinstance(i, Response) for i in got):
            raise PluginError("the server refused a new session")
        if self._initialized_sent:
            self._post(Notification("notifications/initialized"), got.append, retry_session=False)

    def _delete_session(self, session_id: str) -> None:
        conns = Connections()
        headers = dict(self.static_headers)
        headers["Mcp-Session-Id"] = session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        try:
            conn, resp = open_request(
                conns, "DELETE", self.url, body=None, headers=headers, timeout=5.0
            )
            resp.read()
            conns.discard(conn)
        except (PluginError, OSError, http.client.HTTPException):
            pass  # best effort: 405 or a dead server both mean there is nothing to end

    # -- GET stream ----------------------------------------------------------
    def _get_headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", **self.static_headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.auth is not None:
            headers.update(self.auth.headers())
        return headers

    def _open_get_stream(self) -> None:
        if self._get_thread is not None:
            return
        self._get_thread = threading.Thread(target=self._get_loop, name="mcp-http-get", daemon=True)
        self._get_thread.start()

    def _get_loop(self) -> None:
        decoder = SSEDecoder()
        failures = 0
        while not self._stop.is_set() and failures < MAX_GET_FAILURES:
            headers = self._get_headers()
            if decoder.last_event_id:
                headers["Last-Event-ID"] = decoder.last_event_id
            try:
                conn, resp = open_request(self._conns, "GET", self.url, body=None, headers=headers)
            except PluginError:
                failures += 1
                if self._stop.wait((decoder.retry or DEFAULT_RETRY_MS) / 1000.0):
                    return
                continue
            try:
                if resp.status == 405:
                    return  # the server offers no stream of its own
                if resp.status != 200 or media_type(resp.getheader("Content-Type")) != (
                    "text/event-stream"
                ):
                    failures += 1
                else:
                    failures = 0
                    for event in iter_sse(resp, decoder):
                        if event.event == "message" and event.data.strip():
                            for item in decode(event.data):
                                self._inbox.put(item)
            finally:
                self._conns.discard(conn)
            if self._stop.wait((decoder.retry or DEFAULT_RETRY_MS) / 1000.0):
                return


def _read_excerpt(resp: http.client.HTTPResponse) -> str:
    try:
        data = resp.read(64 * 1024)
    except (OSError, http.client.HTTPException):
        return ""
    text = data.decode("utf-8", "replace").strip()
    try:
        obj: Any = json.loads(text)
        if isinstance(obj, dict) and isinstance(obj.get("error"), dict):
            text = str(obj["error"].get("message") or text)
    except ValueError:
        pass
    return text[:_BODY_EXCERPT]
