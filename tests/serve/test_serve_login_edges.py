"""Login behaviours a deliberate break once left unnoticed (issue 34, item 7).

A wrong bearer token is a failed login like a wrong password (it counts toward
the throttle); ``/api/logout`` makes a browser drop its cookie; behind a proxy
the ``Origin`` is checked against ``X-Forwarded-Host``, never without one.
Each test drives a real server on loopback with a plain HTTP client.
"""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from serve_kit import Client, running, write_workspace

PROXY_HOST = "rx.example.com"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "repo", "http://127.0.0.1:9")  # the model is never asked


def test_a_wrong_bearer_token_counts_toward_the_login_throttle(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        c = Client(app.port)
        c.headers["Authorization"] = f"Bearer {app.secrets.token}"
        assert c.get("/api/sessions")[0] == 200  # the right one passes before any failure
        c.headers["Authorization"] = "Bearer not-the-token"
        assert [c.get("/api/sessions")[0] for _ in range(5)] == [401] * 5
        # five wrong tokens spent the budget: now even the right one waits, as after
        # five wrong passwords, and so does a login through the page
        c.headers["Authorization"] = f"Bearer {app.secrets.token}"
        status, body, resp = c.request("GET", "/api/sessions")
        assert status == 429 and "too many" in body["error"]
        assert int(resp.getheader("Retry-After") or 0) >= 1
        del c.headers["Authorization"]
        c.hello()
        assert c.login(app.secrets.token) == 429


class _Browser:
    """urllib with a cookie jar: keeps and drops cookies by the rules a browser follows."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = ""

    def call(self, method: str, path: str, body: object = None) -> tuple[int, dict[str, str]]:
        headers = {"Origin": self.base}
        data = None
        if method == "POST":
            headers |= {"Content-Type": "application/json", "X-Reasonix-CSRF": self.csrf}
            data = json.dumps(body or {}).encode()
        req = urllib.request.Request(self.base + path, data, headers, method=method)
        try:
            with self.opener.open(req, timeout=20) as resp:
                if path == "/api/hello":
                    self.csrf = json.loads(resp.read())["csrf"]
                return resp.status, dict(resp.headers)
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers)


def test_logout_clears_the_login_cookie(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        browser = _Browser(app.port)
        assert browser.call("GET", "/api/hello")[0] == 200
        assert browser.call("GET", "/api/sessions")[0] == 401
        assert browser.call("POST", "/api/login", {"secret": app.secrets.token})[0] == 200
        assert [c.name for c in browser.jar] == [f"rx_auth_{app.port}"]
        assert browser.call("GET", "/api/sessions")[0] == 200  # logged in by the cookie

        status, headers = browser.call("POST", "/api/logout")
        assert status == 200
        cleared = headers["Set-Cookie"]
        # the same cookie (name and path), emptied and expired, so the browser drops it
        assert cleared.startswith(f"rx_auth_{app.port}=;") and "Path=/" in cleared
        assert "Max-Age=0" in cleared and app.secrets.cookie not in cleared
        assert list(browser.jar) == []
        assert browser.call("GET", "/api/sessions")[0] == 401  # logged out


def _proxied(port: int, *, origin: str, forwarded_host: str | None) -> Client:
    """A client as a proxy forwards it: Host stays the upstream's, the browser's is
    in X-Forwarded-Host (a proxy that does not pass its own Host on)."""
    c = Client(port)
    c.headers["Origin"] = origin
    c.headers["X-Forwarded-Proto"] = "https"
    if forwarded_host is not None:
        c.headers["X-Forwarded-Host"] = forwarded_host
    return c


def test_behind_a_proxy_origin_is_checked_against_the_forwarded_host(ws: Path) -> None:
    with running(ws, auth_mode="token", behind_proxy=True) as app:
        browser = _proxied(app.port, origin=f"https://{PROXY_HOST}", forwarded_host=PROXY_HOST)
        browser.hello()
        assert browser.login(app.secrets.token) == 200  # the browser's own origin passes
        assert browser.post("/api/sessions")[0] == 201
        # the upstream's address is not the origin the browser used: refused
        upstream = f"https://127.0.0.1:{app.port}"
        other = _proxied(app.port, origin=upstream, forwarded_host=PROXY_HOST)
        other.hello()
        status, body = other.post("/api/login", {"secret": app.secrets.token})
        assert status == 403 and "Origin" in body["error"]
        # the first of several forwarded hosts is the browser's (the proxies append theirs)
        chained = _proxied(
            app.port, origin=f"https://{PROXY_HOST}", forwarded_host=f"{PROXY_HOST}, inner.lan"
        )
        chained.hello()
        assert chained.login(app.secrets.token) == 200


def test_without_behind_proxy_a_forwarded_host_is_ignored(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        spoofed = _proxied(app.port, origin=f"http://{PROXY_HOST}", forwarded_host=PROXY_HOST)
        spoofed.headers["X-Forwarded-Proto"] = "http"
        spoofed.hello()
        status, body = spoofed.post("/api/login", {"secret": app.secrets.token})
        assert status == 403 and "Origin" in body["error"]
        honest = Client(app.port)
        honest.headers["X-Forwarded-Host"] = PROXY_HOST  # ignored: Host decides
        honest.hello()
        assert honest.login(app.secrets.token) == 200
