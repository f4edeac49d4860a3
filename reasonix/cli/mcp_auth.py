"""``reasonix mcp auth SERVER`` and ``reasonix mcp logout SERVER`` (D12).

``auth`` finds the server's declaration, probes it for its 401 challenge,
prints the authorization URL (and tries to open a browser), waits for the
redirect on a loopback port and reports where the credentials were saved.
``logout`` deletes the server's stored OAuth state. Both return an exit code:
0 ok, 1 the flow failed, 2 no such HTTP server.
"""

from __future__ import annotations

import sys
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cli.safe_text import printable
from reasonix.config import load
from reasonix.config.expand import chain_lookup, environ_lookup
from reasonix.config.mcp import expand_server
from reasonix.config.model import McpServerConfig
from reasonix.errors import ConfigError, ReasonixError
from reasonix.plugin.mcp import oauth_store
from reasonix.plugin.mcp.oauth import HTTP_TYPES
from reasonix.plugin.mcp.oauth_client import ClientInfo
from reasonix.plugin.mcp.oauth_flow import (
    AUTHORIZE_TIMEOUT,
    authorize,
    authorize_enterprise,
    probe,
)
from reasonix.plugin.mcp.oauth_meta import Challenge
from reasonix.plugin.mcp.oauth_store import OAuthState

if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["auth", "logout"]


def _find(name: str, cwd: Path) -> McpServerConfig:
    cfg = load(cwd)
    for server in cfg.mcp_servers:
        if server.name == name:
            return expand_server(server, chain_lookup(cfg.project_env, environ_lookup))
    if any(
        i.kind == "mcp" and i.text.startswith(f"MCP server {name!r} ") for i in cfg.trust.skipped
    ):
        raise ConfigError(
            f"MCP server {name!r} is declared by this workspace, which is not trusted; "
            "run `reasonix trust` here first if you trust it"
        )
    known = ", ".join(s.name for s in cfg.mcp_servers) or "none"
    raise ConfigError(f"no MCP server named {name!r} (configured: {known})")


def _open_quietly(url: str) -> None:
    try:
        webbrowser.open(url)
    except Exception:  # noqa: BLE001 — no browser is fine: the URL is printed
        pass


def _browser_opener(out: TextIO, name: str, open_browser: bool) -> Callable[[str], None]:
    def open_url(url: str) -> None:
        # The URL comes from the server's metadata: untrusted text.
        shown = printable(url, keep_newlines=False)
        print(f"Authorize Reasonix for MCP server {name!r} by opening:\n\n  {shown}\n", file=out)
        if open_browser:
            # On a thread: some browsers (a BROWSER command, a text browser)
            # block until they exit, and the redirect needs our listener running.
            threading.Thread(target=_open_quietly, args=(url,), daemon=True).start()
        print("Waiting for the browser to finish (Ctrl-C to give up) …", file=out, flush=True)

    return open_url


def _enterprise(
    server: McpServerConfig,
    challenge: Challenge | None,
    client: ClientInfo | None,
    id_token_file: str,
    idp_token_endpoint: str,
    idp_client_id: str,
) -> OAuthState:
    """Enterprise-managed authorization with the ID token read from ``id_token_file``."""
    if client is None or not idp_token_endpoint:
        raise ConfigError(
            "--id-token-file needs --idp-token-endpoint and the --client-id (and "
            "--client-secret) registered with the server's authorization server"
        )
    try:
        id_token = Path(id_token_file).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the ID token: {exc}") from exc
    idp_client = ClientInfo(idp_client_id, registered=False) if idp_client_id else None
    return authorize_enterprise(
        server.name,
        server.url,
        id_token=id_token,
        idp_token_endpoint=idp_token_endpoint,
        client=client,
        idp_client=idp_client,
        challenge=challenge,
    )


def auth(
    server_name: str,
    cwd: Path,
    *,
    open_url: Callable[[str], None] | None = None,
    client_id: str = "",
    client_secret: str = "",
    grant: str = "auto",
    client_metadata_url: str = "",
    id_token_file: str = "",
    idp_token_endpoint: str = "",
    idp_client_id: str = "",
    timeout: float = AUTHORIZE_TIMEOUT,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Authorize ``server_name``; return the exit code.

    ``open_url`` replaces "print the URL and open a browser" (tests drive
    the browser themselves); ``client_id``/``client_secret`` name a client
    registered by hand with the authorization server instead of registering one.
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        server = _find(server_name, cwd)
    except ConfigError as exc:
        print(printable(f"reasonix mcp auth: {exc}"), file=err)
        return 2
    if server.type not in HTTP_TYPES:
        print(
            f"reasonix mcp auth: {server_name!r} is a {server.type} server; "
            "OAuth applies to http and sse servers only",
            file=err,
        )
        return 2
    if any(k.lower() == "authorization" for k in server.headers):
        print(
            f"reasonix mcp auth: {server_name!r} has a static Authorization header; "
            "remove it to use OAuth",
            file=err,
        )
        return 2
    client = None
    if client_id:
        client = ClientInfo(
            client_id=client_id,
            client_secret=client_secret,
            auth_method="client_secret_basic" if client_secret else "none",
            registered=False,
        )
    try:
        challenge = probe(server.url)
        if id_token_file:
            state = _enterprise(server, challenge, client, id_token_file, idp_token_endpoint,
                                idp_client_id)  # fmt: skip
        else:
            state = authorize(
                server.name,
                server.url,
                open_url=open_url or _browser_opener(out, server.name, open_browser=True),
                challenge=challenge,
                client=client,
                timeout=timeout,
                grant=grant,
                client_metadata_url=client_metadata_url,
            )
    except KeyboardInterrupt:
        print("reasonix mcp auth: cancelled", file=err)
        return 1
    except ReasonixError as exc:
        print(printable(f"reasonix mcp auth: {server_name}: {exc}"), file=err)
        return 1
    scopes = state.tokens.scope or "(none named)"
    print(
        f"Authorized MCP server {server_name!r} (scopes: {scopes}); "
        f"credentials saved to {oauth_store.state_path(server.name)}",
        file=out,
    )
    return 0


def logout(
    server_name: str, cwd: Path, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Forget the stored OAuth state of ``server_name``; return the exit code.

    Works for a server whose declaration is already gone, too: the state is
    found by name, so nothing is left behind.
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    del cwd  # the state is keyed by name alone; cwd keeps the signature uniform with auth
    try:
        removed = oauth_store.delete(server_name)
    except OSError as exc:  # a read-only home
        print(f"reasonix mcp logout: cannot remove {server_name!r}: {exc}", file=err)
        return 1
    if removed:
        print(f"Removed the OAuth credentials of MCP server {server_name!r}.", file=out)
    else:
        print(f"No OAuth credentials stored for MCP server {server_name!r}.", file=out)
    return 0
