"""A small loopback authorization server for the grant and discovery tests.

The SDK-based ``server.py`` speaks only the authorization-code grant; these
tests need client credentials, the enterprise token exchange at an IdP and
the JWT bearer grant, Client ID Metadata Documents, and servers with missing
or legacy metadata. This stdlib HTTP server answers all of them on
127.0.0.1 and records what it was sent, so the tests drive our real HTTP
client (``oauth_http``) instead of replacing it.

Paths (relative to :attr:`StubAs.base`):

- ``GET`` any path in :attr:`docs` → that JSON document (200); else 404;
- ``POST /mcp`` → 401 with a Bearer challenge naming the resource metadata;
- ``POST /token`` → ``tok<N>`` access tokens; form and headers recorded;
- ``POST /idp/token`` → an ID-JAG (the IdP's token exchange); form recorded;
- ``POST /register`` → 201 ``{"client_id": "dcr-client"}``; document recorded.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"  # SEP-990's literal


class StubAs:
    """The running server; a context manager. ``as_doc`` extends the AS metadata."""

    def __init__(self, as_doc: dict[str, Any] | None = None, *, prm: bool = True) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.stub = self  # type: ignore[attr-defined]
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.mcp_url = self.base + "/mcp"
        self.idp_token = self.base + "/idp/token"
        self.asked: list[str] = []  # every GET, as a full URL
        self.tokens: list[tuple[dict[str, str], dict[str, str]]] = []
        self.idp: list[dict[str, str]] = []
        self.registrations: list[Any] = []
        self.docs: dict[str, Any] = {}
        if prm:
            self.docs["/.well-known/oauth-protected-resource/mcp"] = {
                "resource": self.mcp_url,
                "authorization_servers": [self.base],
            }
        if as_doc is not None:
            self.docs["/.well-known/oauth-authorization-server"] = {
                "issuer": self.base,
                "authorization_endpoint": self.base + "/authorize",
                "token_endpoint": self.base + "/token",
                "registration_endpoint": self.base + "/register",
                "code_challenge_methods_supported": ["S256"],
                **as_doc,
            }
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> StubAs:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    @property
    def stub(self) -> StubAs:
        return self.server.stub  # type: ignore[attr-defined, no-any-return]

    def _answer(self, status: int, doc: Any = None, headers: dict[str, str] | None = None) -> None:
        body = b"" if doc is None else json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.stub.asked.append(self.stub.base + self.path)
        doc = self.stub.docs.get(self.path)
        self._answer(200, doc) if doc is not None else self._answer(404)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        stub = self.stub
        if self.path == "/mcp":
            prm = stub.base + "/.well-known/oauth-protected-resource/mcp"
            challenge = f'Bearer error="invalid_token", resource_metadata="{prm}"'
            self._answer(401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})
            return
        if self.path == "/register":
            stub.registrations.append(json.loads(raw))
            self._answer(201, {"client_id": "dcr-client"})
            return
        form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        if self.path == "/idp/token":
            stub.idp.append(form)
            self._answer(200, {"access_token": "id-jag", "token_type": "N_A",
                               "issued_token_type": TOKEN_TYPE_ID_JAG})  # fmt: skip
            return
        if self.path == "/token":
            stub.tokens.append((form, dict(self.headers.items())))
            n = len(stub.tokens)
            self._answer(200, {"access_token": f"tok{n}", "token_type": "Bearer",
                               "expires_in": 3600})  # fmt: skip
            return
        self._answer(404)
