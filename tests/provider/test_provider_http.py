"""The HTTP layer: retry policy, Retry-After, error translation, proxies, TLS defaults."""

from __future__ import annotations

import email.utils
import shutil
import ssl
import subprocess
import threading
import time

import pytest
from fakes import FakeServer, Fault, Turn
from provider_kit import Sleeps, client, collect, provider, request, text

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ProviderAPIError, ProviderError
from reasonix.provider.http import (
    CertificateError,
    HTTPClient,
    RetryPolicy,
    Timeouts,
    parse_retry_after,
    vendor_message,
)


def test_growing_delays_then_success_on_attempt_three() -> None:
    sleeps = Sleeps()
    script = [Fault.status(429), Fault.status(503), Turn(text="third time")]
    with FakeServer("openai", script) as srv:
        chunks = collect(provider("openai", srv.url, http=client(sleeps)))
        assert len(srv.requests) == 3
    assert text(chunks) == "third time"
    assert sleeps.delays == [1.0, 2.0]


def test_backoff_is_full_jitter_and_capped() -> None:
    policy = RetryPolicy()
    assert [policy.backoff(n, 1.0) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    assert policy.backoff(3, 0.5) == 4.0
    assert policy.backoff(3, 0.0) == 0.0


@pytest.mark.parametrize(("header", "want"), [("7", 7.0), ("120", 60.0), ("0", 0.0)])
def test_retry_after_seconds_honoured_and_capped(header: str, want: float) -> None:
    sleeps = Sleeps()
    with FakeServer("anthropic", [Fault.status(429, retry_after=header), Turn(text="ok")]) as srv:
        collect(provider("anthropic", srv.url, http=client(sleeps)))
    assert sleeps.delays == [want]


def test_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    sleeps = Sleeps()
    with FakeServer("responses", [Fault.status(503, retry_after=when), Turn(text="ok")]) as srv:
        collect(provider("responses", srv.url, http=client(sleeps)))
    assert 15 <= sleeps.delays[0] <= 21


def test_parse_retry_after() -> None:
    assert parse_retry_after("3.5") == 3.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_on_retry_is_told_before_each_wait() -> None:
    seen: list[tuple[int, float, int]] = []

    def on_retry(n: int, delay: float, err: ProviderError) -> None:
        assert isinstance(err, ProviderAPIError)
        seen.append((n, delay, err.status))

    http = client()
    http.on_retry = on_retry
    with FakeServer("openai", [Fault.status(502), Fault.status(500), Turn(text="ok")]) as srv:
        collect(provider("openai", srv.url, http=http))
    assert seen == [(1, 1.0, 502), (2, 2.0, 500)]


@pytest.mark.parametrize(
    ("body", "want"),
    [
        (
            '{"error":{"message":"bad key","type":"invalid_request_error"}}',
            "invalid_request_error: bad key",
        ),
        (
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            "overloaded_error: Overloaded",
        ),
        ('{"error":"plain string"}', "plain string"),
        ('[{"error":{"message":"listed","code":400}}]', "listed"),
        ('{"detail":"Not Found"}', "Not Found"),
        ("<html>\n  <h1>502 Bad Gateway</h1>\n</html>", "<html> <h1>502 Bad Gateway</h1> </html>"),
        ("", "(empty body)"),
    ],
)
def test_vendor_message(body: str, want: str) -> None:
    assert vendor_message(body) == want


def test_html_error_body_kept_in_error() -> None:
    fault = Fault.status(404, body="<h1>no route</h1>")
    with FakeServer("openai", [fault]) as srv, pytest.raises(ProviderAPIError) as ei:
        provider("openai", srv.url).stream(request(), Cancel())
    assert ei.value.status == 404 and ei.value.body == "<h1>no route</h1>"
    assert "no route" in str(ei.value)


def test_http_proxy_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeServer("openai", [Turn(text="via proxy")]) as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        p = provider("openai", "http://upstream.example")
        assert text(collect(p)) == "via proxy"
        # A proxy sees the absolute target in the request line.
        assert proxy.requests[0].path == "http://upstream.example/v1/chat/completions"


def test_no_proxy_bypasses_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with FakeServer("openai", [Turn(text="direct")]) as srv:
        assert text(collect(provider("openai", srv.url))) == "direct"


def test_tls_verification_is_on_by_default() -> None:
    ctx = HTTPClient()._ssl
    assert ctx.verify_mode is ssl.CERT_REQUIRED and ctx.check_hostname


@pytest.fixture(scope="module")
def tls_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed localhost certificate: (server context, client context trusting it)."""
    if shutil.which("openssl") is None:
        pytest.skip("MISSING openssl CLI: cannot mint a test certificate (apt-get install openssl)")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    return server, trusting


def test_https_stream_and_cancel(tls_pair: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    server, trusting = tls_pair
    http = HTTPClient(timeouts=Timeouts(connect=2, idle=10), ssl_context=trusting)
    script = [Turn(text="secure hello"), Turn(text=" ".join(["w"] * 30), delay=0.2)]
    with FakeServer("openai", script, tls=server) as srv:
        assert srv.url.startswith("https://")
        p = provider("openai", srv.url, http=http)
        assert text(collect(p)) == "secure hello"
        cancel = Cancel()
        it = p.stream(request(), cancel)
        next(c for c in it if c.text)
        threading.Timer(0.05, cancel.cancel).start()
        start = time.monotonic()
        with pytest.raises(Cancelled):
            for _ in it:
                pass
        assert time.monotonic() - start < 1.0


def test_untrusted_certificate_fails_without_retry(
    tls_pair: tuple[ssl.SSLContext, ssl.SSLContext],
) -> None:
    server, _ = tls_pair
    sleeps = Sleeps()
    with (
        FakeServer("openai", [Turn(text="x")], tls=server) as srv,
        pytest.raises(CertificateError, match="certificate verification failed"),
    ):
        provider("openai", srv.url, http=client(sleeps)).stream(request(), Cancel())
    assert sleeps.delays == []


def test_a_cancel_reaches_the_connection_a_redirect_opened() -> None:
    """The opener is shared by a client's requests; the socket slot rides on each request,
    and a redirect's new request keeps it."""
    import http.server

    release = threading.Event()

    class Redirecting(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(303)
            self.send_header("Location", "/slow")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
            release.wait(20)  # answers nothing until the test is over

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        http_client = HTTPClient(timeouts=Timeouts(connect=2, idle=15))
        cancel = Cancel()
        threading.Timer(0.3, cancel.cancel).start()
        start = time.monotonic()
        with pytest.raises(Cancelled):
            url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
            http_client.post_stream(url, {}, b"{}", cancel)
        assert time.monotonic() - start < 5.0  # not the 15 s idle timeout
    finally:
        release.set()
        server.shutdown()
        server.server_close()
