"""The OAuth authorization-code flow for one MCP server, and token refresh.

:func:`authorize` is what ``reasonix mcp auth SERVER`` runs: discover the
authorization server, register (or reuse) our client, hand the authorization
URL to ``open_url`` (the CLI prints it and opens a browser), wait for the
redirect on a loopback listener, exchange the code, save the state.
:func:`refresh` trades a refresh token for new tokens and saves the answer
— including a rotated refresh token — before anyone uses the new access
token, so a crash can never lose the only valid refresh token.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit, urlunsplit

from reasonix.cancel import Cancel
from reasonix.errors import PluginError
from reasonix.lazy import dataclass, replace
from reasonix.plugin.mcp import oauth_store
from reasonix.plugin.mcp.httpwire import same_origin
from reasonix.plugin.mcp.oauth_client import (
    ClientInfo,
    choose_grant,
    client_auth,
    id_jag_request,
    jwt_bearer_request,
    metadata_document_client,
    parse_id_jag,
    parse_registration,
    registration_body,
)
from reasonix.plugin.mcp.oauth_http import get_json, oauth_error, post_form, post_json
from reasonix.plugin.mcp.oauth_meta import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    GRANT_JWT_BEARER,
    AsMetadata,
    Challenge,
    ResourceMetadata,
    as_metadata_urls,
    authorization_url,
    canonical_resource,
    legacy_default_metadata,
    make_pkce,
    make_state,
    parse_as_metadata,
    parse_resource_metadata,
    parse_www_authenticate,
    resource_metadata_urls,
    select_scopes,
    union_scopes,
)
from reasonix.plugin.mcp.oauth_store import OAuthState, Tokens

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AUTHORIZE_TIMEOUT",
    "Discovery",
    "LoopbackListener",
    "RefreshRejected",
    "authorize",
    "authorize_enterprise",
    "discover",
    "probe",
    "refresh",
]

AUTHORIZE_TIMEOUT = 300.0  # seconds the user has to finish in the browser
CALLBACK_PATH = "/callback"


class RefreshRejected(PluginError):
    """The AS refused our refresh token (expired, revoked, already rotated away)."""


# -- discovery -------------------------------------------------------------------
@dataclass(frozen=True)
class Discovery:
    """Where to authorize for one MCP server."""

    resource: str  # canonical server URL: what the stored state is bound to
    resource_indicator: str  # RFC 8707 ``resource`` to send
    prm: ResourceMetadata | None
    metadata: AsMetadata


def probe(server_url: str, *, timeout: float = 30.0) -> Challenge | None:
    """POST an unauthenticated ``initialize`` to read the server's 401 challenge.

    The challenge names the resource metadata URL and the scopes to ask for;
    None when the server did not answer 401/403 with a Bearer challenge.
    """
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reasonix", "version": "oauth-probe"},
            },
        }
    ).encode()
    req = urllib.request.Request(server_url, data=body, method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    try:
        with urllib.request.build_opener().open(req, timeout=timeout) as resp:
            resp.read(0)
            return None
    except urllib.error.HTTPError as exc:
        value = exc.headers.get("WWW-Authenticate")
        exc.close()
        return parse_www_authenticate(value) if exc.code in (401, 403) else None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise PluginError(f"cannot reach {server_url}: {getattr(exc, 'reason', exc)}") from exc


def _fetch_prm(
    server_url: str, challenge: Challenge | None, trusted: Sequence[str]
) -> ResourceMetadata | None:
    problems: list[str] = []
    for url in resource_metadata_urls(server_url, challenge):
        if not same_origin(url, server_url) and not any(same_origin(url, t) for t in trusted):
            problems.append(f"{url}: not on the server's origin (refused)")
            continue
        answer = get_json(url)
        if answer.status == 200:
            return parse_resource_metadata(answer.body, server_url)
        problems.append(f"{url}: HTTP {answer.status}")
    named = challenge.resource_metadata if challenge is not None else None
    if named and not same_origin(named, server_url):
        raise PluginError("no usable protected resource metadata: " + "; ".join(problems))
    return None


def _fetch_as_metadata(issuer: str, *, legacy: bool = False) -> AsMetadata | None:
    for url in as_metadata_urls(issuer):
        answer = get_json(url)
        if answer.status == 200 and isinstance(answer.body, dict):
            return parse_as_metadata(answer.body, issuer, legacy=legacy)
    return None


def discover(
    server_url: str, challenge: Challenge | None = None, *, trusted_origins: Sequence[str] = ()
) -> Discovery:
    """Protected Resource Metadata, then the metadata of its first working AS.

    A server without resource metadata (2025-03-26 era) is taken to be its
    own authorization server at the origin root; when that publishes no
    metadata either, the revision's default endpoints (``/authorize``,
    ``/token``, ``/register`` at the root) are used.
    """
    resource = canonical_resource(server_url)
    prm = _fetch_prm(server_url, challenge, trusted_origins)
    if prm is not None:
        issuers = list(prm.authorization_servers)
        indicator = canonical_resource(prm.resource)
    else:
        p = urlsplit(resource)
        issuers, indicator = [urlunsplit((p.scheme, p.netloc, "", "", ""))], resource
    for issuer in issuers:
        meta = _fetch_as_metadata(issuer, legacy=prm is None)
        if meta is not None:
            return Discovery(resource, indicator, prm, meta)
    if prm is None:
        return Discovery(resource, indicator, None, legacy_default_metadata(resource))
    raise PluginError(f"no authorization server metadata found for {', '.join(issuers)}")


# -- the loopback redirect listener -------------------------------------------------
class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


class LoopbackListener:
    """A one-shot HTTP listener on 127.0.0.1 that receives the authorization redirect.

    Only ``GET /callback`` counts; other requests (a browser's favicon) get a
    404 and the wait goes on. A callback whose ``state`` is not ours ends the
    wait with an error — it is either a bug or a forged request (MCP-5).
    """

    def __init__(self, port: int = 0) -> None:
        self._result: dict[str, str] | None = None
        self._lock = threading.Lock()
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # Browsers open speculative connections that never send a request;
            # each connection gets its own thread, and a silent one ends soon.
            timeout = 5.0

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with listener._lock:
                    first = parts.path == CALLBACK_PATH and listener._result is None
                    if first:
                        listener._result = query
                if not first:
                    self._reply(404, "Not found.")
                    return
                ok = "code" in query and "error" not in query
                self._reply(
                    200 if ok else 400,
                    "Reasonix received the authorization; you can close this tab."
                    if ok
                    else "Reasonix: the authorization did not succeed; see the terminal.",
                )

            def _reply(self, status: int, text: str) -> None:
                data = (f"<!doctype html><meta charset=utf-8><p>{text}</p>\n").encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # library code never writes to stderr

        try:
            self._server = _Server(("127.0.0.1", port), Handler)
        except OSError:
            if port == 0:
                raise
            self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.timeout = 0.2

    @property
    def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/callback``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}{CALLBACK_PATH}"

    def wait(self, state: str, timeout: float, cancel: Cancel | None = None) -> str:
        """Serve requests until the callback arrives; return the authorization code."""
        deadline = time.monotonic() + timeout
        while self._result is None:
            if cancel is not None:
                cancel.raise_if_cancelled()
            if time.monotonic() >= deadline:
                raise PluginError(f"no authorization redirect arrived within {timeout:.0f} s")
            self._server.handle_request()
        got = self._result
        if got.get("state") != state:
            raise PluginError("the authorization redirect carried a wrong state; refused")
        if "error" in got:
            desc = got.get("error_description", "")
            raise PluginError(
                f"the authorization server refused: {got['error']}" + (f": {desc}" if desc else "")
            )
        code = got.get("code", "")
        if not code:
            raise PluginError("the authorization redirect carried no code")
        return code

    def close(self) -> None:
        """Release the port."""
        self._server.server_close()


# -- registration and token requests --------------------------------------------------
def _register(meta: AsMetadata, redirect_uri: str, scopes: Sequence[str]) -> ClientInfo:
    if not meta.registration_endpoint:
        raise PluginError(
            f"the authorization server {meta.issuer} offers no dynamic client registration; "
            "configure a client id for this server"
        )
    answer = post_json(meta.registration_endpoint, registration_body(meta, redirect_uri, scopes))
    if answer.status not in (200, 201):
        raise PluginError(
            f"client registration at {meta.registration_endpoint} failed: {oauth_error(answer)}"
        )
    return parse_registration(answer.body, redirect_uri, scopes)


def _usable_client(
    existing: OAuthState | None, meta: AsMetadata, redirect_uri: str, scopes: Sequence[str]
) -> ClientInfo | None:
    """The stored dynamically registered client, if it still fits this authorization."""
    if existing is None or existing.metadata.issuer != meta.issuer:
        return None
    client = existing.client
    if not client.registered:
        return client
    if client.redirect_uri != redirect_uri:
        return None
    if scopes and not set(scopes) <= set(client.scope.split()):
        return None  # registered for fewer scopes than a step-up needs
    return client


def _token_request(meta: AsMetadata, client: ClientInfo, form: dict[str, str]) -> Any:
    headers = client_auth(client, form)
    answer = post_form(meta.token_endpoint, form, headers=headers)
    if answer.status != 200:
        raise PluginError(f"the token request failed: {oauth_error(answer)}")
    return answer.body


def _new_state(server: str, disc: Discovery, client: ClientInfo) -> OAuthState:
    """The state of a fresh authorization of ``server`` (tokens still to come)."""
    return OAuthState(
        server=server,
        resource=disc.resource,
        resource_indicator=disc.resource_indicator,
        metadata=disc.metadata,
        client=client,
    )


def _port_of(uri: str) -> int:
    try:
        return urlsplit(uri).port or 0
    except ValueError:
        return 0


def authorize(
    server: str,
    server_url: str,
    *,
    open_url: Callable[[str], None],
    scopes: Sequence[str] | None = None,
    challenge: Challenge | None = None,
    client: ClientInfo | None = None,
    timeout: float = AUTHORIZE_TIMEOUT,
    cancel: Cancel | None = None,
    trusted_origins: Sequence[str] = (),
    grant: str = "auto",
    client_metadata_url: str = "",
) -> OAuthState:
    """Run the whole authorization-code flow for ``server``; save and return its state.

    ``scopes`` overrides the choice from the challenge / resource metadata;
    scopes granted before and scopes a refused step-up asked for are added,
    so re-authorising never loses access. ``client`` is a pre-configured
    client (no registration). ``grant`` (``auto``, ``authorization_code``,
    ``client_credentials``): see :func:`~.oauth_client.choose_grant`; the
    client credentials grant needs no browser and ``open_url`` is not called.
    ``client_metadata_url`` is our Client ID Metadata Document: without a
    pre-configured client it is the client id when the AS advertises
    ``client_id_metadata_document_supported``, before dynamic registration
    is tried (the order of the MCP 2025-11-25 spec).
    """
    existing = oauth_store.load(server, server_url)
    disc = discover(server_url, challenge, trusted_origins=trusted_origins)
    wanted = union_scopes(
        scopes if scopes is not None else select_scopes(challenge, disc.prm),
        existing.tokens.scope.split() if existing else (),
        existing.wanted_scopes if existing else (),
    )
    if (
        client is None
        and existing is not None
        and existing.client.grant == GRANT_CLIENT_CREDENTIALS
        and existing.metadata.issuer == disc.metadata.issuer
    ):
        client = existing.client  # re-authorising a machine client: same client, same grant
    if choose_grant(disc.metadata, client, grant) == GRANT_CLIENT_CREDENTIALS:
        assert client is not None  # choose_grant refuses client credentials without a client
        result = _new_state(server, disc, replace(client, grant=GRANT_CLIENT_CREDENTIALS))
        result = result.with_tokens(_client_credentials(result, wanted))
        oauth_store.save(result)
        return result
    if client is not None and client.grant != GRANT_CODE:
        client = replace(client, grant=GRANT_CODE)
    prefer = _port_of(existing.client.redirect_uri) if existing else 0
    listener = LoopbackListener(prefer)
    try:
        redirect_uri = listener.redirect_uri
        if client is None:
            client = _usable_client(existing, disc.metadata, redirect_uri, wanted)
        cimd = disc.metadata.client_id_metadata_document_supported
        if client is None and client_metadata_url and cimd:
            client = metadata_document_client(client_metadata_url, redirect_uri)
        if client is None:
            client = _register(disc.metadata, redirect_uri, wanted)
        pkce, state = make_pkce(), make_state()
        open_url(
            authorization_url(
                disc.metadata.authorization_endpoint,
                client_id=client.client_id,
                redirect_uri=redirect_uri,
                pkce=pkce,
                state=state,
                resource=disc.resource_indicator,
                scopes=wanted,
            )
        )
        code = listener.wait(state, timeout, cancel)
    finally:
        listener.close()
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
        "resource": disc.resource_indicator,
    }
    body = _token_request(disc.metadata, client, form)
    tokens = Tokens.from_response(body, Tokens(scope=" ".join(wanted)))
    result = _new_state(server, disc, client).with_tokens(tokens)
    oauth_store.save(result)
    return result


def _client_credentials(state: OAuthState, scopes: Sequence[str]) -> Tokens:
    """A token by the client credentials grant (RFC 6749 §4.4, MCP SEP-1046)."""
    form = {"grant_type": GRANT_CLIENT_CREDENTIALS, "resource": state.resource_indicator}
    if scopes:
        form["scope"] = " ".join(scopes)
    body = _token_request(state.metadata, state.client, form)
    return Tokens.from_response(body, Tokens(scope=" ".join(scopes)))


def authorize_enterprise(
    server: str,
    server_url: str,
    *,
    id_token: str,
    idp_token_endpoint: str,
    client: ClientInfo,
    idp_client: ClientInfo | None = None,
    challenge: Challenge | None = None,
    scopes: Sequence[str] | None = None,
    trusted_origins: Sequence[str] = (),
) -> OAuthState:
    """Enterprise-managed authorization (SEP-990 "cross-app access"); save and return the state.

    The user's identity provider ID token (``id_token``, from the
    enterprise's SSO login) is exchanged at ``idp_token_endpoint`` for an
    ID-JAG addressed to the MCP server's authorization server (RFC 8693),
    and the ID-JAG is then presented there as a JWT bearer grant (RFC 7523
    §2.1) by ``client``, the client the AS knows us as. No browser, no
    signing on our side: both JWTs are made by the IdP. ``idp_client`` is
    our client at the IdP (``client_id`` only, or with a secret).
    """
    disc = discover(server_url, challenge, trusted_origins=trusted_origins)
    if not disc.metadata.supports_grant(GRANT_JWT_BEARER):
        raise PluginError(
            f"the authorization server {disc.metadata.issuer} does not accept the JWT bearer "
            "grant that enterprise-managed authorization needs"
        )
    wanted = list(scopes) if scopes is not None else select_scopes(challenge, disc.prm)
    form = id_jag_request(
        id_token, audience=disc.metadata.issuer, resource=disc.resource_indicator, scopes=wanted
    )
    headers = client_auth(idp_client, form) if idp_client is not None else {}
    answer = post_form(idp_token_endpoint, form, headers=headers)
    if answer.status != 200:
        raise PluginError(f"the identity provider's token exchange failed: {oauth_error(answer)}")
    assertion = parse_id_jag(answer.body)
    result = _new_state(server, disc, replace(client, grant=GRANT_JWT_BEARER))
    body = _token_request(disc.metadata, result.client, jwt_bearer_request(assertion, wanted))
    result = result.with_tokens(Tokens.from_response(body, Tokens(scope=" ".join(wanted))))
    oauth_store.save(result)
    return result


def exchange_code(state: OAuthState, code: str, verifier: str) -> Tokens:
    """Trade ``code`` for tokens with ``state``'s client (used to show a replayed code fails)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": state.client.redirect_uri,
        "code_verifier": verifier,
        "resource": state.resource_indicator,
    }
    return Tokens.from_response(_token_request(state.metadata, state.client, form))


_refresh_lock = threading.Lock()


def refresh(state: OAuthState) -> OAuthState:
    """New tokens for ``state``; the rotated refresh token is on disk before this returns.

    Raises :class:`RefreshRejected` when the AS refuses the refresh token
    (``invalid_grant``) — only a new authorization helps then.
    """
    with _refresh_lock:  # one refresh at a time: a rotated token is single-use
        # Another session (or thread) may have rotated the token since ``state``
        # was read; its refresh token is the only live one now.
        on_disk = oauth_store.load(state.server, state.resource)
        if on_disk is not None and on_disk.tokens.refresh_token != state.tokens.refresh_token:
            if not on_disk.tokens.expired():
                return on_disk
            state = on_disk
        if not state.tokens.refresh_token and state.client.grant == GRANT_CLIENT_CREDENTIALS:
            # Nothing to refresh: the client simply asks again (no user involved).
            try:
                tokens = _client_credentials(state, state.tokens.scope.split())
            except PluginError as exc:
                raise RefreshRejected(f"a new client credentials token was refused: {exc}") from exc
            new_state = state.with_tokens(tokens)
            oauth_store.save(new_state)
            return new_state
        if not state.tokens.refresh_token:
            raise RefreshRejected(f"no refresh token stored for {state.server!r}")
        form = {
            "grant_type": "refresh_token",
            "refresh_token": state.tokens.refresh_token,
            "resource": state.resource_indicator,
        }
        headers = client_auth(state.client, form)
        answer = post_form(state.metadata.token_endpoint, form, headers=headers)
        if answer.status != 200:
            error = oauth_error(answer)
            if isinstance(answer.body, dict) and answer.body.get("error") in (
                "invalid_grant",
                "invalid_client",
                "unauthorized_client",
            ):
                raise RefreshRejected(f"the refresh token was refused: {error}")
            raise PluginError(f"the token refresh failed: {error}")
        tokens = Tokens.from_response(answer.body, state.tokens)
        new_state = state.with_tokens(tokens)
        oauth_store.save(new_state)  # before the new access token is used anywhere
    return new_state
