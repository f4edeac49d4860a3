"""A real OAuth authorization server + MCP resource server for the OAuth tests.

Built on the PyPI ``mcp`` SDK's auth components: ``create_auth_routes`` (RFC
8414 metadata, RFC 7591 registration, the PKCE-checking authorize and token
endpoints), ``create_protected_resource_routes`` (RFC 9728) and
``BearerAuthBackend`` (token checks, bound to the resource URL). Our own part
is small: an in-memory provider that auto-approves every authorization,
rotates refresh tokens and issues short-lived access tokens, and a tiny MCP
endpoint that answers ``initialize`` / ``tools/list`` / ``tools/call``.

Three MCP resources are served, each with its own Protected Resource
Metadata: ``/mcp``, ``/other/mcp``, and ``/scoped/mcp``, whose 401 challenge
asks for scope ``read`` only (so ``write_note`` needs a step-up).
``GET /_log`` returns every request the MCP endpoints saw.

Usage: ``python server.py [--ttl SECONDS] [--public]``;
it prints ``PORT <n>`` once it listens on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
import time
import warnings
from typing import Any

warnings.simplefilter("ignore")

import uvicorn  # noqa: E402
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend  # noqa: E402
from mcp.server.auth.provider import (  # noqa: E402
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import (  # noqa: E402
    build_metadata,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken  # noqa: E402
from pydantic import AnyHttpUrl  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

SCOPES = ["read", "write"]


class Provider:
    """In-memory, auto-approving ``OAuthAuthorizationServerProvider``."""

    def __init__(self, ttl: int) -> None:
        self.ttl = ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(32)
        assert client.client_id
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.ttl,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.ttl,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]  # single use: a replay finds nothing
        assert client.client_id
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotation: the old one is dead
        assert client.client_id
        return self._issue(client.client_id, scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build_app(base: str, args: argparse.Namespace) -> Starlette:
    provider = Provider(args.ttl)
    log: list[dict[str, Any]] = []
    issuer = AnyHttpUrl(base)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES)
    routes = create_auth_routes(
        provider,  # type: ignore[arg-type]
        issuer,
        client_registration_options=registration,
        revocation_options=RevocationOptions(enabled=True),
    )
    if args.public:
        # Advertise public clients too, so ours registers with method "none".
        meta = build_metadata(issuer, None, registration, RevocationOptions(enabled=True))
        meta.token_endpoint_auth_methods_supported = ["none", "client_secret_basic"]
        doc = meta.model_dump(mode="json", exclude_none=True)
        routes[0] = Route(
            "/.well-known/oauth-authorization-server",
            lambda _r: JSONResponse(doc),
            methods=["GET"],
        )
    resources = {path: f"{base}{path}" for path in ("/mcp", "/other/mcp", "/scoped/mcp")}
    for url in resources.values():
        routes += create_protected_resource_routes(AnyHttpUrl(url), [issuer], SCOPES)
    verifier = ProviderTokenVerifier(provider)  # type: ignore[arg-type]
    backends = {
        path: BearerAuthBackend(verifier, resource_server_url=AnyHttpUrl(url))
        for path, url in resources.items()
    }

    def challenge(path: str, error: str, scope: str) -> str:
        prm = base + "/.well-known/oauth-protected-resource" + path
        parts = [f'error="{error}"', f'resource_metadata="{prm}"']
        if scope:
            parts.append(f'scope="{scope}"')
        return "Bearer " + ", ".join(parts)

    async def mcp(request: Request) -> Response:
        path = request.url.path
        if request.method != "POST":
            return Response(status_code=405)
        body = await request.json()
        log.append(
            {
                "path": path,
                "authorization": request.headers.get("authorization"),
                "method": body.get("method"),
            }
        )
        got = await backends[path].authenticate(request)
        scope = "read" if path == "/scoped/mcp" else ""
        if got is None:
            return JSONResponse(
                {"error": "invalid_token"},
                status_code=401,
                headers={"WWW-Authenticate": challenge(path, "invalid_token", scope)},
            )
        scopes = list(got[0].scopes)
        if "id" not in body:
            return Response(status_code=202)
        method, rid = body.get("method"), body["id"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": body["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-test", "version": "1"},
            }
        elif method == "tools/list":
            result = {
                "tools": [
                    {"name": "whoami", "inputSchema": {"type": "object"}},
                    {"name": "write_note", "inputSchema": {"type": "object"}},
                ]
            }
        elif method == "tools/call":
            name = body["params"]["name"]
            if name == "write_note" and "write" not in scopes:
                return JSONResponse(
                    {"error": "insufficient_scope"},
                    status_code=403,
                    headers={
                        "WWW-Authenticate": challenge(path, "insufficient_scope", "read write")
                    },
                )
            text = "scopes: " + " ".join(scopes)
            result = {"content": [{"type": "text", "text": f"{name} ok; {text}"}]}
        else:
            result = {}
        return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": result})

    async def show_log(_request: Request) -> Response:
        return JSONResponse({"mcp": log})

    routes += [
        Route("/mcp", mcp, methods=["POST", "GET", "DELETE"]),
        Route("/other/mcp", mcp, methods=["POST", "GET", "DELETE"]),
        Route("/scoped/mcp", mcp, methods=["POST", "GET", "DELETE"]),
        Route("/_log", show_log, methods=["GET"]),
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ttl", type=int, default=3600)
    parser.add_argument("--public", action="store_true")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue up while uvicorn starts
    port = sock.getsockname()[1]
    app = build_app(f"http://127.0.0.1:{port}", args)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])
    sys.exit(0)


if __name__ == "__main__":
    main()
