"""MCP OAuth at the transport seam: :class:`OAuthAuth` and :func:`auth_for` (D12).

Wiring (the session that builds the :class:`~reasonix.plugin.mcp.McpManager`)::

    lookup = chain_lookup(cfg.project_env, environ_lookup)
    prune_store({s.name: s.url for s in cfg.mcp_servers if s.url})   # MCP-8
    mgr = McpManager(cfg.mcp_servers, ..., env_lookup=lookup,
                     auth_for=lambda s: auth_for(s, lookup=lookup))

The HTTP transports call :meth:`OAuthAuth.headers` before every request and
:meth:`OAuthAuth.on_status` on a 401/403. Authorization itself starts only
when the user asks (``reasonix mcp auth SERVER``); without stored
credentials a 401 becomes a :class:`~reasonix.errors.PluginError` that says
so. Module map: ``oauth_meta`` and ``oauth_client`` (I/O-free rules), ``oauth_http`` (urllib
requests), ``oauth_store`` (the 0600 files), ``oauth_flow`` (authorize,
refresh).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from reasonix.config.expand import Lookup, environ_lookup
from reasonix.config.mcp import expand_server
from reasonix.config.model import McpServerConfig
from reasonix.errors import ConfigError, PluginError
from reasonix.lazy import replace
from reasonix.plugin.mcp import oauth_store
from reasonix.plugin.mcp.oauth_flow import RefreshRejected, authorize, refresh
from reasonix.plugin.mcp.oauth_meta import (
    GRANT_CLIENT_CREDENTIALS,
    parse_www_authenticate,
    union_scopes,
)
from reasonix.plugin.mcp.oauth_store import OAuthState, prune_store

__all__ = ["OAuthAuth", "auth_for", "prune_store"]

HTTP_TYPES = ("http", "streamable-http", "sse")


class OAuthAuth:
    """OAuth credentials of one server, as the HTTP transport's ``auth`` hook.

    The stored state is re-read when its file changes, so a ``reasonix mcp
    auth`` in another terminal takes effect without a restart. ``open_url``,
    when a frontend supplies it, lets a scope step-up re-authorise on the
    spot; without it (headless) the step-up is recorded for the next
    ``reasonix mcp auth`` and the call fails with that advice.
    """

    def __init__(
        self,
        server: str,
        url: str,
        *,
        open_url: Callable[[str], None] | None = None,
    ) -> None:
        self.server = server
        self.url = url
        self.open_url = open_url
        self._lock = threading.RLock()
        self._state: OAuthState | None = None
        self._stamp: tuple[int, int] | None = None  # (mtime_ns, size) of the file we read
        self._refresh_failed_for = ""  # the refresh token the AS refused; never retried

    # -- state ---------------------------------------------------------------
    def _current(self) -> OAuthState | None:
        path = oauth_store.state_path(self.server)
        try:
            st = path.stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._stamp = stamp
            self._state = oauth_store.load(self.server, self.url) if stamp else None
        return self._state

    def _adopt(self, state: OAuthState) -> None:
        self._state = state
        try:
            st = oauth_store.state_path(self.server).stat()
            self._stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            self._stamp = None

    def _refresh(self, state: OAuthState) -> OAuthState | None:
        # A client-credentials client has no refresh token: it asks for a new
        # token instead (once per access token, so a refused client is not
        # hammered).
        key = state.tokens.refresh_token
        if not key and state.client.grant == GRANT_CLIENT_CREDENTIALS:
            key = "client_credentials:" + state.tokens.access_token
        if not key or key == self._refresh_failed_for:
            return None
        try:
            new_state = refresh(state)
        except RefreshRejected:
            self._refresh_failed_for = key
            return None
        self._adopt(new_state)
        return new_state

    def _advice(self) -> str:
        return f"run `reasonix mcp auth {self.server}`"

    # -- requests and refusals ---------------------------------------------------
    def header(self) -> str | None:
        """``Bearer <token>`` for the next request, refreshing an expired token; None = none.

        Only a token obtained for this server's URL is ever returned.
        """
        with self._lock:
            state = self._current()
            if state is None:
                return None
            if state.tokens.expired():
                state = self._refresh(state)
                if state is None:
                    return None
            return f"Bearer {state.tokens.access_token}"

    def on_unauthorized(self, www_authenticate: str | None, status: int = 401) -> bool:
        """A request was refused; True when retrying it may now succeed.

        401: refresh once (or notice another process already did). 403 with
        ``insufficient_scope``: re-authorise with the union of scopes when a
        frontend can open a browser; otherwise remember the scopes and raise.
        Raises PluginError with the ``reasonix mcp auth`` advice when nothing
        we can do here would help.
        """
        challenge = parse_www_authenticate(www_authenticate)
        with self._lock:
            sent = self._state.tokens.access_token if self._state is not None else ""
            state = self._current()
            if status == 403:
                if challenge is None or challenge.error != "insufficient_scope":
                    return False  # forbidden for other reasons: not ours to fix
                return self._step_up(state, challenge.scopes, www_authenticate)
            if state is None:
                raise PluginError(
                    f"MCP server {self.server!r} needs authorization; {self._advice()}"
                )
            if state.tokens.access_token != sent:
                return True  # the file changed under us (another process authorised)
            if self._refresh(state) is not None:
                return True
            raise PluginError(
                f"the OAuth authorization for MCP server {self.server!r} was rejected or has "
                f"expired; {self._advice()}"
            )

    def _step_up(
        self, state: OAuthState | None, needed: list[str], www_authenticate: str | None
    ) -> bool:
        granted = state.tokens.scope.split() if state is not None else []
        scopes = union_scopes(granted, needed)
        if self.open_url is not None:
            new_state = authorize(
                self.server,
                self.url,
                open_url=self.open_url,
                scopes=scopes,
                challenge=parse_www_authenticate(www_authenticate),
            )
            self._adopt(new_state)
            return True
        if state is not None:
            wished = replace(state, wanted_scopes=tuple(union_scopes(state.wanted_scopes, scopes)))
            oauth_store.save(wished)
            self._adopt(wished)
        raise PluginError(
            f"MCP server {self.server!r} needs more OAuth scope ({' '.join(needed) or '?'}); "
            f"{self._advice()}"
        )

    # -- the transport's AuthHook ---------------------------------------------------
    def headers(self) -> dict[str, str]:
        """``{"Authorization": …}`` or nothing (``AuthHook.headers``)."""
        value = self.header()
        return {"Authorization": value} if value else {}

    def on_status(self, status: int, headers: Mapping[str, str]) -> bool:
        """``AuthHook.on_status``: route a 401/403 to :meth:`on_unauthorized`."""
        values = [v for k, v in headers.items() if k.lower() == "www-authenticate"]
        return self.on_unauthorized(", ".join(values) or None, status)


def auth_for(
    server: McpServerConfig,
    *,
    lookup: Lookup | None = None,
    open_url: Callable[[str], None] | None = None,
) -> OAuthAuth | None:
    """The auth hook for ``server``: HTTP servers without a static Authorization header.

    ``lookup`` resolves ``${VAR}`` in the URL the way the session does
    (``chain_lookup(cfg.project_env, environ_lookup)``); the process
    environment by default.
    """
    if server.type not in HTTP_TYPES or not server.url:
        return None
    if any(k.lower() == "authorization" for k in server.headers):
        return None  # a configured credential wins; OAuth never overrides it (MCP-4)
    url = server.url
    if "${" in url:
        # The manager hands us the declaration before its per-start expansion;
        # the state is bound to the expanded URL, so expand it the same way.
        try:
            url = expand_server(server, lookup or environ_lookup).url
        except ConfigError:
            return None  # the start fails on the variable anyway
    return OAuthAuth(server.name, url, open_url=open_url)
