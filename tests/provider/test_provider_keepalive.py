"""Model requests reuse a kept-alive connection, and a connection the server closed costs
nothing but a fresh one (real loopback servers, the real HTTPClient)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from reasonix.cancel import Cancel
from reasonix.provider.http import HTTPClient, RetryPolicy

SSE = b'data: {"x": 1}\n\ndata: [DONE]\n\n'


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every POST with a short chunked SSE body; records the client's port."""

    protocol_version = "HTTP/1.1"
    seen: list[int]
    close_after: bool = False  # drop the connection after each answer, without saying so
    drop_second: bool = False  # on a connection's second request: read it, answer nothing

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(self.client_address[1])
        self.requests_here = getattr(self, "requests_here", 0) + 1
        if self.drop_second and self.requests_here == 2:
            self.close_connection = True
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n" % (10, SSE[:10]))
        # the last event and the last chunk in one write: a reader that stops at the
        # event finds the end of the body already here (release() would wait 20 ms)
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(SSE) - 10, SSE[10:]))
        self.wfile.flush()
        if self.close_after:
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve(**options: bool) -> Iterator[tuple[str, list[int]]]:
    seen: list[int] = []
    handler = type("Handler", (Recorder,), {"seen": seen, **options})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions", seen
    finally:
        server.shutdown()
        server.server_close()


def _ask(client: HTTPClient, url: str) -> bytes:
    with client.post_stream(url, {}, b"{}", Cancel()) as resp:
        return b"".join(resp.chunks())


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_a_finished_answer_leaves_its_connection_for_the_next_request() -> None:
    client = HTTPClient(retry=RetryPolicy(max_retries=0))
    with serve() as (url, seen):
        assert [_ask(client, url) for _ in range(3)] == [SSE] * 3
    assert len(seen) == 3 and len(set(seen)) == 1  # one connection carried all three


def test_a_reader_that_stops_at_the_last_event_still_leaves_the_connection() -> None:
    client = HTTPClient(retry=RetryPolicy(max_retries=0))
    with serve() as (url, seen):
        for _ in range(2):
            with client.post_stream(url, {}, b"{}", Cancel()) as resp:
                got = b""
                for data in resp.chunks():
                    got += data
                    if b"[DONE]" in got:
                        break  # as the SSE reader does: the last chunk is not asked for
    assert len(seen) == 2 and len(set(seen)) == 1


def test_a_connection_the_server_closed_is_replaced_without_a_retry() -> None:
    client = HTTPClient(retry=RetryPolicy(max_retries=0))  # no retry budget at all
    with serve(close_after=True) as (url, seen):
        assert [_ask(client, url) for _ in range(3)] == [SSE] * 3
    assert len(seen) == 3 and len(set(seen)) == 3  # each on a fresh connection


def test_a_kept_connection_dropped_under_a_request_is_replaced_once() -> None:
    client = HTTPClient(retry=RetryPolicy(max_retries=0))
    with serve(drop_second=True) as (url, seen):
        assert _ask(client, url) == SSE
        assert _ask(client, url) == SSE  # the kept connection died under it: a fresh one
    assert len(seen) == 3 and seen[0] == seen[1] != seen[2]


def test_a_cancelled_answer_does_not_leave_its_connection() -> None:
    client = HTTPClient(retry=RetryPolicy(max_retries=0))
    with serve() as (url, seen):
        cancel = Cancel()
        resp = client.post_stream(url, {}, b"{}", cancel)
        cancel.cancel("stop")
        resp.close()
        assert _ask(client, url) == SSE
    assert len(seen) == 2 and seen[0] != seen[1]
