"""The loopback redirect listener, origin checks in discovery, and proxy use (MCP-5, MCP-7)."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, PluginError
from reasonix.plugin.mcp.oauth_flow import LoopbackListener, discover
from reasonix.plugin.mcp.oauth_meta import Challenge


def _get(url: str) -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code


def _visit_later(*urls: str) -> threading.Thread:
    statuses: list[int] = []

    def run() -> None:
        statuses.extend(_get(u) for u in urls)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.fixture
def listener() -> Iterator[LoopbackListener]:
    lst = LoopbackListener()
    yield lst
    lst.close()


def test_code_arrives_after_unrelated_requests(listener: LoopbackListener) -> None:
    base = listener.redirect_uri.rsplit("/", 1)[0]
    assert listener.redirect_uri.startswith("http://127.0.0.1:")
    t = _visit_later(base + "/favicon.ico", listener.redirect_uri + "?code=abc&state=s1")
    assert listener.wait("s1", timeout=10) == "abc"
    t.join(timeout=10)


def test_a_silent_connection_does_not_block_the_callback(listener: LoopbackListener) -> None:
    import socket

    port = int(listener.redirect_uri.split(":")[2].split("/")[0])
    # A browser's speculative pre-connection: connected, but it never speaks.
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        t = _visit_later(listener.redirect_uri + "?code=abc&state=s1")
        assert listener.wait("s1", timeout=15) == "abc"
        t.join(timeout=10)


def test_wrong_state_is_refused(listener: LoopbackListener) -> None:
    t = _visit_later(listener.redirect_uri + "?code=abc&state=forged")
    with pytest.raises(PluginError, match="wrong state"):
        listener.wait("s1", timeout=10)
    t.join(timeout=10)


def test_error_parameter_is_reported(listener: LoopbackListener) -> None:
    url = listener.redirect_uri + "?error=access_denied&error_description=user+said+no&state=s1"
    t = _visit_later(url)
    with pytest.raises(PluginError, match="access_denied: user said no"):
        listener.wait("s1", timeout=10)
    t.join(timeout=10)


def test_timeout_and_cancel(listener: LoopbackListener) -> None:
    with pytest.raises(PluginError, match="no authorization redirect"):
        listener.wait("s1", timeout=0.3)
    cancel = Cancel()
    cancel.cancel()
    with pytest.raises(Cancelled):
        listener.wait("s1", timeout=10, cancel=cancel)


def test_a_busy_preferred_port_falls_back(listener: LoopbackListener) -> None:
    port = int(listener.redirect_uri.split(":")[2].split("/")[0])
    other = LoopbackListener(port)
    try:
        assert other.redirect_uri != listener.redirect_uri
    finally:
        other.close()


# -- tiny servers for discovery and proxy checks --------------------------------------
class _Recorder(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, routes: dict[str, Any]) -> None:
        self.routes = routes
        self.hits: list[str] = []
        super().__init__(("127.0.0.1", 0), _RecorderHandler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _RecorderHandler(http.server.BaseHTTPRequestHandler):
    server: _Recorder

    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        doc = self.server.routes.get(self.path)
        data = json.dumps(doc).encode() if doc is not None else b"{}"
        self.send_response(200 if doc is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    srv = _Recorder({})
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    t.join(timeout=5)


def _as_doc(issuer: str) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "code_challenge_methods_supported": ["S256"],
    }


def test_metadata_on_a_foreign_origin_is_never_fetched(recorder: _Recorder) -> None:
    foreign = _Recorder({"/prm": {"resource": "x", "authorization_servers": ["http://evil"]}})
    try:
        challenge = Challenge({"resource_metadata": foreign.base + "/prm"})
        server_url = recorder.base + "/mcp"
        recorder.routes["/.well-known/oauth-protected-resource/mcp"] = {
            "resource": server_url,
            "authorization_servers": [recorder.base],
        }
        recorder.routes["/.well-known/oauth-authorization-server"] = _as_doc(recorder.base)
        got = discover(server_url, challenge)
        assert got.metadata.issuer == recorder.base
        assert foreign.hits == []  # it was never even asked
        # Without a same-origin document the foreign one is refused outright.
        del recorder.routes["/.well-known/oauth-protected-resource/mcp"]
        with pytest.raises(PluginError, match="not on the server's origin"):
            discover(server_url, challenge)
    finally:
        foreign.server_close()


def test_issuer_mismatch_is_refused(recorder: _Recorder) -> None:
    server_url = recorder.base + "/mcp"
    recorder.routes["/.well-known/oauth-protected-resource"] = {
        "resource": recorder.base,
        "authorization_servers": [recorder.base],
    }
    recorder.routes["/.well-known/oauth-authorization-server"] = _as_doc("http://evil.example")
    with pytest.raises(PluginError, match="does not match"):
        discover(server_url)
    assert recorder.hits[:2] == [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ]


def test_openid_configuration_fallback_for_a_path_issuer(recorder: _Recorder) -> None:
    issuer = recorder.base + "/tenant"
    recorder.routes["/.well-known/oauth-protected-resource/mcp"] = {
        "resource": recorder.base + "/mcp",
        "authorization_servers": [issuer],
    }
    recorder.routes["/tenant/.well-known/openid-configuration"] = _as_doc(issuer)
    got = discover(recorder.base + "/mcp")
    assert got.metadata.token_endpoint == issuer + "/token"
    assert recorder.hits[1:] == [
        "/.well-known/oauth-authorization-server/tenant",
        "/.well-known/openid-configuration/tenant",
        "/tenant/.well-known/openid-configuration",
    ]


def test_a_server_without_resource_metadata_is_its_own_as(recorder: _Recorder) -> None:
    recorder.routes["/.well-known/oauth-authorization-server"] = _as_doc(recorder.base)
    got = discover(recorder.base + "/mcp")
    assert got.prm is None
    assert got.resource_indicator == recorder.base + "/mcp"


# -- the proxy ------------------------------------------------------------------------
class _Proxy(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    """A forward proxy: absolute-URI requests are relayed and recorded."""

    server: _Proxy

    def _relay(self) -> None:
        self.server.seen.append((self.command, self.path))
        parts = urllib.request.urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection",)}
        conn.request(self.command, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = _relay
    do_POST = _relay

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_discovery_registration_and_token_requests_use_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from oauth_server.harness import Browser, running

    from reasonix.plugin.mcp.oauth_flow import authorize, probe

    proxy = _Proxy()
    t = threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        with running("--public") as srv:
            for var in ("NO_PROXY", "no_proxy"):
                monkeypatch.delenv(var, raising=False)
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
            monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.server_address[1]}")
            browser = Browser()  # the "browser" goes direct; our own requests must not
            authorize("p", srv.mcp_url, open_url=browser, challenge=probe(srv.mcp_url), timeout=20)
            browser.join()
            kinds = {(m, urllib.request.urlparse(u).path) for m, u in proxy.seen}
            assert ("POST", "/mcp") in kinds  # the probe
            assert ("GET", "/.well-known/oauth-protected-resource/mcp") in kinds
            assert ("GET", "/.well-known/oauth-authorization-server") in kinds
            assert ("POST", "/register") in kinds
            assert ("POST", "/token") in kinds
    finally:
        proxy.shutdown()
        proxy.server_close()
        t.join(timeout=5)
