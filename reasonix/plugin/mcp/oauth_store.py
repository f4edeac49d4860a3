"""Per-server OAuth state on disk: ``<home>/mcp-oauth/<server>-<hash>.json`` (D12, MCP-6).

One JSON file per server holds the registered client, the authorization
server's endpoints and the tokens. Files are 0600 in a 0700 directory under
the Reasonix home — never in a workspace — and every write replaces the file
atomically, so a crash mid-refresh leaves the old or the new refresh token,
never half of one.

Each file is bound to the canonical resource URL it was obtained for: a
lookup with another URL finds nothing, so a token for one resource is never
sent to another (the file is left for :func:`prune_store` or a new
authorization to replace).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.atomic import write_atomic
from reasonix.config.paths import home_dir
from reasonix.config.safe_read import STATE_LIMIT, read_text
from reasonix.errors import PluginError
from reasonix.lazy import dataclass, field, replace
from reasonix.plugin.mcp.oauth_client import ClientInfo
from reasonix.plugin.mcp.oauth_meta import AsMetadata, canonical_resource

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "OAuthState",
    "Tokens",
    "delete",
    "load",
    "prune_store",
    "save",
    "state_path",
    "store_dir",
]

STORE_VERSION = 1
EXPIRY_SKEW = 30.0  # seconds: the most we refresh ahead of a token's expiry


@dataclass(frozen=True)
class Tokens:
    """What the token endpoint gave us (RFC 6749 §5.1)."""

    access_token: str = ""
    refresh_token: str = ""
    # Epoch seconds after which we refresh: a little before the AS's own expiry
    # (a quarter of the lifetime, at most EXPIRY_SKEW) so a token never dies in
    # flight; None = the AS named no lifetime.
    expires_at: float | None = None
    scope: str = ""

    def expired(self, now: float | None = None) -> bool:
        """True when the access token is missing or due for a refresh."""
        if not self.access_token:
            return True
        if self.expires_at is None:
            return False
        return (now if now is not None else time.time()) >= self.expires_at

    @classmethod
    def from_response(
        cls, doc: Any, previous: Tokens | None = None, now: float | None = None
    ) -> Tokens:
        """Tokens from a token-endpoint answer.

        A refresh answer may omit ``refresh_token`` (no rotation): the old one
        stays valid then. ``scope`` absent means "what you asked for".
        """
        if not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str):
            raise PluginError("the token endpoint answered without an access_token")
        token_type = str(doc.get("token_type", "Bearer"))
        if token_type.lower() != "bearer":
            raise PluginError(f"unsupported token_type {token_type!r}")
        expires_in = doc.get("expires_in")
        if isinstance(expires_in, str) and expires_in.isdigit():
            expires_in = int(expires_in)  # some servers send it as a string
        expires_at = None
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
            lifetime = max(0.0, float(expires_in))
            lifetime -= min(EXPIRY_SKEW, lifetime / 4)
            expires_at = (now if now is not None else time.time()) + lifetime
        refresh = doc.get("refresh_token")
        scope = doc.get("scope")
        return cls(
            access_token=doc["access_token"],
            refresh_token=(
                refresh
                if isinstance(refresh, str) and refresh
                else (previous.refresh_token if previous else "")
            ),
            expires_at=expires_at,
            scope=scope if isinstance(scope, str) else (previous.scope if previous else ""),
        )


@dataclass(frozen=True)
class OAuthState:
    """Everything we keep for one server."""

    server: str
    resource: str  # canonical URL of the MCP server this state is bound to
    resource_indicator: str  # the RFC 8707 ``resource`` we send (the PRM's resource)
    metadata: AsMetadata
    client: ClientInfo
    tokens: Tokens = field(default_factory=Tokens)
    wanted_scopes: tuple[str, ...] = ()  # a step-up the server asked for and we could not do

    def with_tokens(self, tokens: Tokens) -> OAuthState:
        """A copy with new tokens (and the step-up wish cleared when it is covered)."""
        granted = set(tokens.scope.split())
        wanted = () if set(self.wanted_scopes) <= granted else self.wanted_scopes
        return replace(self, tokens=tokens, wanted_scopes=wanted)

    def to_json(self) -> dict[str, Any]:
        """The file's content."""
        t = self.tokens
        return {
            "version": STORE_VERSION,
            "server": self.server,
            "resource": self.resource,
            "resource_indicator": self.resource_indicator,
            "metadata": self.metadata.to_json(),
            "client": self.client.to_json(),
            "tokens": {
                "access_token": t.access_token,
                "refresh_token": t.refresh_token,
                "expires_at": t.expires_at,
                "scope": t.scope,
            },
            "wanted_scopes": list(self.wanted_scopes),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> OAuthState:
        """The inverse of :meth:`to_json`; raises KeyError/TypeError/ValueError on a bad file."""
        m, t = d["metadata"], d.get("tokens") or {}
        expires = t.get("expires_at")
        return cls(
            server=str(d["server"]),
            resource=str(d["resource"]),
            resource_indicator=str(d.get("resource_indicator") or d["resource"]),
            metadata=AsMetadata.from_json(m),
            client=ClientInfo.from_json(d["client"]),
            tokens=Tokens(
                access_token=str(t.get("access_token") or ""),
                refresh_token=str(t.get("refresh_token") or ""),
                expires_at=float(expires) if isinstance(expires, (int, float)) else None,
                scope=str(t.get("scope") or ""),
            ),
            wanted_scopes=tuple(d.get("wanted_scopes") or ()),
        )


def store_dir() -> Path:
    """``<home>/mcp-oauth`` (read from the environment on each call)."""
    return home_dir() / "mcp-oauth"


def state_path(server: str) -> Path:
    """The file of ``server``: a readable stem plus a hash, so distinct names never collide."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in server)[:40] or "server"
    digest = hashlib.sha256(server.encode("utf-8")).hexdigest()[:12]
    return store_dir() / f"{stem}-{digest}.json"


def _well_formed(doc: Any) -> bool:
    """The shape :meth:`OAuthState.from_json` relies on (a hand-edited file may differ)."""
    if not isinstance(doc, dict):
        return False
    scopes = doc.get("wanted_scopes") or []
    return (
        isinstance(doc.get("metadata"), dict)
        and isinstance(doc.get("client"), dict)
        and isinstance(doc.get("tokens") or {}, dict)
        and isinstance(scopes, list)
        and all(isinstance(x, str) for x in scopes)
        and all(isinstance(doc.get(k), str) for k in ("server", "resource"))
    )


def _read(path: Path) -> OAuthState | None:
    try:
        doc = json.loads(read_text(path, STATE_LIMIT, error=PluginError, follow=False))
        if not _well_formed(doc):
            return None
        return OAuthState.from_json(doc)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, PluginError):
        return None  # a damaged file is as good as none; the next save replaces it


def load(server: str, url: str) -> OAuthState | None:
    """The state of ``server`` if it was obtained for ``url`` (canonically equal), else None."""
    state = _read(state_path(server))
    if state is None or state.server != server:
        return None
    try:
        if state.resource != canonical_resource(url):
            return None  # bound to another resource: never reuse (MCP-6)
    except PluginError:
        return None
    return state


def save(state: OAuthState) -> Path:
    """Write ``state`` atomically with mode 0600 (directory 0700); return the path."""
    directory = store_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(directory, 0o700)
    path = state_path(state.server)
    text = json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n"
    try:
        write_atomic(path, text, mode=0o600)
    except OSError as exc:
        raise PluginError(f"cannot save the OAuth state of {state.server!r}: {exc}") from exc
    return path


def delete(server: str) -> bool:
    """Remove the state of ``server``; True when there was one."""
    try:
        state_path(server).unlink()
        return True
    except FileNotFoundError:
        return False


def prune_store(declared: Mapping[str, str]) -> list[str]:
    """Delete state no declaration uses any more; return the server names removed.

    ``declared`` maps each effective (merged) server name to its URL. A file
    survives only when its server is still declared with the same canonical
    resource — so removing a project entry that shadowed a global one with
    the same URL keeps the state (MCP-8), and a changed URL drops it.
    """
    directory = store_dir()
    if not directory.is_dir():
        return []
    wanted: dict[str, str] = {}
    unknown: set[str] = set()
    for name, url in declared.items():
        try:
            wanted[name] = canonical_resource(url)
        except PluginError:
            # An unexpanded ``${VAR}`` URL: we cannot tell, so keep the state;
            # load() still refuses it for any URL it was not obtained for.
            unknown.add(name)
    removed: list[str] = []
    for path in sorted(directory.glob("*.json")):
        state = _read(path)
        keep = (
            state is not None
            and path == state_path(state.server)
            and (state.server in unknown or wanted.get(state.server) == state.resource)
        )
        if not keep:
            with contextlib.suppress(OSError):
                path.unlink()
            removed.append(state.server if state is not None else path.name)
    return removed
