"""Adapter that lets the official MCP conformance suite drive Reasonix's MCP client.

The suite (npm ``@modelcontextprotocol/conformance``) runs
``python tests/interop/conformance_client.py <server-url>``, with the scenario
name in ``MCP_CONFORMANCE_SCENARIO`` (and scenario data as JSON in
``MCP_CONFORMANCE_CONTEXT``). We connect exactly as ``reasonix run`` would,
list the tools and call each one (``add_numbers`` with numbers, the rest with
no arguments), then close. The exit code is 0 when the scenario's steps ran;
the suite itself judges conformance from the traffic it saw.

Auth scenarios: when the OAuth modules are present, a 401 at connect starts
the authorization-code flow (``oauth_flow.authorize``) with a headless
"browser" that follows the auto-approving server's redirects to our loopback
listener, then reconnects with the OAuth hook — what ``reasonix mcp auth``
and a later run do. A pre-registered client comes from the scenario context.
Credentials live in a throw-away ``REASONIX_HOME``. Elicitation is answered
by the opt-in ``accept_defaults`` policy (schema defaults only, else decline).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from reasonix.cancel import Cancel  # noqa: E402 - after the path set-up above
from reasonix.config.model import McpServerConfig  # noqa: E402
from reasonix.errors import PluginError, ReasonixError  # noqa: E402
from reasonix.plugin.mcp.connect import ConnectOptions, open_client  # noqa: E402
from reasonix.plugin.mcp.elicit import accept_defaults  # noqa: E402

ARGUMENTS = {"add_numbers": {"a": 5, "b": 3}}


def _oauth() -> tuple[Any, Any, Any] | None:
    """The OAuth modules (hook, flow, client types), or None where they cannot load."""
    try:
        return (
            importlib.import_module("reasonix.plugin.mcp.oauth"),
            importlib.import_module("reasonix.plugin.mcp.oauth_flow"),
            importlib.import_module("reasonix.plugin.mcp.oauth_client"),
        )
    except ImportError:
        return None


def _visit(url: str) -> None:
    """Play the user's browser: open the URL on a thread, following redirects."""

    def go() -> None:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(url, timeout=30) as resp:
                resp.read()
        except (urllib.error.URLError, OSError) as exc:
            print(f"browser: {url}: {exc}", file=sys.stderr)

    threading.Thread(target=go, daemon=True).start()


# The client metadata document URL the suite's CIMD scenario accepts (it does
# not fetch it): what a user passes as `reasonix mcp auth --client-metadata-url`.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def _authorize(server: McpServerConfig, oauth: tuple[Any, Any, Any]) -> None:
    """What `reasonix mcp auth` does, with the scenario's pre-registered client if any.

    The grant is left to ``auto``: a confidential client at an AS that only
    offers ``client_credentials`` uses that grant, as the CLI would. A context
    with an identity provider ID token means enterprise-managed authorization.
    """
    _, flow, meta = oauth
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    client = None
    if context.get("client_id"):
        secret = str(context.get("client_secret") or "")
        client = meta.ClientInfo(
            client_id=str(context["client_id"]),
            client_secret=secret,
            auth_method="client_secret_basic" if secret else "none",
            registered=False,
        )
    if context.get("idp_id_token"):
        # Enterprise-managed authorization: what `reasonix mcp auth SERVER
        # --id-token-file F --idp-token-endpoint URL --idp-client-id ID
        # --client-id … --client-secret …` does.
        flow.authorize_enterprise(
            server.name,
            server.url,
            id_token=str(context["idp_id_token"]),
            idp_token_endpoint=str(context["idp_token_endpoint"]),
            idp_client=meta.ClientInfo(str(context.get("idp_client_id") or ""), registered=False),
            client=client,
            challenge=flow.probe(server.url),
        )
        return
    flow.authorize(
        server.name,
        server.url,
        open_url=_visit,
        challenge=flow.probe(server.url),
        client=client,
        timeout=30,
        client_metadata_url=CLIENT_METADATA_URL,
    )


def _scenario(server: McpServerConfig, scenario: str, oauth: tuple[Any, Any, Any] | None) -> None:
    """Connect, list the tools and call each one (errors of a call are reported, not fatal)."""
    notices: list[str] = []
    hook = oauth[0].OAuthAuth(server.name, server.url, open_url=_visit) if oauth else None
    # The opt-in headless elicitation policy: accept only what the schema's
    # own defaults answer (SEP-1034), decline anything that needs a person.
    opts = ConnectOptions(
        workspace=Path.cwd(), on_notice=notices.append, auth=hook, on_elicit=accept_defaults
    )
    client = open_client(server, opts, Cancel.with_timeout(30))
    try:
        for tool in client.list_all("tools/list", "tools", timeout=30):
            name = str(tool.get("name"))
            try:
                client.request(
                    "tools/call",
                    {"name": name, "arguments": ARGUMENTS.get(name, {})},
                    timeout=30,
                )
            except ReasonixError as exc:
                print(f"{scenario}: {name} failed: {exc}", file=sys.stderr)
    finally:
        client.close()
        for text in notices:
            print(f"notice: {text}", file=sys.stderr)


def run(url: str, scenario: str) -> int:
    """Drive one scenario against ``url``; authorise once when the server demands it."""
    server = McpServerConfig("conformance", type="http", url=url)
    oauth = _oauth()
    try:
        _scenario(server, scenario, oauth)
    except PluginError as exc:
        if oauth is None or ("401" not in str(exc) and "mcp auth" not in str(exc)):
            raise
        _authorize(server, oauth)
        _scenario(server, scenario, oauth)
    return 0


def main(argv: list[str]) -> int:
    """Entry point: the server URL is the last argument."""
    if not argv:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    with tempfile.TemporaryDirectory(prefix="rx-conformance-") as home:
        os.environ["REASONIX_HOME"] = home  # OAuth state of one scenario, thrown away after
        try:
            return run(argv[-1], scenario)
        except ReasonixError as exc:
            print(f"{scenario}: {exc}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
