"""Every bypass attempt fails: a plain HTTP client against a real server on loopback.

No token -> 401; a foreign Host or Origin -> 403; no CSRF token -> 403; password
guessing -> 429; ``none`` on a public address refuses to start; static path
traversal -> 404; oversized bodies -> 413; nothing logged holds a secret.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from serve_kit import Client, ServeProcess, env_for, running, write_workspace

from reasonix.errors import ConfigError
from reasonix.serve.auth import RateLimiter, hash_password, verify_password
from reasonix.serve.server import ServeSettings, check_exposure

STATIC = Path(__file__).resolve().parents[2] / "reasonix" / "serve" / "static"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "repo", "http://127.0.0.1:9")  # the model is never asked


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com"])
def test_none_is_refused_on_a_public_bind(host: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="only allowed on a loopback address"):
        check_exposure(ServeSettings(workspace=tmp_path, host=host))
    check_exposure(ServeSettings(workspace=tmp_path, host=host, auth_mode="token"))


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_none_is_fine_on_loopback_but_not_behind_a_proxy(host: str, tmp_path: Path) -> None:
    check_exposure(ServeSettings(workspace=tmp_path, host=host))
    with pytest.raises(ConfigError, match="behind_proxy"):
        check_exposure(ServeSettings(workspace=tmp_path, host=host, behind_proxy=True))


def test_cli_refuses_none_on_every_interface(ws: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix", "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert "refusing to serve 0.0.0.0 without authentication" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_token_401_bearer_and_cookie_pass(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        c = Client(app.port)
        assert c.hello()["authenticated"] is False
        assert c.get("/api/sessions")[0] == 401
        assert c.get("/api/sessions/x/events")[0] == 401
        assert c.post("/api/sessions")[0] == 401
        c.headers["Authorization"] = "Bearer not-the-token"
        assert c.get("/api/sessions")[0] == 401
        c.headers["Authorization"] = f"Bearer {app.secrets.token}"
        assert c.get("/api/sessions") == (200, {"sessions": []})
        del c.headers["Authorization"]
        assert c.login("wrong") == 401
        assert c.login(app.secrets.token) == 200
        assert c.get("/api/sessions")[0] == 200
        assert c.get("/")[0] == 200  # the page itself is public: it holds no secret


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost.evil:{port}"]
)
def test_dns_rebinding_foreign_host_is_403(ws: Path, host: str) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.headers["Host"] = host.format(port=app.port)
        status, body = c.get("/api/hello")
        assert status == 403 and "Host" in body["error"]
        assert c.get("/")[0] == 403


def test_a_request_without_host_is_403(ws: Path) -> None:
    with running(ws) as app:
        reply = _raw(app.port, b"GET /api/hello HTTP/1.0\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 403 ")


def test_loopback_names_are_served(ws: Path) -> None:
    with running(ws) as app:
        for name in ("127.0.0.1", "localhost", "[::1]"):
            c = Client(app.port)
            c.headers["Host"] = f"{name}:{app.port}"
            c.headers["Origin"] = f"http://{name}:{app.port}"
            c.hello()
            assert c.get("/api/sessions")[0] == 200


@pytest.mark.parametrize("origin", [None, "http://evil.example", "null", "http://127.0.0.1:1",
                                    "https://127.0.0.1:{port}"])  # fmt: skip
def test_wrong_origin_is_403_even_under_none(ws: Path, origin: str | None) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.hello()
        c.headers["Origin"] = origin.format(port=app.port) if origin else ""
        status, body = c.post("/api/sessions")
        assert status == 403 and "Origin" in body["error"]


def test_missing_or_wrong_csrf_is_403_even_under_none(ws: Path) -> None:
    with running(ws) as app:
        c = Client(app.port)
        status, body = c.post("/api/sessions")
        assert status == 403 and "CSRF" in body["error"]
        c.csrf = "x" * 32
        assert c.post("/api/sessions")[0] == 403
        c.hello()
        assert c.post("/api/login", {"secret": ""})[0] == 200  # none: nothing to log in to
        assert c.get("/api/sessions") == (200, {"sessions": []})
        assert not list(ws.parent.rglob("*.jsonl"))  # the refused requests created nothing


def test_password_guessing_is_throttled(ws: Path) -> None:
    stored = hash_password("correct horse", iterations=1000)
    with running(ws, auth_mode="password", password_hash=stored) as app:
        c = Client(app.port)
        c.hello()
        assert [c.login(f"guess{i}") for i in range(5)] == [401] * 5
        status, _, resp = c.request("POST", "/api/login", {"secret": "correct horse"})
        assert status == 429 and int(resp.getheader("Retry-After") or 0) >= 1
        c.headers["X-Forwarded-For"] = "10.9.9.9"  # not behind a proxy: ignored
        assert c.login("correct horse") == 429
        assert c.get("/api/sessions")[0] == 429
        other = Client(app.port)
        other.headers["Host"] = f"localhost:{app.port}"
        other.headers["Origin"] = f"http://localhost:{app.port}"
        other.hello()
        assert other.login("correct horse") == 429  # same peer address: same client


def test_behind_proxy_the_forwarded_client_is_the_throttle_key(ws: Path) -> None:
    stored = hash_password("correct horse", iterations=1000)
    settings = {"auth_mode": "password", "password_hash": stored, "behind_proxy": True}
    with running(ws, **settings) as app:
        c = Client(app.port)
        c.headers["X-Forwarded-For"] = "203.0.113.7"
        c.hello()
        assert [c.login("nope") for _ in range(6)] == [401] * 5 + [429]
        c.headers["X-Forwarded-For"] = "spoofed, 198.51.100.4"  # the proxy appends the real one
        assert c.login("correct horse") == 200


def test_rate_limiter_window() -> None:
    now = [0.0]
    rl = RateLimiter(limit=3, window=60, clock=lambda: now[0])
    for _ in range(3):
        assert rl.retry_after("a") == 0
        rl.fail("a")
    assert rl.retry_after("a") == 60 and rl.retry_after("b") == 0
    now[0] = 59.5
    assert rl.retry_after("a") == pytest.approx(0.5)
    now[0] = 60.0
    assert rl.retry_after("a") == 0
    rl.fail("a")
    rl.succeed("a")
    assert rl.retry_after("a") == 0


def test_password_hash_round_trip() -> None:
    stored = hash_password("s3cret-pass", iterations=1000)
    assert stored.startswith("pbkdf2_sha256$1000$") and "s3cret" not in stored
    assert verify_password("s3cret-pass", stored)
    assert not verify_password("s3cret-pasS", stored)
    assert not verify_password("s3cret-pass", stored.replace("pbkdf2_sha256", "md5"))
    assert not verify_password("x", "garbage")
    assert hash_password("a" * 8, iterations=1000) != hash_password("a" * 8, iterations=1000)


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/..%2fserver.py",
        "/static/%2e%2e/server.py",
        "/static/..%5cserver.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/app.js%00.png",
        "/static/sub/app.js",
        "/static/",
        "/static/__init__.py",
        "/..%2f..%2fetc/passwd",
        "/etc/passwd",
    ],
)
def test_static_path_traversal_is_404(ws: Path, path: str) -> None:
    with running(ws) as app:
        status, body = Client(app.port).get(path)
        assert status == 404, (path, body)
        assert "root:" not in str(body)


def test_static_files_come_from_the_package(ws: Path) -> None:
    with running(ws) as app:
        c = Client(app.port)
        status, _, resp = c.request("GET", "/static/app.js")
        assert status == 200 and resp.getheader("Content-Type") == "text/javascript; charset=utf-8"
        status, _, resp = c.request("GET", "/")
        assert status == 200 and resp.getheader("Content-Type") == "text/html; charset=utf-8"


def test_security_headers_on_every_response(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        c = Client(app.port)
        for method, path in (("GET", "/"), ("GET", "/api/hello"), ("GET", "/api/sessions"),
                             ("GET", "/nope"), ("POST", "/api/login")):  # fmt: skip
            _, _, resp = c.request(method, path)
            csp = resp.getheader("Content-Security-Policy") or ""
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp, path
            assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
            assert resp.getheader("X-Content-Type-Options") == "nosniff"
            assert resp.getheader("Referrer-Policy") == "no-referrer"
            assert resp.getheader("X-Frame-Options") == "DENY"
            assert resp.getheader("Cache-Control") == "no-store"
            assert resp.getheader("Server") == "reasonix"  # no Python version advertised


def test_cookie_flags_and_secure_only_behind_an_https_proxy(ws: Path) -> None:
    for behind, proto, secure in ((False, "https", False), (True, "http", False),
                                  (True, "https", True)):  # fmt: skip
        with running(ws, auth_mode="token", behind_proxy=behind) as app:
            c = Client(app.port)
            c.headers["X-Forwarded-Proto"] = proto
            if behind and proto == "https":
                c.headers["Origin"] = f"https://127.0.0.1:{app.port}"
            c.hello()
            status, _, resp = c.request("POST", "/api/login", {"secret": app.secrets.token})
            assert status == 200
            cookie = resp.getheader("Set-Cookie") or ""
            assert cookie.startswith(f"rx_auth_{app.port}=") and app.secrets.token not in cookie
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert ("Secure" in cookie) is secure


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def test_oversized_body_is_413_without_reading_it(ws: Path) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.hello()
        head = (
            f"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{app.port}\r\n"
            f"Origin: http://127.0.0.1:{app.port}\r\nX-Reasonix-CSRF: {c.csrf}\r\n"
            "Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n{"
        ).encode()
        reply = _raw(app.port, head)  # the server answers and hangs up; 50 MB never sent
        assert reply.startswith(b"HTTP/1.1 413 ")
        status, body = c.post("/api/sessions/x/prompt", {"text": "x" * (1 << 20)})
        assert status == 413 and "bytes" in body["error"]


def test_bad_bodies_get_a_message_not_a_traceback(ws: Path) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.hello()
        sid = c.new_session()
        cases = [
            (b"{not json", {}, 400, "malformed JSON"),
            (b"[1, 2]", {}, 400, "JSON object"),
            (b'{"text": 5}', {}, 400, "'text' must be a string"),
            (b"\xff\xfe", {}, 400, "malformed JSON"),
            (b"text=hi", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "json"),
        ]
        for raw, headers, code, message in cases:
            status, body, _ = c.request("POST", f"/api/sessions/{sid}/prompt", raw=raw,
                                        headers=headers)  # fmt: skip
            assert status == code and message in body["error"], (raw, body)
        assert c.get("/api/sessions/no-such-session")[0] == 404
        assert c.get("/api/sessions/..%2f..")[0] == 404
        status, _, _ = c.request("PUT", "/api/sessions")
        assert status == 405
        assert not any("Traceback" in line for line in app.lines)


def test_nothing_logged_contains_the_token(ws: Path, tmp_path: Path) -> None:
    serve = ServeProcess(ws, tmp_path, "--auth-mode", "token", "--verbose")
    token = serve.url.split("#token=")[1]
    try:
        c = Client(serve.port)
        c.hello()
        assert c.login("wrong-" + token[:10]) == 401
        assert c.login(token) == 200
        c.headers["Authorization"] = f"Bearer {token}"
        assert c.get("/api/sessions")[0] == 200
        assert c.get(f"/api/hello?token={token}")[0] == 200
        raw = (
            f"GET /x\x1b]0;pwned\x07 HTTP/1.1\r\nHost: 127.0.0.1:{serve.port}\r\n"
            "Connection: close\r\n\r\n"
        )
        assert _raw(serve.port, raw.encode("latin-1")).startswith(b"HTTP/1.1 401")
    finally:
        code, out, err = serve.stop()
    assert code == 0
    assert "POST /api/login 401" in err and "GET /api/sessions 200" in err  # it did log
    assert "\x1b" not in err and "/x\\x1b]0;pwned" in err  # escapes in a path are shown, not run
    assert token not in err and token[:10] not in err and token not in out


def test_set_password_stores_only_a_hash_and_is_never_logged(ws: Path, tmp_path: Path) -> None:
    password = "tr0ub4dor&3-horse"
    setp = subprocess.run(
        [sys.executable, "-m", "reasonix", "serve", "--set-password"], input=password + "\n",
        cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert setp.returncode == 0, setp.stderr
    stored = Path(env_for(tmp_path)["REASONIX_HOME"]) / "serve-password"
    text = stored.read_text()
    assert text.startswith("pbkdf2_sha256$600000$") and password not in text
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert password not in setp.stdout + setp.stderr
    serve = ServeProcess(ws, tmp_path, "--auth-mode", "password", "--verbose")
    try:
        assert "#" not in serve.url
        c = Client(serve.port)
        assert c.hello()["auth"] == "password"
        assert c.login(password[:-1]) == 401
        assert c.login(password) == 200
        assert c.get("/api/sessions")[0] == 200
    finally:
        code, out, err = serve.stop()
    assert code == 0 and password not in out + err and password[:8] not in err


def test_password_mode_without_a_password_is_a_clear_error(ws: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix", "serve", "--auth-mode", "password"],
        cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "reasonix serve --set-password" in proc.stderr


def test_token_file_is_written_0600_and_reused(ws: Path, tmp_path: Path) -> None:
    path = tmp_path / "serve.token"
    first = ServeProcess(ws, tmp_path, "--token-file", str(path))
    first.stop()
    token = first.url.split("#token=")[1]
    assert path.read_text().strip() == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = ServeProcess(ws, tmp_path, "--token-file", str(path))
    again.stop()
    assert again.url.split("#token=")[1] == token
    os.chmod(path, 0o644)
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix", "serve", "--port", "0", "--token-file", str(path)],
        cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "readable by other users" in proc.stderr


def test_the_page_never_runs_inline_script_or_inserts_html() -> None:
    html = (STATIC / "index.html").read_text()
    assert "<script>" not in html and " on" not in html.replace("<option", "")
    assert '<script type="module" src="/static/app.js"></script>' in html
    names = sorted(p.name for p in STATIC.glob("*.js"))
    assert "app.js" in names and len(names) > 1  # app.js imports the page's other modules
    for name in names:  # every module, not only the entry
        js = (STATIC / name).read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                     "new Function"):  # fmt: skip
            assert sink not in js, (name, sink)
        assert "localStorage" not in js, name  # the token is never kept by the page
