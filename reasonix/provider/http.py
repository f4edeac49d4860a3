"""Streaming HTTP POST: timeouts, retries, prompt cancellation.

One :class:`HTTPClient` call makes up to 1 + ``max_retries`` attempts (D20).
An attempt counts as failed-before-output when it ends with HTTP 429/5xx, a
connection error or a connect timeout before the first body byte arrived;
only those are retried, after a full-jitter exponential backoff (or the
server's ``Retry-After``). Once a body byte has been handed out nothing is
retried: the caller gets :class:`StreamResponse` and every later failure is
a :class:`~reasonix.errors.ProviderStreamError` (or ``Cancelled`` / timeout).

Cancellation: each attempt registers ``cancel.on_cancel`` with a
:class:`~reasonix.provider.netio.SocketSlot` that holds the live socket;
firing the token shuts the socket down, so a read blocked in another frame
returns at once (PROV-19). The backoff wait is ``cancel.wait``.

:func:`translate` is the single place where urllib / http.client / socket /
ssl exceptions become typed Reasonix errors.

A request without a proxy goes straight to its server over
:mod:`reasonix.provider.h1` (no ``http.client``, ``urllib`` or, for http,
``ssl`` to import); through a proxy, and after a redirect, it goes through
urllib's opener (:mod:`reasonix.provider.netio`), as it always did. Both give
:func:`translate` the same errors.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

from reasonix import __version__
from reasonix.cancel import Cancel
from reasonix.errors import (
    Cancelled,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeout,
    ReasonixError,
)
from reasonix.provider.sockets import SocketSlot

if TYPE_CHECKING:
    import ssl
    import urllib.request
    from typing import Any

__all__ = [
    "USER_AGENT",
    "CertificateError",
    "ConnectTimeout",
    "HTTPClient",
    "RetryPolicy",
    "StreamResponse",
    "Timeouts",
    "parse_retry_after",
    "translate",
    "vendor_message",
]

USER_AGENT = f"reasonix/{__version__}"
READ_SIZE = 65536
ERROR_BODY_LIMIT = 65536  # an error page is never worth more than this
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "openai-request-id", "x-amzn-requestid")

# sleep(seconds, cancel) -> True when the wait was cut short by the token.
Sleep = Callable[[float, Cancel], bool]
OnRetry = Callable[[int, float, ProviderError], None]


def _cancel_wait(seconds: float, cancel: Cancel) -> bool:
    return cancel.wait(seconds)


class RetryPolicy(NamedTuple):
    """D20: at most 4 retries, base 1 s doubling, capped at 30 s, full jitter.

    This and :class:`Timeouts` are immutable records (:class:`typing.NamedTuple`):
    every run defines them before its first request, where a dataclass costs ~1 ms.
    """

    max_retries: int = 4
    base: float = 1.0
    cap: float = 30.0
    retry_after_cap: float = 60.0

    def backoff(self, retry: int, rand: float) -> float:
        """Delay before retry number ``retry`` (0-based) given a uniform [0,1) draw."""
        return rand * min(self.cap, self.base * (2.0**retry))


class Timeouts(NamedTuple):
    """Seconds: ``connect`` bounds TCP connect + TLS handshake; ``idle`` any one read."""

    connect: float = 30.0
    # Reasoning models can think for minutes behind a silent socket.
    idle: float = 300.0


class ConnectTimeout(ProviderTimeout):
    """The TCP connect or TLS handshake did not finish in time (retryable)."""


class CertificateError(ProviderConnectionError):
    """The server's TLS certificate failed verification (never retried)."""


# -- error translation (the one place) -----------------------------------------


def vendor_message(body: str) -> str:
    """The human message inside a vendor error body (OpenAI, Anthropic, Responses, …)."""
    text = body.strip()
    try:
        obj: Any = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300] or "(empty body)"
    if isinstance(obj, list) and obj:  # some gateways wrap the error in a list
        obj = obj[0]
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, str):
            return err
        if isinstance(err, dict):
            msg = err.get("message") or err.get("msg") or err.get("detail")
            kind = err.get("type") or err.get("code")
            if msg:
                return f"{kind}: {msg}" if isinstance(kind, str) and kind else str(msg)
        for key in ("message", "detail", "msg"):
            if obj.get(key):
                return str(obj[key])
    return " ".join(text.split())[:300]


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # only for an HTTP date: a dozen email modules

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _request_id(headers: Any) -> str | None:
    if headers is None:
        return None
    for name in REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return str(value)
    return None


def _api_error(status: int, headers: Any, body: str) -> ProviderAPIError:
    wait = parse_retry_after(headers.get("Retry-After") if headers else None)
    if wait is None and status == 429 and headers is not None:
        from reasonix.provider.ratelimit import rate_limit_reset  # only when rate-limited

        wait = rate_limit_reset(headers)
    return ProviderAPIError(
        status,
        vendor_message(body),
        request_id=_request_id(headers),
        retry_after=wait,
        body=body,
    )


def translate(exc: BaseException, *, where: str, streaming: bool) -> ReasonixError:
    """Map a foreign exception to a typed error.

    ``where`` names the endpoint for the message; ``streaming`` says whether
    body bytes had already been delivered (then a broken connection is a
    :class:`ProviderStreamError`, never a retryable connection error).
    """
    if isinstance(exc, ReasonixError):
        return exc
    # An exception of a module nobody imported cannot have been raised: look the
    # classes up only where they exist (importing them here would cost start-up).
    if _is(exc, "urllib.error", "HTTPError"):
        return _api_error(exc.code, exc.headers, _read_error_body(exc))  # type: ignore[attr-defined]
    reason: BaseException = exc
    if _is(exc, "urllib.error", "URLError") and isinstance(exc.reason, BaseException):  # type: ignore[attr-defined]
        reason = exc.reason  # type: ignore[attr-defined]
    if isinstance(reason, TimeoutError):
        what = "read" if streaming else "response"
        return ProviderTimeout(f"{where}: no data within the {what} timeout ({reason})")
    if _is(reason, "ssl", "SSLCertVerificationError"):
        return CertificateError(f"{where}: TLS certificate verification failed: {reason}")
    if streaming:
        if _is(reason, "http.client", "IncompleteRead") or _is(
            reason, "reasonix.provider.h1", "IncompleteBody"
        ):
            return ProviderStreamError(f"{where}: stream cut off by the server")
        return ProviderStreamError(f"{where}: stream broke: {_describe(reason)}")
    return ProviderConnectionError(f"{where}: cannot connect: {_describe(reason)}")


def _is(exc: BaseException, module: str, name: str) -> bool:
    """``isinstance(exc, module.name)`` without importing ``module``."""
    loaded = sys.modules.get(module)
    kind = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(kind, type) and isinstance(exc, kind)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"


def _read_error_body(resp: Any) -> str:
    client = sys.modules.get("http.client")  # what urllib's error responses may raise
    broken = (OSError, client.HTTPException) if client is not None else (OSError,)
    try:
        with resp:
            data = resp.read(ERROR_BODY_LIMIT)
    except broken:
        data = b""
    return bytes(data or b"").decode("utf-8", "replace")


# -- the client ------------------------------------------------------------------


class StreamResponse:
    """An open 200 response whose body is read incrementally with :meth:`chunks`."""

    def __init__(
        self,
        resp: Any,
        first: bytes,
        slot: SocketSlot,
        unregister: Callable[[], None],
        cancel: Cancel,
        where: str,
    ) -> None:
        self._resp = resp
        self._first = first
        self._slot = slot
        self._unregister = unregister
        self._cancel = cancel
        self._where = where
        self.status = resp.status
        self.headers = resp.headers
        self.request_id = _request_id(resp.headers)

    def chunks(self) -> Iterator[bytes]:
        """Body bytes as they arrive; raises Cancelled / ProviderTimeout / ProviderStreamError."""
        if self._first:
            first, self._first = self._first, b""
            yield first
        while True:
            try:
                data = self._resp.read1(READ_SIZE)
            except Exception as e:
                if self._slot.aborted or self._cancel.cancelled:
                    raise Cancelled(self._cancel.reason or "cancelled") from None
                raise translate(e, where=self._where, streaming=True) from e
            if self._slot.aborted or self._cancel.cancelled:
                raise Cancelled(self._cancel.reason or "cancelled")
            if not data:
                return
            yield data

    def close(self) -> None:
        """Release the socket and the cancel registration (idempotent)."""
        self._unregister()
        keep = getattr(self._resp, "keep", None)  # a direct connection that may carry more
        if keep is None or self._slot.aborted:
            self._resp.close()
            return
        sock = self._resp.release()
        if sock is not None:
            keep(sock)

    def __enter__(self) -> StreamResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _random() -> float:
    """``random.random()``, imported on the first retry (``random`` brings ``math``,
    ``bisect`` and SHA-512 to a start-up that needs none of them)."""
    import random

    return random.random()


class HTTPClient:
    """POSTs JSON and returns a streaming response, retrying per :class:`RetryPolicy`.

    ``sleep`` (default: ``cancel.wait``) and ``rand`` (default: ``random.random``)
    are injectable so tests run without real waits. ``on_retry(attempt, delay,
    error)`` is told about each retry before its wait (for status lines).
    """

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        timeouts: Timeouts | None = None,
        sleep: Sleep | None = None,
        rand: Callable[[], float] | None = None,
        on_retry: OnRetry | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self.timeouts = timeouts or Timeouts()
        self._sleep = sleep or _cancel_wait
        self._rand = rand or _random
        self.on_retry = on_retry
        self._ssl_context = ssl_context
        self._lock = threading.Lock()
        self._opener: urllib.request.OpenerDirector | None = None
        # Kept-alive connections of finished answers, per (scheme, host, port), with the
        # time each was put back: the next request to that server skips TCP and TLS.
        self._idle: dict[tuple[str, str, int], list[tuple[float, Any]]] = {}
        weakref.finalize(self, _close_idle, self._idle)  # a dropped client closes them

    def _shared_opener(self) -> urllib.request.OpenerDirector:
        """One opener per client, made on the first request that needs urllib (urllib
        makes and inspects ten handlers for each): the socket slot of a request travels
        on the request."""
        from reasonix.provider.netio import build_opener

        with self._lock:
            if self._opener is None:
                self._opener = build_opener(self.timeouts.idle, self._tls)
            return self._opener

    @property
    def _ssl(self) -> ssl.SSLContext:
        """The TLS context, made on the first https request: loading the CA store
        takes tens of milliseconds that an http:// endpoint never needs."""
        import ssl

        with self._lock:
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            return self._ssl_context

    def _tls(self) -> ssl.SSLContext:
        return self._ssl

    def warm_tls(self) -> None:
        """Start making the TLS context on a background thread, so the first https
        request finds it ready (OpenSSL releases the GIL while it loads the CA
        store, so this overlaps the rest of start-up)."""
        if self._ssl_context is None:
            threading.Thread(target=lambda: self._ssl, name="reasonix-tls", daemon=True).start()

    def post_stream(
        self, url: str, headers: Mapping[str, str], body: bytes, cancel: Cancel
    ) -> StreamResponse:
        """POST ``body`` to ``url``; return once the first body byte has arrived."""
        retry = 0
        while True:
            cancel.raise_if_cancelled()
            try:
                return self._attempt(url, headers, body, cancel)
            except ProviderError as e:
                if not _retryable(e) or retry >= self.retry.max_retries:
                    raise
                delay = self.retry.backoff(retry, self._rand())
                if isinstance(e, ProviderAPIError) and e.retry_after is not None:
                    delay = min(e.retry_after, self.retry.retry_after_cap)
                if self.on_retry is not None:
                    self.on_retry(retry + 1, delay, e)
                if self._sleep(delay, cancel) or cancel.cancelled:
                    raise Cancelled(cancel.reason or "cancelled") from None
                retry += 1

    def _attempt(
        self, url: str, headers: Mapping[str, str], body: bytes, cancel: Cancel
    ) -> StreamResponse:
        where = _endpoint(url)
        slot = SocketSlot()
        unregister = cancel.on_cancel(slot.abort)
        hdrs = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "User-Agent": USER_AGENT,
            **headers,
        }
        resp: Any = None
        try:
            resp = self._direct(url, hdrs, body, slot)
            if resp is None:  # through a proxy, or redirected: urllib's way
                from reasonix.provider.netio import SlotRequest

                req = SlotRequest(url, data=body, headers=hdrs, method="POST", slot=slot)
                resp = self._shared_opener().open(req, timeout=self.timeouts.connect)
            first = resp.read1(READ_SIZE)
            if slot.aborted or cancel.cancelled:
                raise Cancelled(cancel.reason or "cancelled")
            if not first:
                # A 200 with an empty body: nothing streamed, so a retry is safe.
                raise ProviderConnectionError(f"{where}: empty response body")
        except BaseException as e:
            unregister()
            if resp is not None:
                resp.close()
            if slot.aborted or cancel.cancelled:
                if _is(e, "urllib.error", "HTTPError"):
                    e.close()  # type: ignore[attr-defined]
                raise Cancelled(cancel.reason or "cancelled") from None
            if not isinstance(e, Exception):
                raise
            err = translate(e, where=where, streaming=False)  # closes an HTTPError
            if isinstance(err, ProviderTimeout) and not slot.connected:
                err = ConnectTimeout(f"{where}: connect timed out after {self.timeouts.connect:g}s")
            raise err from (None if e is err or _is(e, "urllib.error", "HTTPError") else e)
        return StreamResponse(resp, first, slot, unregister, cancel, where)

    def _kept(self, key: tuple[str, str, int]) -> Any:
        """An idle kept-alive connection to ``key``'s server that still looks open, or None."""
        from reasonix.provider.sockets import readable

        while True:
            with self._lock:
                idle = self._idle.get(key)
                if not idle:
                    return None
                since, sock = idle.pop()
            # Readable while idle means the server closed it (or sent what no one asked).
            if time.monotonic() - since < _KEEP_FOR and not readable(sock):
                return sock
            sock.close()

    def _keep(self, key: tuple[str, str, int], sock: Any) -> None:
        """Offer ``sock`` (a connection whose answer was read to its end) to the next request."""
        with self._lock:
            idle = self._idle.setdefault(key, [])
            idle.append((time.monotonic(), sock))
            extra = idle[:-_KEEP_MAX]
            del idle[:-_KEEP_MAX]
        for _, old in extra:
            old.close()

    def _direct(self, url: str, headers: Mapping[str, str], body: bytes, slot: SocketSlot) -> Any:
        """POST straight to the server (:mod:`reasonix.provider.h1`); None when urllib
        must (a proxy applies, or the answer is a redirect). Raises what urllib would
        have made of a 4xx/5xx: the :class:`ProviderAPIError`."""
        from urllib.parse import urlsplit

        from reasonix.provider import h1

        parts = urlsplit(url)
        if not h1.direct_ok(parts.scheme) or not parts.hostname:
            return None
        https = parts.scheme == "https"
        key = (parts.scheme, parts.hostname, parts.port or (443 if https else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = h1.host_header(parts.hostname, parts.port, parts.scheme)
        while True:
            sock = self._kept(key)
            reused = sock is not None
            if sock is None:
                slot.connected = False  # a connect timeout stays one after a kept link failed
                sock = h1.open_socket(
                    key[1], key[2], timeout=self.timeouts.connect, idle_timeout=self.timeouts.idle,
                    slot=slot, tls=self._tls if https else None,
                )  # fmt: skip
            else:
                slot.attach(sock)
                slot.connected = True
                sock.settimeout(self.timeouts.idle)
            try:
                h1.send_request(sock, "POST", target, headers, body, host=host, keep_alive=True)
                resp = h1.Response(sock, "POST", wait=True)
            except OSError as err:
                sock.close()
                if reused and not slot.aborted and _closed_under_us(err):
                    continue  # the server had closed the kept connection: a fresh one
                raise
            except BaseException:
                sock.close()
                raise
            break
        if not resp.will_close:
            resp.keep = lambda kept: self._keep(key, kept)
        if 300 <= resp.status < 400:
            resp.close()  # urllib follows redirects as it always did (a POST may become a GET)
            return None
        if not 200 <= resp.status < 300:
            raise _api_error(resp.status, resp.headers, _read_error_body(resp))
        return resp


# An idle connection is offered again for this long: servers close theirs after a while,
# and a NAT or firewall may drop one silently (a request sent on it would wait forever).
_KEEP_FOR = 15.0
_KEEP_MAX = 4  # idle connections kept per server


def _close_idle(idle: dict[tuple[str, str, int], list[tuple[float, Any]]]) -> None:
    for kept in idle.values():
        for _, sock in kept:
            sock.close()
    idle.clear()


def _closed_under_us(err: OSError) -> bool:
    """The error a kept connection the server had already closed gives, before any byte
    of an answer: the request was not taken, so sending it again is safe."""
    if isinstance(err, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
        return True  # h1.NoResponse is a ConnectionResetError
    return _is(err, "ssl", "SSLEOFError") or _is(err, "ssl", "SSLZeroReturnError")


def _retryable(e: ProviderError) -> bool:
    if isinstance(e, ProviderAPIError):
        # By meaning, not status: a 429 insufficient_quota, or a 5xx whose body says the
        # key or the credit is the problem, fails the same way every time.
        return not e.is_permanent and (e.status == 429 or e.status >= 500)
    # Connection failures before the first byte. A timeout is retried only when
    # it hit the connect: a silent server may still be working on the request.
    if isinstance(e, CertificateError):
        return False
    return isinstance(e, (ProviderConnectionError, ConnectTimeout))


def _endpoint(url: str) -> str:
    # Messages name the host and path, never the query (it may carry a key).
    return url.split("?", 1)[0]
