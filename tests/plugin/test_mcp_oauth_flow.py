"""The OAuth flow against a real authorization + resource server built on the ``mcp`` SDK.

The "browser" is urllib on a thread: the AS auto-approves and redirects to
our loopback listener. The MCP calls go through the real streamable HTTP
transport with :class:`OAuthAuth` in its auth seam.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from oauth_server.harness import Browser, OAuthServer, running

from reasonix.cancel import Cancel
from reasonix.config.model import McpServerConfig
from reasonix.errors import PluginError
from reasonix.plugin.mcp import oauth_store
from reasonix.plugin.mcp.client import McpClient
from reasonix.plugin.mcp.connect import ConnectOptions, open_client
from reasonix.plugin.mcp.oauth import OAuthAuth, auth_for
from reasonix.plugin.mcp.oauth_client import client_auth
from reasonix.plugin.mcp.oauth_flow import authorize, exchange_code, probe, refresh
from reasonix.plugin.mcp.oauth_http import post_form

pytestmark = pytest.mark.interop

NAME = "notes"


@pytest.fixture(scope="module")
def public() -> Iterator[OAuthServer]:
    """An AS that advertises public clients, with a long token lifetime."""
    with running("--public") as srv:
        yield srv


@pytest.fixture(scope="module")
def confidential() -> Iterator[OAuthServer]:
    """An AS that only offers client secrets."""
    with running() as srv:
        yield srv


def _connect(url: str, auth: OAuthAuth | None) -> McpClient:
    server = McpServerConfig(name=NAME, type="http", url=url)
    return open_client(server, ConnectOptions(auth=auth, era="handshake"), Cancel.with_timeout(20))


def _authorize(srv: OAuthServer, browser: Browser, **kw: object) -> oauth_store.OAuthState:
    challenge = probe(srv.mcp_url)
    state = authorize(NAME, srv.mcp_url, open_url=browser, challenge=challenge, timeout=20, **kw)  # type: ignore[arg-type]
    browser.join()
    return state


def _file() -> dict[str, object]:
    return dict(json.loads(oauth_store.state_path(NAME).read_text()))


def test_full_flow_with_a_public_client(public: OAuthServer, tmp_path: Path) -> None:
    browser = Browser()
    state = _authorize(public, browser)
    # What the AS was asked for (MCP-4): S256, a resource indicator, a loopback redirect.
    q = browser.query()
    assert q["code_challenge_method"] == "S256"
    assert len(q["code_challenge"]) == 43
    assert q["resource"] == public.mcp_url
    assert q["redirect_uri"].startswith("http://127.0.0.1:")
    assert q["redirect_uri"].endswith("/callback")
    assert len(q["state"]) >= 32
    assert q["scope"] == "read write"  # no scope in the challenge: all scopes_supported
    assert browser.statuses == [200]  # our listener thanked the browser
    assert state.client.auth_method == "none"
    assert not state.client.client_secret
    assert state.tokens.scope == "read write"

    # The token file: 0600 in a 0700 directory under the home, never in a workspace.
    path = oauth_store.state_path(NAME)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.is_relative_to(Path(os.environ["REASONIX_HOME"]))
    assert not path.resolve().is_relative_to(Path.cwd().resolve())
    assert _file()["resource"] == public.mcp_url

    # A real MCP session authenticates with it.
    auth = auth_for(McpServerConfig(name=NAME, type="http", url=public.mcp_url))
    assert auth is not None
    client = _connect(public.mcp_url, auth)
    try:
        tools = client.request("tools/list")
        assert {t["name"] for t in tools["tools"]} == {"whoami", "write_note"}
    finally:
        client.close()
    seen = [e for e in public.log() if e["method"] == "tools/list"]
    assert seen and seen[-1]["authorization"] == f"Bearer {state.tokens.access_token}"


def test_replayed_code_is_rejected(public: OAuthServer) -> None:
    browser = Browser()
    state = _authorize(public, browser)
    landed = browser.landed[-1]
    code = dict(p.split("=", 1) for p in landed.split("?", 1)[1].split("&"))["code"]
    with pytest.raises(PluginError, match="invalid_grant"):
        exchange_code(state, code, "v" * 64)


def test_confidential_client_refresh_rotates_and_persists_first(confidential: OAuthServer) -> None:
    state = _authorize(confidential, Browser())
    assert state.client.auth_method == "client_secret_basic"  # the AS offers no public clients
    assert state.client.client_secret
    # The access token's time is up (as the clock would have it an hour later).
    oauth_store.save(replace(state, tokens=replace(state.tokens, expires_at=time.time() - 1)))
    before = _file()["tokens"]
    auth = OAuthAuth(NAME, confidential.mcp_url)
    header = auth.header()  # expired: refresh first
    after = _file()["tokens"]
    assert isinstance(before, dict) and isinstance(after, dict)
    assert after["refresh_token"] != before["refresh_token"]  # rotated, and on disk
    assert header == f"Bearer {after['access_token']}"  # the token handed out is the saved one
    # The old refresh token is dead at the AS: keeping it would have lost the session.
    stale = replace(state, tokens=replace(state.tokens, refresh_token=str(before["refresh_token"])))
    # Another session holding the stale state adopts the rotated tokens from disk.
    adopted = refresh(stale)
    assert adopted.tokens.refresh_token == after["refresh_token"]
    assert _file()["tokens"] == after  # no second refresh was spent
    oauth_store.delete(NAME)
    with pytest.raises(PluginError, match="refused: invalid_grant"):
        refresh(stale)


def test_a_401_refreshes_and_retries(confidential: OAuthServer) -> None:
    state = _authorize(confidential, Browser())
    # Pretend the token lives long, so the 401 (not the clock) has to trigger the refresh.
    oauth_store.save(replace(state, tokens=replace(state.tokens, expires_at=time.time() + 3600)))
    # The AS revokes the access token (RFC 7009) — it is dead, the refresh token is not.
    form = {"token": state.tokens.access_token, "client_secret": state.client.client_secret}
    revoked = post_form(
        confidential.base + "/revoke", form, headers=client_auth(state.client, form)
    )
    assert revoked.status == 200
    auth = OAuthAuth(NAME, confidential.mcp_url)
    old = _file()["tokens"]
    client = _connect(confidential.mcp_url, auth)
    try:
        assert client.request("tools/list")["tools"]
    finally:
        client.close()
    new = _file()["tokens"]
    assert isinstance(old, dict) and isinstance(new, dict)
    assert new["refresh_token"] != old["refresh_token"]
    sent = [e["authorization"] for e in confidential.log() if e["method"] == "initialize"]
    assert sent[-2:] == [f"Bearer {old['access_token']}", f"Bearer {new['access_token']}"]


def test_no_credentials_headless_says_run_mcp_auth(public: OAuthServer) -> None:
    oauth_store.delete(NAME)
    with pytest.raises(PluginError, match=f"run `reasonix mcp auth {NAME}`"):
        _connect(public.mcp_url, OAuthAuth(NAME, public.mcp_url))


def test_a_token_never_goes_to_another_resource(public: OAuthServer) -> None:
    _authorize(public, Browser())
    # The declaration now points elsewhere: the stored token must not be sent there.
    auth = OAuthAuth(NAME, public.other_url)
    assert auth.header() is None
    with pytest.raises(PluginError, match=f"run `reasonix mcp auth {NAME}`"):
        _connect(public.other_url, auth)
    other = [e for e in public.log() if e["path"] == "/other/mcp"]
    assert other and all(e["authorization"] is None for e in other)
    # A fresh authorization for the new URL replaces the old state.
    browser = Browser()
    challenge = probe(public.other_url)
    state = authorize(NAME, public.other_url, open_url=browser, challenge=challenge, timeout=20)
    browser.join()
    assert browser.query()["resource"] == public.other_url
    assert state.resource == public.other_url
    assert oauth_store.load(NAME, public.mcp_url) is None


def test_step_up_on_insufficient_scope(public: OAuthServer) -> None:
    url = public.scoped_url  # its 401 challenge asks for "read" only
    browser = Browser()
    state = authorize(NAME, url, open_url=browser, challenge=probe(url), timeout=20)
    browser.join()
    assert browser.query()["scope"] == "read"  # the challenge's scope, not all of them
    assert state.tokens.scope == "read"
    # Headless: the step-up is refused with advice, and remembered for `mcp auth`.
    client = _connect(url, OAuthAuth(NAME, url))
    try:
        with pytest.raises(PluginError, match=f"needs more OAuth scope.*mcp auth {NAME}"):
            client.request("tools/call", {"name": "write_note", "arguments": {}}, timeout=20)
    finally:
        client.close()
    assert _file()["wanted_scopes"] == ["read", "write"]
    # With a frontend that can open a browser, the step-up happens on the spot.
    browser = Browser()
    client = _connect(url, OAuthAuth(NAME, url, open_url=browser))
    try:
        result = client.request("tools/call", {"name": "write_note", "arguments": {}}, timeout=30)
    finally:
        client.close()
    browser.join()
    assert "scopes: read write" in result["content"][0]["text"]
    assert browser.query()["scope"] == "read write"
    saved = oauth_store.load(NAME, url)
    assert saved is not None
    assert saved.tokens.scope == "read write"
    assert saved.wanted_scopes == ()
    assert saved.client.client_id != state.client.client_id  # re-registered for more scope


def test_static_authorization_header_disables_oauth() -> None:
    declared = McpServerConfig(
        name="x", type="http", url="https://s/mcp", headers={"authorization": "k"}
    )
    assert auth_for(declared) is None
    assert auth_for(McpServerConfig(name="x", type="stdio", command="c")) is None
    assert isinstance(
        auth_for(McpServerConfig(name="x", type="sse", url="https://s/sse")), OAuthAuth
    )


def test_a_short_lived_token_is_refreshed_before_use() -> None:
    with running("--public", "--ttl", "1") as srv:
        state = _authorize(srv, Browser())
        assert state.tokens.expires_at is not None
        time.sleep(max(0.0, state.tokens.expires_at - time.time()) + 0.1)
        auth = OAuthAuth(NAME, srv.mcp_url)
        client = _connect(srv.mcp_url, auth)
        try:
            assert client.request("tools/list")["tools"]
        finally:
            client.close()
        tokens = _file()["tokens"]
        assert isinstance(tokens, dict)
        assert tokens["refresh_token"] != state.tokens.refresh_token
        sent = {e["authorization"] for e in srv.log()}
        assert f"Bearer {state.tokens.access_token}" not in sent  # never sent once due
        assert f"Bearer {tokens['access_token']}" in sent


def test_auth_for_expands_the_url_like_the_session() -> None:
    declared = McpServerConfig(name="x", type="http", url="${HOST}/mcp")
    got = auth_for(declared, lookup={"HOST": "https://s.example"}.get)
    assert got is not None
    assert got.url == "https://s.example/mcp"
    assert auth_for(declared, lookup={}.get) is None  # the start fails on ${HOST} anyway
