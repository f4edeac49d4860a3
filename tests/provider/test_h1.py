"""reasonix.provider.h1 against a real loopback socket that sends exactly the bytes given.

Each test's server accepts one connection, reads the request head and then
writes its pieces (``bytes``, or a ``threading.Event`` to wait for), so a
body can be cut at any byte and the framing checked the way a server would
really deliver it.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.provider import h1
from reasonix.provider.sockets import SocketSlot

Piece = bytes | threading.Event


class Scripted:
    """One connection's worth of server: the request it got, the pieces it sent."""

    def __init__(self, pieces: Sequence[Piece]) -> None:
        self.pieces = list(pieces)
        self.request = b""
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            while b"\r\n\r\n" not in self.request:
                data = conn.recv(65536)
                if not data:
                    return
                self.request += data
            for piece in self.pieces:
                if isinstance(piece, threading.Event):
                    piece.wait(5)
                else:
                    conn.sendall(piece)

    def close(self) -> None:
        self.thread.join(5)
        self.listener.close()


@contextmanager
def answer(*pieces: Piece, method: str = "POST") -> Iterator[tuple[h1.Response, Scripted]]:
    server = Scripted(pieces)
    sock = h1.open_socket("127.0.0.1", server.port, timeout=5, idle_timeout=5, slot=SocketSlot())
    try:
        h1.send_request(sock, method, "/v1/chat", {"X-Test": "1"}, b'{"a": 1}',
                        host=h1.host_header("127.0.0.1", server.port, "http"))  # fmt: skip
        resp = h1.Response(sock, method)
        yield resp, server
    finally:
        sock.close()
        server.close()


def test_the_request_is_http_1_1_with_host_length_and_close() -> None:
    with answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") as (resp, server):
        assert resp.read() == b"ok"
    head = server.request.partition(b"\r\n\r\n")[0]
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}".encode() in lines
    assert b"Content-Length: 8" in lines and b"Connection: close" in lines
    assert b"X-Test: 1" in lines


def test_content_length_body_read_in_pieces() -> None:
    with answer(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello", b" world") as (resp, _):
        assert resp.status == 200 and resp.reason == "OK"
        got = b""
        while piece := resp.read1(4):
            got += piece
        assert got == b"hello world" and resp.done


def test_a_short_content_length_body_is_incomplete() -> None:
    with answer(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf") as (resp, _):
        assert resp.read1() == b"half"
        with pytest.raises(h1.IncompleteBody):
            resp.read1()


def test_chunked_with_extensions_and_trailers() -> None:
    body = b"4;name=x\r\nwiki\r\n5\r\npedia\r\n0\r\nExpires: never\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    with answer(head + body) as (resp, _):
        assert resp.read() == b"wikipedia" and resp.done


def test_chunked_cut_off_mid_stream_is_incomplete() -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    with answer(head + b"a\r\n01234") as (resp, _):
        assert resp.read1() == b"01234"
        with pytest.raises(h1.IncompleteBody):
            resp.read1()
    with answer(head + b"3\r\nabc\r\n") as (resp, _):  # no last chunk
        assert resp.read1() == b"abc"
        with pytest.raises(h1.IncompleteBody):
            resp.read1()


def test_a_chunk_is_handed_over_before_its_closing_crlf_arrives() -> None:
    later = threading.Event()
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    with answer(head + b"5\r\nhello", later, b"\r\n3\r\nabc\r\n0\r\n\r\n") as (resp, _):
        assert resp.read1() == b"hello"  # a wait for the CRLF here would time out
        later.set()
        assert resp.read() == b"abc"


def test_until_close_body() -> None:
    with answer(b"HTTP/1.0 200 OK\r\n\r\nfirst ", b"second") as (resp, _):
        assert resp.will_close
        assert resp.read() == b"first second" and resp.done


def test_interim_answers_are_skipped() -> None:
    with answer(b"HTTP/1.1 100 Continue\r\n\r\n",
                b"HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx") as (resp, _):  # fmt: skip
        assert resp.status == 201 and resp.read() == b"x"


def test_no_body_for_204_and_headers_case_insensitive_and_joined() -> None:
    raw = (
        b"HTTP/1.1 204 No Content\r\nX-A: 1\r\nx-a: 2\r\nRetry-After:  7 \r\n"
        b"X-Long: a\r\n b\r\n\r\n"
    )
    with answer(raw) as (resp, _):
        assert resp.read() == b"" and resp.done
        assert resp.headers.get("x-a") == "1, 2"
        assert resp.headers.get("retry-after") == "7" and resp.headers["RETRY-AFTER"] == "7"
        assert resp.headers.get("x-long") == "a b"
        assert "X-A" in resp.headers and resp.headers.get("missing", "d") == "d"


def test_garbage_and_silence_are_connection_errors() -> None:
    with pytest.raises(h1.BadResponse), answer(b"SSH-2.0-OpenSSH_9\r\n\r\n"):
        pass
    with pytest.raises(h1.NoResponse), answer():
        pass
    with pytest.raises(h1.BadResponse), answer(b"HTTP/1.1 200 OK\r\nContent-"):
        pass
    with pytest.raises(h1.BadResponse), answer(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"):
        pass
    assert issubclass(h1.NoResponse, ConnectionResetError)
    assert issubclass(h1.BadResponse, OSError) and issubclass(h1.IncompleteBody, OSError)


def test_a_bad_content_length_is_refused() -> None:
    server = Scripted([b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"])
    sock = h1.open_socket("127.0.0.1", server.port, timeout=5, idle_timeout=5, slot=SocketSlot())
    try:
        h1.send_request(sock, "GET", "/", {}, None, host="h")
        with pytest.raises(h1.BadResponse):
            h1.Response(sock, "GET")
    finally:
        sock.close()
        server.close()


def test_a_fully_read_keep_alive_answer_gives_its_socket_back() -> None:
    with answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") as (resp, _):
        assert resp.detach() is None  # not read yet
        assert resp.read() == b"ok"
        assert resp.detach() is not None
    with answer(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok") as (r, _):
        r.read()
        assert r.detach() is None  # the server will close it


def test_host_header_and_proxy_check(monkeypatch: pytest.MonkeyPatch) -> None:
    assert h1.host_header("::1", 8080, "http") == "[::1]:8080"
    assert h1.host_header("api.example", 443, "https") == "api.example"
    assert h1.host_header("api.example", None, "http") == "api.example"
    for name in [n for n in __import__("os").environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    assert h1.direct_ok("http") and h1.direct_ok("https") and not h1.direct_ok("ftp")
    monkeypatch.setenv("NO_PROXY", "localhost")
    monkeypatch.setenv("ALL_PROXY", "socks5://proxy:1080")  # urllib does not use it
    monkeypatch.setenv("https_proxy", "")  # an empty value is no proxy
    assert h1.direct_ok("http")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert not h1.direct_ok("http")  # a proxy variable: urllib decides, as before


@settings(max_examples=40, deadline=None)
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=40), max_size=6),
    cuts=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=8),
)
def test_chunked_bodies_survive_any_delivery(chunks: list[bytes], cuts: list[int]) -> None:
    framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + framed
    pieces, at = [], 0
    for cut in cuts * (len(raw) // sum(cuts) + 1):
        if at >= len(raw):
            break
        pieces.append(raw[at : at + cut])
        at += cut
    with answer(*pieces) as (resp, _):
        assert resp.read() == b"".join(chunks) and resp.done


def test_no_header_or_request_can_be_smuggled_in() -> None:
    server = Scripted([])
    sock = h1.open_socket("127.0.0.1", server.port, timeout=5, idle_timeout=5, slot=SocketSlot())
    try:
        for headers, target in (
            ({"X-Key": "a\r\nX-Evil: 1"}, "/"),
            ({"X-Key\r\nX-Evil": "1"}, "/"),
            ({"Bad Name": "1"}, "/"),
            ({}, "/v1/chat HTTP/1.1\r\nX-Evil: 1"),
            ({}, "/a b"),
        ):
            with pytest.raises(ValueError):
                h1.send_request(sock, "POST", target, headers, b"{}", host="h")
    finally:
        sock.close()
        server.close()
    assert server.request == b""  # nothing was written


def test_a_non_ascii_host_is_sent_as_idna() -> None:
    assert h1.host_header("bücher.example", None, "https") == "xn--bcher-kva.example"
