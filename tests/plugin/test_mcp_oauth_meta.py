"""I/O-free OAuth rules: challenges, discovery URLs, metadata checks, PKCE, URLs, client auth."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlsplit

import pytest

from reasonix.errors import PluginError
from reasonix.plugin.mcp.oauth_client import (
    ClientInfo,
    client_auth,
    parse_registration,
    registration_body,
)
from reasonix.plugin.mcp.oauth_meta import (
    AsMetadata,
    Challenge,
    Pkce,
    ResourceMetadata,
    as_metadata_urls,
    authorization_url,
    canonical_resource,
    challenge_from_headers,
    make_pkce,
    make_state,
    parse_as_metadata,
    parse_resource_metadata,
    parse_www_authenticate,
    resource_covers,
    resource_metadata_urls,
    s256,
    select_scopes,
    union_scopes,
)
from reasonix.plugin.mcp.oauth_store import Tokens

AS_DOC = {
    "issuer": "https://as.example/tenant",
    "authorization_endpoint": "https://as.example/tenant/authorize",
    "token_endpoint": "https://as.example/tenant/token",
    "registration_endpoint": "https://as.example/tenant/register",
    "code_challenge_methods_supported": ["S256"],
    "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
}


# -- WWW-Authenticate -------------------------------------------------------------
@pytest.mark.parametrize(
    ("header", "params"),
    [
        ("Bearer", {}),
        ('Bearer realm="mcp"', {"realm": "mcp"}),
        (
            'Bearer resource_metadata="https://s.example/.well-known/oauth-protected-resource/mcp"',
            {"resource_metadata": "https://s.example/.well-known/oauth-protected-resource/mcp"},
        ),
        (
            'Bearer error="insufficient_scope", scope="files:read files:write", '
            'resource_metadata="https://s/x"',
            {
                "error": "insufficient_scope",
                "scope": "files:read files:write",
                "resource_metadata": "https://s/x",
            },
        ),
        ("bearer ERROR=invalid_token", {"error": "invalid_token"}),
        ('Bearer error_description="say \\"hi\\", ok"', {"error_description": 'say "hi", ok'}),
        ('Basic realm="x", Bearer scope="a b", error="e"', {"scope": "a b", "error": "e"}),
        ('Bearer scope="a", Basic realm="x"', {"scope": "a"}),
        ('Bearer, Basic realm="x"', {}),
        ('Basic abc==, Bearer error="e"', {"error": "e"}),
        ('Bearer   scope = "a" ,  error=x', {"scope": "a", "error": "x"}),
    ],
)
def test_parse_www_authenticate(header: str, params: dict[str, str]) -> None:
    got = parse_www_authenticate(header)
    assert got is not None
    assert dict(got.params) == params


@pytest.mark.parametrize("header", [None, "", 'Basic realm="x"', "Negotiate abc=="])
def test_no_bearer_challenge(header: str | None) -> None:
    assert parse_www_authenticate(header) is None


def test_challenge_properties_and_header_lookup() -> None:
    got = challenge_from_headers(
        {"Content-Type": "x", "www-authenticate": 'Bearer error="insufficient_scope", scope="a b"'}
    )
    assert got is not None
    assert got.error == "insufficient_scope"
    assert got.scopes == ["a", "b"]
    assert got.resource_metadata is None
    assert challenge_from_headers({}) is None


# -- resource identifiers and discovery URLs ------------------------------------------
@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://MCP.Example.com/mcp", "https://mcp.example.com/mcp"),
        ("HTTPS://mcp.example.com/", "https://mcp.example.com"),
        ("https://mcp.example.com:443/Mcp#frag", "https://mcp.example.com/Mcp"),
        ("http://127.0.0.1:8080/mcp/", "http://127.0.0.1:8080/mcp/"),
        ("http://localhost:80/a?x=1", "http://localhost/a?x=1"),
        ("http://[::1]:9000/mcp", "http://[::1]:9000/mcp"),
    ],
)
def test_canonical_resource(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


def test_canonical_resource_refuses_non_http() -> None:
    with pytest.raises(PluginError):
        canonical_resource("ftp://x/y")


def test_resource_metadata_urls_order() -> None:
    ch = Challenge({"resource_metadata": "https://s.example/custom/prm"})
    assert resource_metadata_urls("https://s.example/public/mcp", ch) == [
        "https://s.example/custom/prm",
        "https://s.example/.well-known/oauth-protected-resource/public/mcp",
        "https://s.example/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://s.example/") == [
        "https://s.example/.well-known/oauth-protected-resource"
    ]


@pytest.mark.parametrize(
    ("issuer", "urls"),
    [
        (
            "https://auth.example.com",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/tenant1",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/tenant1/",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ],
        ),
    ],
)
def test_as_metadata_urls(issuer: str, urls: list[str]) -> None:
    assert as_metadata_urls(issuer) == urls


# -- metadata documents -----------------------------------------------------------------
def test_parse_resource_metadata() -> None:
    doc = {
        "resource": "https://s.example/mcp",
        "authorization_servers": ["https://as.example/tenant"],
        "scopes_supported": ["read", "write"],
    }
    got = parse_resource_metadata(doc, "https://S.example/mcp")
    assert got == ResourceMetadata(
        "https://s.example/mcp", ("https://as.example/tenant",), ("read", "write")
    )


@pytest.mark.parametrize(
    ("resource", "server", "ok"),
    [
        ("https://s.example/mcp", "https://s.example/mcp", True),
        ("https://s.example", "https://s.example/mcp", True),  # the server names its root
        ("https://s.example/", "https://s.example/mcp", True),
        ("https://s.example/mc", "https://s.example/mcp", False),  # not a path prefix
        ("https://s.example/other", "https://s.example/mcp", False),
        ("https://evil.example/mcp", "https://s.example/mcp", False),
        ("http://s.example/mcp", "https://s.example/mcp", False),
    ],
)
def test_resource_covers(resource: str, server: str, ok: bool) -> None:
    assert resource_covers(resource, server) is ok


def test_resource_metadata_for_another_resource_is_refused() -> None:
    doc = {"resource": "https://evil.example/mcp", "authorization_servers": ["https://as"]}
    with pytest.raises(PluginError, match="does not cover"):
        parse_resource_metadata(doc, "https://s.example/mcp")
    with pytest.raises(PluginError, match="authorization_servers"):
        parse_resource_metadata({"resource": "https://s.example/mcp"}, "https://s.example/mcp")


def test_parse_as_metadata() -> None:
    meta = parse_as_metadata(AS_DOC, "https://as.example/tenant")
    assert meta.token_endpoint == "https://as.example/tenant/token"
    assert meta.token_endpoint_auth_methods == ("client_secret_basic", "none")
    # A trailing slash on either side is tolerated.
    assert parse_as_metadata({**AS_DOC, "issuer": "https://as.example/tenant/"}, AS_DOC["issuer"])


def test_as_metadata_issuer_must_match() -> None:
    with pytest.raises(PluginError, match="does not match"):
        parse_as_metadata({**AS_DOC, "issuer": "https://evil.example"}, "https://as.example/tenant")


def test_as_metadata_must_offer_s256() -> None:
    doc = {k: v for k, v in AS_DOC.items() if k != "code_challenge_methods_supported"}
    with pytest.raises(PluginError, match="S256"):
        parse_as_metadata(doc, AS_DOC["issuer"])
    with pytest.raises(PluginError, match="S256"):
        parse_as_metadata(
            {**AS_DOC, "code_challenge_methods_supported": ["plain"]}, AS_DOC["issuer"]
        )


def test_scope_selection() -> None:
    prm = ResourceMetadata("https://s", ("https://as",), ("read", "write"))
    assert select_scopes(Challenge({"scope": "read"}), prm) == ["read"]
    assert select_scopes(Challenge({}), prm) == ["read", "write"]
    assert select_scopes(None, None) == []
    assert union_scopes(["read"], ["read", "write"], ["admin"]) == ["read", "write", "admin"]


# -- PKCE, state, the authorization URL -----------------------------------------------------
def test_s256_matches_rfc7636_appendix_b() -> None:
    assert s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == (
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


@pytest.mark.parametrize("verifier", ["short", "x" * 129, "a" * 42 + "!", "é" * 50])
def test_s256_refuses_bad_verifiers(verifier: str) -> None:
    with pytest.raises(ValueError):
        s256(verifier)


def test_make_pkce_and_state_are_fresh_and_valid() -> None:
    a, b = make_pkce(), make_pkce()
    assert a != b
    assert 43 <= len(a.verifier) <= 128
    assert s256(a.verifier) == a.challenge
    assert make_state() != make_state()
    assert len(make_state()) >= 32


def test_authorization_url() -> None:
    url = authorization_url(
        "https://as.example/authorize?tenant=t1",
        client_id="cid",
        redirect_uri="http://127.0.0.1:5555/callback",
        pkce=Pkce("v" * 43, "CHAL"),
        state="st",
        resource="https://s.example/mcp",
        scopes=["read", "write"],
    )
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "as.example", "/authorize")
    q = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert q == {
        "tenant": "t1",
        "response_type": "code",
        "client_id": "cid",
        "redirect_uri": "http://127.0.0.1:5555/callback",
        "code_challenge": "CHAL",
        "code_challenge_method": "S256",
        "state": "st",
        "resource": "https://s.example/mcp",
        "scope": "read write",
    }
    assert "%20" in parts.query  # scopes space-separated, percent-encoded
    no_scope = authorization_url(
        "https://as/a",
        client_id="c",
        redirect_uri="r",
        pkce=Pkce("v", "c"),
        state="s",
        resource="x",
    )
    assert "scope=" not in no_scope


# -- registration and client authentication ---------------------------------------------------
def _meta(methods: tuple[str, ...]) -> AsMetadata:
    return AsMetadata("https://as", "https://as/a", "https://as/t", "https://as/r", (), methods)


@pytest.mark.parametrize(
    ("methods", "chosen"),
    [
        ((), "none"),
        (("none", "client_secret_basic"), "none"),
        (("client_secret_post", "client_secret_basic"), "client_secret_basic"),
        (("client_secret_post",), "client_secret_post"),
    ],
)
def test_registration_prefers_public_clients(methods: tuple[str, ...], chosen: str) -> None:
    body = registration_body(_meta(methods), "http://127.0.0.1:1/callback", ["read"])
    assert body["token_endpoint_auth_method"] == chosen
    assert body["redirect_uris"] == ["http://127.0.0.1:1/callback"]
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["scope"] == "read"


def test_parse_registration_follows_the_as() -> None:
    got = parse_registration(
        {
            "client_id": "c1",
            "client_secret": "s e/c",
            "token_endpoint_auth_method": "client_secret_basic",
        },
        "http://127.0.0.1:1/callback",
        ["read"],
    )
    assert (got.auth_method, got.client_secret, got.scope) == (
        "client_secret_basic",
        "s e/c",
        "read",
    )
    assert parse_registration({"client_id": "c2"}, "r", []).auth_method == "none"
    assert parse_registration({"client_id": "c3", "client_secret": "x"}, "r", []).auth_method == (
        "client_secret_basic"
    )
    with pytest.raises(PluginError):
        parse_registration(
            {"client_id": "c", "token_endpoint_auth_method": "client_secret_post"}, "r", []
        )
    with pytest.raises(PluginError):
        parse_registration(
            {"client_id": "c", "token_endpoint_auth_method": "private_key_jwt"}, "r", []
        )
    with pytest.raises(PluginError):
        parse_registration({}, "r", [])


def test_client_auth_methods() -> None:
    form: dict[str, str] = {}
    assert client_auth(ClientInfo("pub"), form) == {}
    assert form == {"client_id": "pub"}
    form = {}
    headers = client_auth(ClientInfo("a:b", "p@ss word", "client_secret_basic"), form)
    raw = base64.b64decode(headers["Authorization"].removeprefix("Basic ")).decode()
    assert raw == "a%3Ab:p%40ss%20word"  # RFC 6749 §2.3.1: form-encode, then base64
    assert "client_secret" not in form
    form = {}
    assert client_auth(ClientInfo("c", "sec", "client_secret_post"), form) == {}
    assert form == {"client_id": "c", "client_secret": "sec"}


def test_client_info_round_trip() -> None:
    info = ClientInfo("c", "s", "client_secret_basic", "http://127.0.0.1:9/callback", "read", False)
    assert ClientInfo.from_json(info.to_json()) == info


# -- token answers --------------------------------------------------------------------------
def test_tokens_from_response() -> None:
    t = Tokens.from_response(
        {"access_token": "a", "token_type": "bearer", "expires_in": 100, "refresh_token": "r"},
        now=1000,
    )
    assert (t.access_token, t.refresh_token, t.expires_at) == ("a", "r", 1075.0)
    assert not t.expired(now=1074)
    assert t.expired(now=1075)  # a quarter of the lifetime early
    long = Tokens.from_response({"access_token": "a", "expires_in": 3600}, now=0)
    assert long.expires_at == 3570.0  # at most 30 s early
    # No rotation in a refresh answer: the old refresh token and scope stay.
    t2 = Tokens.from_response(
        {"access_token": "b", "token_type": "Bearer"}, Tokens(refresh_token="r", scope="x")
    )
    assert (t2.refresh_token, t2.scope, t2.expires_at) == ("r", "x", None)
    assert not t2.expired()
    assert Tokens.from_response({"access_token": "a", "expires_in": "40"}, now=0).expires_at == 30
    with pytest.raises(PluginError):
        Tokens.from_response({"access_token": "a", "token_type": "mac"})
    with pytest.raises(PluginError):
        Tokens.from_response({"error": "invalid_grant"})
