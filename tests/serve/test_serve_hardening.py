"""What an unauthenticated client cannot do to the server: a real server on loopback,
raw sockets where the stdlib's client would be too polite.

Login guesses are counted before the slow hash (one check in flight per client,
a small global cap); slowloris heads are cut off at a deadline; connections are
capped; deeply nested JSON is a 400; the stdlib's own error pages carry the
security headers. Slow password checks are simulated by a verifier that waits
for the test, so the tests count hashes instead of timing them.
"""

from __future__ import annotations

import json
import queue
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from serve_kit import Client, ServeProcess, running, write_workspace

from reasonix.serve import auth
from reasonix.serve.auth import MAX_VERIFYING, RateLimiter, hash_password
from reasonix.serve.handler import SECURITY_HEADERS

PASSWORD = "correct horse"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "repo", "http://127.0.0.1:9")  # the model is never asked


class SlowVerifier:
    """Stands in for the 600k-iteration PBKDF2: counts calls and holds each until released."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._real = auth.verify_password

    def __call__(self, password: str, stored: str) -> bool:
        with self._lock:
            self.calls += 1
        self.release.wait(60)
        return self._real(password, stored)


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowVerifier]:
    verifier = SlowVerifier()
    monkeypatch.setattr(auth, "verify_password", verifier)
    try:
        yield verifier
    finally:
        verifier.release.set()  # never leave a server thread waiting


def _burst(
    count: int, attempt: Callable[[int], int]
) -> tuple[queue.Queue[int], list[threading.Thread]]:
    """``count`` concurrent login attempts; their statuses arrive in the queue."""
    results: queue.Queue[int] = queue.Queue()
    threads = [threading.Thread(target=lambda i=i: results.put(attempt(i)), daemon=True)
               for i in range(count)]  # fmt: skip
    for thread in threads:
        thread.start()
    return results, threads


def _take(results: queue.Queue[int], count: int, timeout: float = 15.0) -> list[int]:
    """Up to ``count`` statuses that arrive while the verifier is still holding its calls."""
    got: list[int] = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        try:
            got.append(results.get(timeout=max(0.0, deadline - time.monotonic())))
        except queue.Empty:
            break
    return got


def _password_client(port: int, csrf: str, forwarded: str = "") -> Client:
    c = Client(port)
    c.csrf = csrf
    if forwarded:
        c.headers["X-Forwarded-For"] = forwarded
    return c


# -- 1. the login throttle comes before the slow hash ------------------------------------
def test_concurrent_wrong_logins_from_one_client_burn_one_hash(
    ws: Path, slow: SlowVerifier
) -> None:
    stored = hash_password(PASSWORD, iterations=1000)
    with running(ws, auth_mode="password", password_hash=stored) as app:
        csrf = Client(app.port).hello()["csrf"]
        results, threads = _burst(20, lambda i: _password_client(app.port, csrf).login(f"g{i}"))
        early = _take(results, 19)  # answered while the one check in flight is still held
        slow.release.set()
        for thread in threads:
            thread.join(30)
        rest = [results.get_nowait() for _ in range(results.qsize())]
        assert early == [429] * 19, early
        assert rest == [401]
        assert slow.calls == 1
        c = _password_client(app.port, csrf)
        assert [c.login(f"again{i}") for i in range(5)] == [401] * 4 + [429]
        assert c.login(PASSWORD) == 429  # over the budget: not even the right one is hashed
        assert slow.calls == 5


def test_password_checks_in_flight_are_capped_across_clients(ws: Path, slow: SlowVerifier) -> None:
    stored = hash_password(PASSWORD, iterations=1000)
    settings = {"auth_mode": "password", "password_hash": stored, "behind_proxy": True}
    with running(ws, **settings) as app:
        csrf = Client(app.port).hello()["csrf"]
        clients = 10

        def attempt(i: int) -> int:
            return _password_client(app.port, csrf, f"198.51.100.{i}").login("wrong")

        results, threads = _burst(clients, attempt)
        early = _take(results, clients - MAX_VERIFYING)
        slow.release.set()
        for thread in threads:
            thread.join(30)
        rest = [results.get_nowait() for _ in range(results.qsize())]
        assert early == [503] * (clients - MAX_VERIFYING), early
        assert rest == [401] * MAX_VERIFYING
        assert slow.calls == MAX_VERIFYING  # one hash ran at a time; the refused never hashed
        # a refusal for a busy server is not a failed attempt of that client
        assert _password_client(app.port, csrf, "198.51.100.9").login(PASSWORD) == 200


def test_an_attempt_in_flight_counts_and_an_unchecked_one_does_not() -> None:
    rl = RateLimiter(limit=2, window=60, clock=lambda: 0.0)
    assert rl.begin("a") == 0
    assert rl.begin("a") > 0 and rl.begin("b") == 0  # one in flight per client
    rl.end("a", False)
    rl.end("b", None)  # never checked (server busy): no failure counted
    assert rl.begin("a") == 0
    rl.end("a", False)
    assert rl.begin("a") == 60 and rl.retry_after("a") == 60
    assert rl.begin("b") == 0
    rl.end("b", True)
    assert rl.retry_after("b") == 0


# -- 2. slowloris and the connection cap -------------------------------------------------
def _closed(sock: socket.socket, wait: float) -> bool:
    """Whether the server hung up (EOF or reset) within ``wait`` seconds."""
    readable, _, _ = select.select([sock], [], [], wait)
    if not readable:
        return False
    try:
        return sock.recv(65536) == b""
    except OSError:
        return True


def test_a_dripping_request_head_is_cut_off_at_the_deadline(ws: Path) -> None:
    with running(ws, head_timeout=1.0) as app:
        head = f"GET /api/hello HTTP/1.1\r\nHost: 127.0.0.1:{app.port}\r\n".encode()
        drip = b"X-Slow: " + b"a" * 52 + b"\r\n"  # 60 bytes, one every 0.25 s: 15 s in all
        with socket.create_connection(("127.0.0.1", app.port), timeout=10) as s:
            s.sendall(head)
            sent = 0
            for byte in drip:
                try:
                    s.sendall(bytes([byte]))
                except OSError:
                    break
                sent += 1
                if _closed(s, 0.25):
                    break
            else:
                s.sendall(b"\r\n")
                pytest.fail(f"the server waited for the whole dripped head: {s.recv(200)!r}")
        assert sent < len(drip)
        assert Client(app.port).get("/api/hello")[0] == 200  # the server is fine


def test_a_silent_connection_is_closed_at_the_deadline(ws: Path) -> None:
    with (
        running(ws, head_timeout=1.0) as app,
        socket.create_connection(("127.0.0.1", app.port), timeout=10) as s,
    ):
        assert _closed(s, 15.0)  # the socket timeout alone would hold it for 60 s


def test_the_limits_come_from_the_serve_table(tmp_path: Path) -> None:
    extra = "\n[serve]\nhead_timeout_seconds = 1\nmax_connections = 1\n"
    ws = write_workspace(tmp_path / "repo", "http://127.0.0.1:9", extra=extra)
    serve = ServeProcess(ws, tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", serve.port), timeout=10) as s:
            with socket.create_connection(("127.0.0.1", serve.port), timeout=10) as extra_conn:
                assert _read_all(extra_conn).startswith(b"HTTP/1.1 503 ")  # the cap of 1
            assert _closed(s, 15.0)  # the 1 s head deadline, not the 60 s socket timeout
    finally:
        _, _, err = serve.stop()
    assert "unknown" not in err.lower(), err


def test_the_body_is_not_held_to_the_head_deadline(ws: Path) -> None:
    with running(ws, head_timeout=1.0) as app:
        c = Client(app.port)
        c.hello()
        head = (
            f"POST /api/logout HTTP/1.1\r\nHost: 127.0.0.1:{app.port}\r\n"
            f"Origin: http://127.0.0.1:{app.port}\r\nX-Reasonix-CSRF: {c.csrf}\r\n"
            "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", app.port), timeout=10) as s:
            s.sendall(head)
            time.sleep(1.5)  # past the head deadline: the head is in, the body may take longer
            s.sendall(b"{}")
            reply = _read_all(s)
        assert reply.startswith(b"HTTP/1.1 200 "), reply[:200]


def _wait_for(predicate: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_connections_over_the_cap_get_503_and_are_closed(ws: Path) -> None:
    with running(ws, max_connections=3) as app:
        held = [socket.create_connection(("127.0.0.1", app.port), timeout=10) for _ in range(3)]
        try:
            assert _wait_for(lambda: len(app.httpd.connections) == 3)
            with socket.create_connection(("127.0.0.1", app.port), timeout=10) as extra:
                reply = _read_all(extra)  # answered and closed at once, before any request
            assert reply.startswith(b"HTTP/1.1 503 "), reply[:200]
            _assert_security_headers(reply)
            assert (
                "too many open connections" in json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]
            )
            assert len(app.httpd.connections) == 3 and app.httpd.refused == 1
            held.pop().close()
            assert _wait_for(lambda: len(app.httpd.connections) == 2)
            assert Client(app.port).get("/api/hello")[0] == 200  # a freed slot is usable
        finally:
            for s in held:
                s.close()


# -- 3. deeply nested JSON ---------------------------------------------------------------
@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000,
                                 b'{"a":' * 50_000 + b"1" + b"}" * 50_000])  # fmt: skip
def test_deeply_nested_json_is_400_not_500(ws: Path, raw: bytes) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.hello()
        status, body, _ = c.request("POST", "/api/sessions", raw=raw)
        assert status == 400 and "nested too deeply" in body["error"], (status, body)
        assert not any("internal error" in line for line in app.lines), app.lines


# -- 4. the stdlib's own error pages -------------------------------------------------------
def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _assert_security_headers(reply: bytes) -> None:
    head = reply.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head)}
    for name, value in SECURITY_HEADERS:
        assert headers.get(name.lower()) == value, (name, head)
    assert headers.get("server") == "reasonix"


# Each request is sent exactly up to the byte the stdlib stops reading at, so closing
# the connection never resets it before the reply is read.
STDLIB_ERRORS = {
    "unknown method": (b"BREW / HTTP/1.1\r\nHost: h\r\n\r\n", 501),
    "too many headers": (b"GET / HTTP/1.1\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(101)),
                         431),
    "header line too long": (b"GET / HTTP/1.1\r\nX-Big: " + b"a" * (65537 - 7), 431),
    "bad request line": (b"garbage\r\n", 400),
    "request line too long": (b"GET /" + b"a" * (65537 - 5), 414),
    "bad version": (b"GET / HTTP/2.0\r\n\r\n", 505),
    "HTTP/0.9": (b"GET /api/hello\r\n\r\n", 400),
}  # fmt: skip


@pytest.mark.parametrize("case", list(STDLIB_ERRORS))
def test_stdlib_error_pages_carry_the_security_headers(ws: Path, case: str) -> None:
    request, status = STDLIB_ERRORS[case]
    with running(ws) as app:
        with socket.create_connection(("127.0.0.1", app.port), timeout=10) as s:
            s.sendall(request)
            reply = _read_all(s)
        assert reply.startswith(f"HTTP/1.1 {status} ".encode()), reply[:200]
        _assert_security_headers(reply)
        assert b"\r\nConnection: close\r\n" in reply
        body = json.loads(reply.split(b"\r\n\r\n", 1)[1])
        assert body["error"], body
