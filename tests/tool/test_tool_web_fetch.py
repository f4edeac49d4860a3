"""web_fetch against a real loopback http.server: HTML to text, redirects, caps, schemes."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin import web_fetch
from reasonix.tool.builtin._html import html_to_text
from reasonix.tool.builtin.web_fetch import MAX_BYTES, TOOL

PAGE = """<!doctype html><html><head><title>Demo Page</title>
<style>body { color: red }</style><script>var secret = 1;</script></head>
<body><h1>Main heading</h1><p>Hello <b>world</b>, see <a href="/docs">the docs</a>.</p>
<h2>List</h2><ul><li>first</li><li>second</li></ul>
<ol><li>one</li><li>two</li></ol>
<pre>def f():
    return 1</pre>
<table><tr><td>a</td><td>b</td></tr></table>
</body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # keep pytest output clean

    def _send(self, status: int, ctype: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        if path == "/page.html":
            self._send(200, "text/html; charset=utf-8", PAGE.encode())
        elif path == "/data.json":
            self._send(200, "application/json", b'{"a": [1, 2]}')
        elif path.startswith("/hop/"):
            n = int(path.rsplit("/", 1)[1])
            target = "/page.html" if n == 0 else f"/hop/{n - 1}"
            self._send(302, "text/plain", b"", Location=target)
        elif path == "/to-file":
            self._send(302, "text/plain", b"", Location="file:///etc/passwd")
        elif path == "/big":
            chunk = b"z" * 65536
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                for _ in range(MAX_BYTES // len(chunk) + 20):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stops reading at the cap
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                for _ in range(50):  # 10 s of one byte every 0.2 s
                    self.wfile.write(b".")
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif path == "/image.png":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
        else:
            self._send(404, "text/plain", b"no such page")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def fetch(url: str) -> ToolResult:
    return TOOL.execute(json.dumps({"url": url}), ToolContext())


def test_html_is_reduced_to_text(server: str) -> None:
    res = fetch(f"{server}/page.html")
    assert not res.is_error, res.content
    assert res.content.startswith(f"URL: {server}/page.html\nStatus: 200 · text/html")
    body = res.content.split("\n\n", 1)[1]
    assert body.startswith("# Demo Page")
    assert "# Main heading" in body and "## List" in body
    assert f"the docs ({server}/docs)" in body
    assert "- first\n- second" in body and "1. one\n2. two" in body
    assert "```\ndef f():\n    return 1\n```" in body
    assert "a | b" in body
    assert "secret" not in body and "color: red" not in body
    assert TOOL.read_only is True


def test_json_comes_back_verbatim(server: str) -> None:
    res = fetch(f"{server}/data.json")
    assert res.content.endswith('\n\n{"a": [1, 2]}')


def test_redirects_followed_up_to_five(server: str) -> None:
    ok = fetch(f"{server}/hop/4")  # 5 redirects in total
    assert not ok.is_error and f"URL: {server}/page.html" in ok.content
    too_many = fetch(f"{server}/hop/5")
    assert too_many.is_error and "too many redirects" in too_many.content


def test_redirect_to_other_scheme_is_refused(server: str) -> None:
    res = fetch(f"{server}/to-file")
    assert res.is_error and "only http:// and https://" in res.content


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "/etc/passwd"])
def test_other_schemes_are_refused(url: str) -> None:
    res = fetch(url)
    assert res.is_error and "only http:// and https://" in res.content


@pytest.mark.parametrize(
    "url",
    ["http://169.254.169.254/latest/", "http://10.1.2.3/", "http://[::ffff:169.254.169.254]/"],
)
def test_private_addresses_are_refused(url: str) -> None:
    res = fetch(url)
    assert res.is_error and "internal address" in res.content


def test_total_time_is_capped(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cap is a module constant (30 s); shrink it so a slow drip trips it quickly.
    monkeypatch.setattr(web_fetch, "TOTAL_TIMEOUT", 1.0)
    started = time.monotonic()
    res = fetch(f"{server}/drip")
    assert res.is_error and "timed out" in res.content
    assert time.monotonic() - started < 5


def test_download_is_capped(server: str) -> None:
    res = fetch(f"{server}/big")
    assert not res.is_error
    assert f"{MAX_BYTES} bytes (download stopped at the 5 MB cap)" in res.content
    assert len(res.raw_content) < MAX_BYTES + 500
    assert len(res.content.encode()) <= 32768


def test_http_error_and_binary(server: str) -> None:
    missing = fetch(f"{server}/missing")
    assert (
        missing.is_error and "Status: 404" in missing.content and "no such page" in missing.content
    )
    image = fetch(f"{server}/image.png")
    assert "binary content not shown" in image.content and "image/png" in image.content


def test_connection_refused_is_an_error_result() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    res = fetch(f"http://127.0.0.1:{port}/")
    assert res.is_error and "could not fetch" in res.content


def test_html_to_text_relative_links_and_entities() -> None:
    text = html_to_text(
        '<p>a&amp;b <a href="x.html">x</a> <a href="#top">top</a></p>', "http://h/d/"
    )
    assert text == "a&b x (http://h/d/x.html) top"


def test_cancel_stops_a_download(server: str) -> None:
    ctx = ToolContext()
    timer = threading.Timer(0.3, ctx.cancel.cancel)
    timer.start()
    started = time.monotonic()
    res = TOOL.execute(json.dumps({"url": f"{server}/drip"}), ctx)
    timer.join()
    assert res.is_error and res.content == "web_fetch: cancelled"
    assert time.monotonic() - started < 3
