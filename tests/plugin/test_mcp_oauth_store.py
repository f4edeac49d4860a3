"""The OAuth state files: binding to the resource URL, modes, pruning (MCP-6, MCP-8)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reasonix.plugin.mcp import oauth_store
from reasonix.plugin.mcp.oauth_client import ClientInfo
from reasonix.plugin.mcp.oauth_meta import AsMetadata
from reasonix.plugin.mcp.oauth_store import OAuthState, Tokens

META = AsMetadata("https://as.example", "https://as.example/a", "https://as.example/t")


def _state(server: str, url: str, access: str = "tok") -> OAuthState:
    return OAuthState(
        server=server,
        resource=url,
        resource_indicator=url,
        metadata=META,
        client=ClientInfo("cid"),
        tokens=Tokens(access, "ref", None, "read"),
    )


def test_round_trip_modes_and_location() -> None:
    path = oauth_store.save(_state("srv", "https://s.example/mcp"))
    assert path.parent == Path(os.environ["REASONIX_HOME"]) / "mcp-oauth"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert oauth_store.load("srv", "https://s.example/mcp") == _state(
        "srv", "https://s.example/mcp"
    )
    # Canonically equal spellings of the URL find it.
    assert oauth_store.load("srv", "HTTPS://S.example:443/mcp") is not None


def test_a_changed_url_finds_nothing() -> None:
    oauth_store.save(_state("srv", "https://s.example/mcp"))
    assert oauth_store.load("srv", "https://s.example/v2/mcp") is None
    assert oauth_store.load("srv", "https://evil.example/mcp") is None
    assert oauth_store.load("other", "https://s.example/mcp") is None


def test_names_never_collide_and_damaged_files_read_as_none() -> None:
    assert oauth_store.state_path("a/b") != oauth_store.state_path("a_b")
    assert oauth_store.state_path("../x").parent == oauth_store.store_dir()
    oauth_store.save(_state("srv", "https://s.example/mcp"))
    oauth_store.state_path("srv").write_text("{not json")
    assert oauth_store.load("srv", "https://s.example/mcp") is None


def test_delete() -> None:
    oauth_store.save(_state("srv", "https://s.example/mcp"))
    assert oauth_store.delete("srv") is True
    assert oauth_store.delete("srv") is False


def test_prune_store() -> None:
    oauth_store.save(_state("kept", "https://s.example/mcp"))
    oauth_store.save(_state("moved", "https://s.example/old"))
    oauth_store.save(_state("gone", "https://g.example/mcp"))
    removed = oauth_store.prune_store(
        {"kept": "https://S.example/mcp", "moved": "https://s.example/new", "x": "ftp://bad"}
    )
    assert sorted(removed) == ["gone", "moved"]
    assert oauth_store.load("kept", "https://s.example/mcp") is not None
    assert sorted(p.name.split("-")[0] for p in oauth_store.store_dir().glob("*.json")) == ["kept"]


def test_prune_keeps_state_when_the_effective_declaration_has_the_same_resource() -> None:
    # MCP-8: a project entry shadowed a global one with the same URL; removing the
    # project entry leaves the global one effective — same resource, state kept.
    oauth_store.save(_state("srv", "https://s.example/mcp"))
    assert oauth_store.prune_store({"srv": "https://s.example/mcp"}) == []
    assert oauth_store.prune_store({"srv": "https://s.example/other"}) == ["srv"]


def test_prune_keeps_state_behind_an_unexpanded_url() -> None:
    oauth_store.save(_state("srv", "https://s.example/mcp"))
    assert oauth_store.prune_store({"srv": "${HOST}/mcp"}) == []
    assert oauth_store.load("srv", "https://s.example/mcp") is not None


def test_prune_without_a_store_is_a_no_op() -> None:
    assert oauth_store.prune_store({}) == []
