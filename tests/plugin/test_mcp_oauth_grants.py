"""Client choice and grants: client credentials (SEP-1046), Client ID Metadata Documents,
and enterprise-managed authorization (SEP-990: token exchange, then a JWT bearer grant).

The authorization server is faked at the ``oauth_flow`` seam (``get_json``,
``post_form``, ``post_json``); the only socket is our own loopback listener,
which the fake "browser" calls with the code.
"""

from __future__ import annotations

import base64
import io
import threading
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

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
from reasonix.plugin.mcp.oauth_http import HttpAnswer
from reasonix.plugin.mcp.oauth_meta import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    GRANT_JWT_BEARER,
    TOKEN_TYPE_ID_JAG,
    AsMetadata,
    parse_as_metadata,
)

MCP = "https://mcp.example/mcp"
AS = "https://as.example"
CIMD_URL = "https://app.example/oauth/client.json"
IDP_TOKEN = "https://idp.example/token"
SECRET_CLIENT = ClientInfo("machine", "s3cret", "client_secret_basic", registered=False)


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


# -- flows against a faked AS --------------------------------------------------------
class FakeAs:
    """Records token/registration requests; answers with numbered tokens."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = {"issuer": AS, "authorization_endpoint": AS + "/authorize",
                    "token_endpoint": AS + "/token", "registration_endpoint": AS + "/register",
                    "code_challenge_methods_supported": ["S256"], **doc}  # fmt: skip
        self.tokens: list[tuple[dict[str, str], dict[str, str]]] = []
        self.registrations: list[Any] = []
        self.idp: list[dict[str, str]] = []

    def get_json(self, url: str, **_: Any) -> HttpAnswer:
        if url == "https://mcp.example/.well-known/oauth-protected-resource/mcp":
            return HttpAnswer(200, {"resource": MCP, "authorization_servers": [AS]}, "")
        if url == AS + "/.well-known/oauth-authorization-server":
            return HttpAnswer(200, self.doc, "")
        return HttpAnswer(404, None, "")

    def post_form(self, url: str, form: dict[str, str], *, headers: Any = None) -> HttpAnswer:
        if url == IDP_TOKEN:
            self.idp.append(dict(form))
            return HttpAnswer(200, {"access_token": "id-jag", "token_type": "N_A",
                                    "issued_token_type": TOKEN_TYPE_ID_JAG}, "")  # fmt: skip
        self.tokens.append((dict(form), dict(headers or {})))
        n = len(self.tokens)
        return HttpAnswer(200, {"access_token": f"tok{n}", "token_type": "Bearer",
                                "expires_in": 3600}, "")  # fmt: skip

    def post_json(self, url: str, doc: Any) -> HttpAnswer:
        self.registrations.append(doc)
        return HttpAnswer(201, {"client_id": "dcr-client"}, "")


@pytest.fixture
def fake_as(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path))

    def install(doc: dict[str, Any]) -> FakeAs:
        fake = FakeAs(doc)
        monkeypatch.setattr(oauth_flow, "get_json", fake.get_json)
        monkeypatch.setattr(oauth_flow, "post_form", fake.post_form)
        monkeypatch.setattr(oauth_flow, "post_json", fake.post_json)
        return fake

    return install


def _no_browser(url: str) -> None:
    raise AssertionError(f"the client credentials grant opened a browser: {url}")


def test_client_credentials_flow_and_renewal(fake_as: Any) -> None:
    fake = fake_as({"grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"]})  # fmt: skip
    state = oauth_flow.authorize("m", MCP, open_url=_no_browser, client=SECRET_CLIENT)
    form, headers = fake.tokens[0]
    assert form["grant_type"] == "client_credentials" and form["resource"] == MCP
    assert "code" not in form and "client_secret" not in form
    assert base64.b64decode(headers["Authorization"][6:]) == b"machine:s3cret"
    assert state.client.grant == GRANT_CLIENT_CREDENTIALS and state.tokens.access_token == "tok1"
    assert oauth_store.load("m", MCP) == state
    # No refresh token: an expired token is renewed by asking again, no user involved.
    auth = OAuthAuth("m", MCP)
    assert auth.headers() == {"Authorization": "Bearer tok1"}
    assert auth.on_status(401, {}) is True
    assert fake.tokens[1][0]["grant_type"] == "client_credentials"
    assert auth.headers() == {"Authorization": "Bearer tok2"}


def _browser(seen: list[str]) -> Any:
    def visit(url: str) -> None:
        seen.append(url)
        q = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        back = q["redirect_uri"] + "?" + urlencode({"code": "c0de", "state": q["state"]})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        threading.Thread(target=lambda: opener.open(back, timeout=10).read(), daemon=True).start()

    return visit


def test_cimd_url_is_the_client_id_when_the_as_supports_it(fake_as: Any) -> None:
    fake = fake_as({"client_id_metadata_document_supported": True})
    seen: list[str] = []
    state = oauth_flow.authorize(
        "w", MCP, open_url=_browser(seen), client_metadata_url=CIMD_URL, timeout=10
    )
    assert parse_qs(urlsplit(seen[0]).query)["client_id"] == [CIMD_URL]
    assert fake.registrations == []  # no dynamic registration
    assert fake.tokens[0][0]["client_id"] == CIMD_URL
    assert state.client.client_id == CIMD_URL and not state.client.registered


def test_without_cimd_support_the_client_registers(fake_as: Any) -> None:
    fake = fake_as({})
    seen: list[str] = []
    state = oauth_flow.authorize(
        "w", MCP, open_url=_browser(seen), client_metadata_url=CIMD_URL, timeout=10
    )
    assert len(fake.registrations) == 1 and state.client.client_id == "dcr-client"


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
    assert jwt_bearer_request("jag") == {"grant_type": GRANT_JWT_BEARER, "assertion": "jag"}
    assert parse_id_jag({"access_token": "j", "issued_token_type": TOKEN_TYPE_ID_JAG}) == "j"
    with pytest.raises(PluginError, match="not an ID-JAG"):
        parse_id_jag({"access_token": "j", "issued_token_type": "urn:x:access_token"})
    with pytest.raises(PluginError, match="no token"):
        parse_id_jag({"error": "invalid_grant"})


def test_enterprise_flow_exchanges_then_presents_the_id_jag(fake_as: Any) -> None:
    fake = fake_as({"grant_types_supported": [GRANT_JWT_BEARER]})
    state = oauth_flow.authorize_enterprise(
        "e",
        MCP,
        id_token="idt",
        idp_token_endpoint=IDP_TOKEN,
        client=SECRET_CLIENT,
        idp_client=ClientInfo("rx-at-idp", registered=False),
    )
    (exchange,) = fake.idp
    assert exchange["subject_token"] == "idt" and exchange["audience"] == AS
    assert exchange["resource"] == MCP and exchange["client_id"] == "rx-at-idp"
    ((form, headers),) = fake.tokens
    assert form["grant_type"] == GRANT_JWT_BEARER and form["assertion"] == "id-jag"
    assert base64.b64decode(headers["Authorization"][6:]) == b"machine:s3cret"
    assert state.client.grant == GRANT_JWT_BEARER and oauth_store.load("e", MCP) == state


def test_enterprise_flow_needs_an_as_that_takes_jwt_bearer(fake_as: Any) -> None:
    fake = fake_as({})
    with pytest.raises(PluginError, match="JWT bearer"):
        oauth_flow.authorize_enterprise(
            "e", MCP, id_token="idt", idp_token_endpoint=IDP_TOKEN, client=SECRET_CLIENT
        )
    assert fake.idp == []  # the ID token never left for an AS that cannot use it


def test_cli_enterprise_auth_reads_the_id_token_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "home"))
    (tmp_path / "reasonix.toml").write_text(
        f'[[mcp.servers]]\nname = "e"\ntype = "http"\nurl = "{MCP}"\n', encoding="utf-8"
    )
    (tmp_path / "id.jwt").write_text("idt\n", encoding="utf-8")
    monkeypatch.setattr(mcp_auth, "probe", lambda url: None)
    seen: dict[str, Any] = {}

    def fake_enterprise(server: str, url: str, **kw: Any) -> oauth_store.OAuthState:
        seen.update(kw, server=server, url=url)
        return oauth_store.OAuthState(server, url, url, _meta(), kw["client"])

    monkeypatch.setattr(mcp_auth, "authorize_enterprise", fake_enterprise)
    err = io.StringIO()
    # Without the AS client and the IdP endpoint the flow cannot run.
    assert mcp_auth.auth("e", tmp_path, id_token_file=str(tmp_path / "id.jwt"), err=err) == 1
    assert "--idp-token-endpoint" in err.getvalue() and not seen
    code = mcp_auth.auth(
        "e",
        tmp_path,
        client_id="machine",
        client_secret="s3cret",
        id_token_file=str(tmp_path / "id.jwt"),
        idp_token_endpoint=IDP_TOKEN,
        idp_client_id="rx-at-idp",
        out=io.StringIO(),
        err=err,
    )
    assert code == 0, err.getvalue()
    assert seen["id_token"] == "idt" and seen["idp_token_endpoint"] == IDP_TOKEN
    assert seen["idp_client"].client_id == "rx-at-idp"
    assert seen["client"].auth_method == "client_secret_basic"
