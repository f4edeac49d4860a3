"""The 2025-03-26 authorization flow: a server without Protected Resource Metadata.

Discovery runs against a loopback server (``oauth_server/stub_as.py``) through
our own HTTP client: the server is its own authorization server at the origin
root, its metadata may name an issuer with a path on that origin, and without
any metadata the revision's default endpoints are used.
"""

from __future__ import annotations

from typing import Any

import pytest
from oauth_server.stub_as import StubAs

from reasonix.errors import PluginError
from reasonix.plugin.mcp import oauth_flow
from reasonix.plugin.mcp.oauth_meta import legacy_default_metadata, parse_as_metadata

ROOT = "https://mcp.example"
LEGACY_DOC = {
    "issuer": "https://mcp.example/oauth",
    "authorization_endpoint": "https://mcp.example/oauth/authorize",
    "token_endpoint": "https://mcp.example/oauth/token",
    "registration_endpoint": "https://mcp.example/oauth/register",
    "code_challenge_methods_supported": ["S256"],
}


def test_legacy_metadata_may_name_an_issuer_on_the_same_origin() -> None:
    meta = parse_as_metadata(LEGACY_DOC, ROOT, legacy=True)
    assert meta.issuer == "https://mcp.example/oauth"
    assert meta.registration_endpoint == "https://mcp.example/oauth/register"


def test_outside_the_legacy_flow_the_issuer_must_match_exactly() -> None:
    with pytest.raises(PluginError, match="issuer"):
        parse_as_metadata(LEGACY_DOC, ROOT)


@pytest.mark.parametrize("issuer", ["https://evil.example/oauth", "http://mcp.example/oauth", 7])
def test_legacy_metadata_from_another_origin_is_refused(issuer: object) -> None:
    with pytest.raises(PluginError, match="issuer"):
        parse_as_metadata({**LEGACY_DOC, "issuer": issuer}, ROOT, legacy=True)


def test_legacy_default_endpoints_sit_at_the_origin_root() -> None:
    meta = legacy_default_metadata("https://mcp.example:8443/v1/mcp")
    assert meta.issuer == "https://mcp.example:8443"
    assert meta.authorization_endpoint == "https://mcp.example:8443/authorize"
    assert meta.token_endpoint == "https://mcp.example:8443/token"
    assert meta.registration_endpoint == "https://mcp.example:8443/register"


def _legacy_doc(base: str) -> dict[str, Any]:
    return {key: value.replace(ROOT, base) if isinstance(value, str) else value
            for key, value in LEGACY_DOC.items()}  # fmt: skip


def test_discover_uses_root_metadata_without_prm() -> None:
    with StubAs(prm=False) as stub:
        stub.docs["/.well-known/oauth-authorization-server"] = _legacy_doc(stub.base)
        disc = oauth_flow.discover(stub.mcp_url)
    assert disc.prm is None
    assert disc.metadata.token_endpoint == stub.base + "/oauth/token"
    assert disc.resource_indicator == stub.mcp_url
    assert stub.asked[:2] == [
        stub.base + "/.well-known/oauth-protected-resource/mcp",
        stub.base + "/.well-known/oauth-protected-resource",
    ]


def test_discover_falls_back_to_default_endpoints() -> None:
    with StubAs(prm=False) as stub:
        disc = oauth_flow.discover(stub.mcp_url)
    assert disc.metadata == legacy_default_metadata(stub.base)
    assert stub.asked  # it did ask before falling back


def test_no_fallback_when_prm_names_an_as_without_metadata() -> None:
    with StubAs(prm=False) as stub, StubAs(prm=False) as other:
        stub.docs["/.well-known/oauth-protected-resource/mcp"] = {
            "resource": stub.mcp_url,
            "authorization_servers": [other.base],  # an AS that publishes no metadata
        }
        with pytest.raises(PluginError, match="no authorization server metadata"):
            oauth_flow.discover(stub.mcp_url)
    assert any(url.startswith(other.base + "/.well-known/") for url in other.asked)
