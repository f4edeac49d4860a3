"""Client choice and grants: client credentials (SEP-1046), Client ID Metadata Documents,
and enterprise-managed authorization (SEP-990: token exchange, then a JWT bearer grant).

The flows run against a real loopback authorization server
(``oauth_server/stub_as.py``) through our own HTTP client; the "browser"
calls our loopback listener back with the code.
"""

from __future__ import annotations

import base64
import io
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from oauth_server.stub_as import StubAs

from reasonix.cli import mcp_auth
from reasonix.errors import PluginError
from reasonix.plugin.mcp import oauth_flow, oauth_store
from reasonix.plugin.mcp.oauth import OAuthAuth
from reasonix.plugin.mcp.oauth_client import (
    ClientInfo,
    choose_grant,
    id_jag_request,
    jwt_bearer_request,
    metadata_document_client,
    parse_id_jag,
)
from reasonix.plugin.mcp.oauth_meta import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    TOKEN_TYPE_ID_JAG,
    AsMetadata,
    parse_as_metadata,
)

MCP = "https://mcp.example/mcp"
AS = "https://as.example"
CIMD_URL = "https://app.example/oauth/client.json"
SECRET_CLIENT = ClientInfo("machine", "s3cret", "client_secret_basic", registered=False)
# RFC 7523 §2.1's literal (SEP-990 presents the ID-JAG with it): stated, not imported.
JWT_BEARER_URN = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def _meta(grants: tuple[str, ...] = (), cimd: bool = False) -> AsMetadata:
    return AsMetadata(
        AS,
        AS + "/authorize",
        AS + "/token",
        AS + "/register",
        grant_types_supported=grants,
        client_id_metadata_document_supported=cimd,
    )


# -- I/O-free rules ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("grants", "client", "requested", "chosen"),
    [
        ((), SECRET_CLIENT, "auto", GRANT_CODE),  # unpublished: the code grant
        (("authorization_code", "client_credentials"), SECRET_CLIENT, "auto", GRANT_CODE),
        (("client_credentials",), SECRET_CLIENT, "auto", GRANT_CLIENT_CREDENTIALS),
        (("client_credentials",), None, "auto", GRANT_CODE),  # no client: nothing to send
        (("authorization_code", "client_credentials"), SECRET_CLIENT, "client_credentials",
         GRANT_CLIENT_CREDENTIALS),
        (("client_credentials",), SECRET_CLIENT, "authorization_code", GRANT_CODE),
    ],
)  # fmt: skip
def test_choose_grant(
    grants: tuple[str, ...], client: ClientInfo | None, requested: str, chosen: str
) -> None:
    assert choose_grant(_meta(grants), client, requested) == chosen


@pytest.mark.parametrize("client", [None, ClientInfo("public", registered=False)])
def test_client_credentials_need_a_confidential_client(client: ClientInfo | None) -> None:
    with pytest.raises(PluginError, match="client id and secret"):
        choose_grant(_meta(("client_credentials",)), client, "client_credentials")
    with pytest.raises(PluginError, match="unsupported OAuth grant"):
        choose_grant(_meta(), client, "password")


def test_metadata_parsing_keeps_grants_and_cimd_and_round_trips() -> None:
    doc = {
        "issuer": AS,
        "authorization_endpoint": AS + "/authorize",
        "token_endpoint": AS + "/token",
        "grant_types_supported": ["client_credentials"],
        "client_id_metadata_document_supported": True,
    }
    meta = parse_as_metadata(doc, AS)  # no PKCE needed: no code grant offered
    assert meta.grant_types_supported == ("client_credentials",)
    assert meta.client_id_metadata_document_supported
    assert AsMetadata.from_json(meta.to_json()) == meta
    with pytest.raises(PluginError, match="S256"):
        parse_as_metadata({**doc, "grant_types_supported": ["authorization_code"]}, AS)
    info = ClientInfo("c", "s", "client_secret_basic", grant=GRANT_CLIENT_CREDENTIALS)
    assert ClientInfo.from_json(info.to_json()) == info
    assert ClientInfo.from_json({"client_id": "old"}).grant == GRANT_CODE  # files from before


def test_metadata_document_client() -> None:
    client = metadata_document_client(CIMD_URL, "http://127.0.0.1:9/callback")
    assert (client.client_id, client.auth_method, client.registered) == (CIMD_URL, "none", False)
    for bad in ("http://app.example/c.json", "https://app.example/", "https://app.example"):
        with pytest.raises(PluginError, match="https with a path"):
            metadata_document_client(bad, "http://127.0.0.1:9/callback")


# -- flows against a loopback AS (tests/plugin/oauth_server/stub_as.py) -------------
@pytest.fixture
def stub_as(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """``stub_as(as_doc)``: a running loopback AS whose metadata adds ``as_doc``."""
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path))
    running: list[StubAs] = []

    def start(as_doc: dict[str, Any]) -> StubAs:
        running.append(StubAs(as_doc).__enter__())
        return running[-1]

    yield start
    for stub in running:
        stub.__exit__()


def _no_browser(url: str) -> None:
    raise AssertionError(f"the client credentials grant opened a browser: {url}")


def _basic(headers: dict[str, str]) -> bytes:
    auth = next(v for k, v in headers.items() if k.lower() == "authorization")
    return base64.b64decode(auth.removeprefix("Basic "))


def test_client_credentials_flow_and_renewal(stub_as: Any) -> None:
    stub = stub_as({"grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"]})  # fmt: skip
    mcp = stub.mcp_url
    state = oauth_flow.authorize("m", mcp, open_url=_no_browser, client=SECRET_CLIENT)
    form, headers = stub.tokens[0]
    assert form["grant_type"] == "client_credentials" and form["resource"] == mcp
    assert "code" not in form and "client_secret" not in form
    assert _basic(headers) == b"machine:s3cret"
    assert state.client.grant == GRANT_CLIENT_CREDENTIALS and state.tokens.access_token == "tok1"
    assert oauth_store.load("m", mcp) == state
    # No refresh token: an expired token is renewed by asking again, no user involved.
    auth = OAuthAuth("m", mcp)
    assert auth.headers() == {"Authorization": "Bearer tok1"}
    assert auth.on_status(401, {}) is True
    assert stub.tokens[1][0]["grant_type"] == "client_credentials"
    assert auth.headers() == {"Authorization": "Bearer tok2"}


def _browser(seen: list[str]) -> Any:
    def visit(url: str) -> None:
        seen.append(url)
        q = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        back = q["redirect_uri"] + "?" + urlencode({"code": "c0de", "state": q["state"]})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        threading.Thread(target=lambda: opener.open(back, timeout=10).read(), daemon=True).start()

    return visit


def test_cimd_url_is_the_client_id_when_the_as_supports_it(stub_as: Any) -> None:
    stub = stub_as({"client_id_metadata_document_supported": True})
    seen: list[str] = []
    state = oauth_flow.authorize(
        "w", stub.mcp_url, open_url=_browser(seen), client_metadata_url=CIMD_URL, timeout=10
    )
    assert parse_qs(urlsplit(seen[0]).query)["client_id"] == [CIMD_URL]
    assert stub.registrations == []  # no dynamic registration
    assert stub.tokens[0][0]["client_id"] == CIMD_URL
    assert state.client.client_id == CIMD_URL and not state.client.registered


def test_without_cimd_support_the_client_registers(stub_as: Any) -> None:
    stub = stub_as({})
    seen: list[str] = []
    state = oauth_flow.authorize(
        "w", stub.mcp_url, open_url=_browser(seen), client_metadata_url=CIMD_URL, timeout=10
    )
    assert len(stub.registrations) == 1 and state.client.client_id == "dcr-client"


def test_id_jag_and_jwt_bearer_forms() -> None:
    form = id_jag_request("idt", audience=AS, resource=MCP, scopes=["a", "b"])
    assert form == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "subject_token": "idt",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "audience": AS,
        "resource": MCP,
        "scope": "a b",
    }
    with pytest.raises(PluginError, match="no identity provider ID token"):
        id_jag_request("", audience=AS, resource=MCP)
    assert jwt_bearer_request("jag") == {"grant_type": JWT_BEARER_URN, "assertion": "jag"}
    assert parse_id_jag({"access_token": "j", "issued_token_type": TOKEN_TYPE_ID_JAG}) == "j"
    with pytest.raises(PluginError, match="not an ID-JAG"):
        parse_id_jag({"access_token": "j", "issued_token_type": "urn:x:access_token"})
    with pytest.raises(PluginError, match="no token"):
        parse_id_jag({"error": "invalid_grant"})


def test_enterprise_flow_exchanges_then_presents_the_id_jag(stub_as: Any) -> None:
    stub = stub_as({"grant_types_supported": [JWT_BEARER_URN]})
    state = oauth_flow.authorize_enterprise(
        "e",
        stub.mcp_url,
        id_token="idt",
        idp_token_endpoint=stub.idp_token,
        client=SECRET_CLIENT,
        idp_client=ClientInfo("rx-at-idp", registered=False),
    )
    (exchange,) = stub.idp
    assert exchange["subject_token"] == "idt" and exchange["audience"] == stub.base
    assert exchange["resource"] == stub.mcp_url and exchange["client_id"] == "rx-at-idp"
    ((form, headers),) = stub.tokens
    assert form["grant_type"] == JWT_BEARER_URN and form["assertion"] == "id-jag"
    assert _basic(headers) == b"machine:s3cret"
    assert state.client.grant == JWT_BEARER_URN and oauth_store.load("e", stub.mcp_url) == state


def test_enterprise_flow_needs_an_as_that_takes_jwt_bearer(stub_as: Any) -> None:
    stub = stub_as({})
    with pytest.raises(PluginError, match="JWT bearer"):
        oauth_flow.authorize_enterprise(
            "e", stub.mcp_url, id_token="idt", idp_token_endpoint=stub.idp_token,
            client=SECRET_CLIENT,
        )  # fmt: skip
    assert stub.idp == []  # the ID token never left for an AS that cannot use it


def test_cli_enterprise_auth_reads_the_id_token_file(tmp_path: Path, stub_as: Any) -> None:
    stub = stub_as({"grant_types_supported": [JWT_BEARER_URN]})
    (tmp_path / "reasonix.toml").write_text(
        f'[[mcp.servers]]\nname = "e"\ntype = "http"\nurl = "{stub.mcp_url}"\n',
        encoding="utf-8",
    )
    (tmp_path / "id.jwt").write_text("idt\n", encoding="utf-8")
    err = io.StringIO()
    # Without the AS client and the IdP endpoint the flow cannot run.
    assert mcp_auth.auth("e", tmp_path, id_token_file=str(tmp_path / "id.jwt"), err=err) == 1
    assert "--idp-token-endpoint" in err.getvalue() and not stub.idp and not stub.tokens
    code = mcp_auth.auth(
        "e",
        tmp_path,
        client_id="machine",
        client_secret="s3cret",
        id_token_file=str(tmp_path / "id.jwt"),
        idp_token_endpoint=stub.idp_token,
        idp_client_id="rx-at-idp",
        out=io.StringIO(),
        err=err,
    )
    assert code == 0, err.getvalue()
    (exchange,) = stub.idp  # the file's token (stripped) went to the IdP, from its client
    assert exchange["subject_token"] == "idt" and exchange["client_id"] == "rx-at-idp"
    ((form, headers),) = stub.tokens
    assert form["grant_type"] == JWT_BEARER_URN and _basic(headers) == b"machine:s3cret"
    assert oauth_store.load("e", stub.mcp_url) is not None
