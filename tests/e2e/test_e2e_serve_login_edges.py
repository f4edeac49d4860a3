"""`reasonix.pyz serve` behind a proxy, token mode: a wrong bearer token counts toward
the login throttle, logout clears the cookie, and Origin is checked against
X-Forwarded-Host (issue 34, item 7)."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project

PROXY = "rx.example.com"


def _call(port: int, method: str, path: str, headers: dict[str, str], body: Any = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    return resp.status, raw, resp


@pytest.mark.e2e
def test_pyz_serve_throttles_bearer_guesses_logs_out_and_honours_the_proxy_host(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    write_project(ws, "http://127.0.0.1:9")  # the model is never asked
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write("\n[serve]\nbehind_proxy = true\n")
    proc = subprocess.Popen(
        [sys.executable, str(pyz), "serve", "--port", "0", "--auth-mode", "token"],
        cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert "#token=" in url, url
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("#token=")[1]
        # what the proxy sends on: its upstream Host, the browser's in X-Forwarded-Host
        browser = {"Host": f"127.0.0.1:{port}", "X-Forwarded-Host": PROXY,
                   "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9",
                   "Origin": f"https://{PROXY}"}  # fmt: skip
        csrf = json.loads(_call(port, "GET", "/api/hello", browser)[1])["csrf"]
        post = {**browser, "X-Reasonix-CSRF": csrf, "Content-Type": "application/json"}

        # Origin is the browser's https://rx.example.com: accepted; the upstream's is not
        status, _, resp = _call(port, "POST", "/api/login", post, {"secret": token})
        assert status == 200
        cookie = resp.getheader("Set-Cookie")
        assert "Secure" in cookie  # https as the proxy said
        upstream = {**post, "Origin": f"https://127.0.0.1:{port}"}
        assert _call(port, "POST", "/api/login", upstream, {"secret": token})[0] == 403

        # logout: the same cookie, emptied and expired
        logged_in = {**post, "Cookie": cookie.split(";")[0]}
        assert _call(port, "GET", "/api/sessions", logged_in)[0] == 200
        status, _, resp = _call(port, "POST", "/api/logout", logged_in, {})
        cleared = resp.getheader("Set-Cookie")
        assert status == 200 and cleared.startswith(f"rx_auth_{port}=;") and "Max-Age=0" in cleared

        # five wrong bearer tokens from one client: then even the right one waits
        wrong = {**browser, "Authorization": "Bearer not-the-token"}
        assert [_call(port, "GET", "/api/sessions", wrong)[0] for _ in range(5)] == [401] * 5
        right = {**browser, "Authorization": f"Bearer {token}"}
        assert _call(port, "GET", "/api/sessions", right)[0] == 429
        other = {**right, "X-Forwarded-For": "198.51.100.20"}  # another client is not held
        assert _call(port, "GET", "/api/sessions", other)[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and token not in err
