"""QA regression: web_fetch inflates gzip/deflate bodies a server sends unasked."""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reasonix.tool import ToolContext
from reasonix.tool.builtin.web_fetch import TOOL

_BODIES = {
    "/gzip": ("gzip", gzip.compress(b"zipped <b>text</b>")),
    "/deflate": ("deflate", zlib.compress(b"deflated text")),
    "/raw-deflate": ("deflate", zlib.compress(b"raw deflated text")[2:-4]),
    "/liar": ("gzip", b"not compressed at all"),
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        coding, body = _BODIES[self.path]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def base() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/gzip", "zipped <b>text</b>"),
        ("/deflate", "deflated text"),
        ("/raw-deflate", "raw deflated text"),
        ("/liar", "not compressed at all"),
    ],
)
def test_compressed_bodies_come_back_as_text(base: str, path: str, expected: str) -> None:
    res = TOOL.execute(json.dumps({"url": base + path}), ToolContext())
    assert not res.is_error, res.content
    assert res.content.endswith(expected)
    assert "binary content" not in res.content
