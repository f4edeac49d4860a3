"""``--tunnel`` (used by ``reasonix remote open``): loopback names on any port, nothing else.

Behind an SSH ``-L`` forward the browser's port is the forward's local one, so
the Host check keeps the name (what DNS rebinding changes) and drops the port.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_kit import Client, running, write_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "repo", "http://127.0.0.1:9")  # the model is never asked


@pytest.mark.parametrize("host", ["127.0.0.1:1", "localhost:40123", "[::1]:8080"])
def test_a_tunnel_answers_loopback_names_on_any_port(ws: Path, host: str) -> None:
    with running(ws, tunnel=True, auth_mode="token") as app:
        c = Client(app.port)
        c.headers["Host"] = host
        c.headers["Origin"] = f"http://{host}"
        c.hello()
        assert c.login(app.secrets.token) == 200  # a POST: Origin and CSRF checked as usual
        assert c.get("/api/sessions")[0] == 200


@pytest.mark.parametrize("host", ["evil.example:{port}", "localhost.evil:1", "127.0.0.1", "x:y"])
def test_a_tunnel_still_refuses_foreign_names(ws: Path, host: str) -> None:
    with running(ws, tunnel=True, auth_mode="token") as app:
        c = Client(app.port)
        c.headers["Host"] = host.format(port=app.port)
        status, body = c.get("/api/hello")
        assert status == 403 and "Host" in body["error"]


def test_without_tunnel_the_port_must_match(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        c = Client(app.port)
        c.headers["Host"] = "127.0.0.1:1"
        assert c.get("/api/hello")[0] == 403
