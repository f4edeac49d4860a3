"""I/O-free OAuth client rules: who we are at an authorization server, and how we ask.

Split from :mod:`~reasonix.plugin.mcp.oauth_meta` (discovery and metadata):
this module holds our client's identity (registered, pre-configured or a
Client ID Metadata Document), the grant choice, the token-request forms of
the enterprise cross-app flow (RFC 8693 then RFC 7523 §2.1; we sign
nothing) and token-endpoint client authentication (RFC 6749 §2.3.1).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from reasonix.errors import PluginError
from reasonix.lazy import dataclass
from reasonix.plugin.mcp.oauth_meta import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    GRANT_JWT_BEARER,
    GRANT_TOKEN_EXCHANGE,
    TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN,
    AsMetadata,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ClientInfo",
    "choose_grant",
    "client_auth",
    "id_jag_request",
    "jwt_bearer_request",
    "metadata_document_client",
    "parse_id_jag",
    "parse_registration",
    "preferred_auth_method",
    "registration_body",
]


@dataclass(frozen=True)
class ClientInfo:
    """Our OAuth client at one authorization server."""

    client_id: str
    client_secret: str = ""
    auth_method: str = "none"  # none | client_secret_basic | client_secret_post
    redirect_uri: str = ""  # the loopback URI it was registered with ("" = pre-configured)
    scope: str = ""  # the scopes it was registered for
    registered: bool = True  # False for a pre-configured client (never re-registered)
    # authorization_code (a user in a browser) | client_credentials | jwt-bearer (SEP-990)
    grant: str = GRANT_CODE

    def to_json(self) -> dict[str, Any]:
        """A dict for the token store."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.auth_method,
            "redirect_uri": self.redirect_uri,
            "scope": self.scope,
            "registered": self.registered,
            "grant": self.grant,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ClientInfo:
        """The inverse of :meth:`to_json`."""
        return cls(
            client_id=str(d.get("client_id", "")),
            client_secret=str(d.get("client_secret") or ""),
            auth_method=str(d.get("token_endpoint_auth_method") or "none"),
            redirect_uri=str(d.get("redirect_uri") or ""),
            scope=str(d.get("scope") or ""),
            registered=bool(d.get("registered", True)),
            grant=str(d.get("grant") or GRANT_CODE),
        )


def choose_grant(meta: AsMetadata, client: ClientInfo | None, requested: str = "auto") -> str:
    """The grant to obtain tokens with: ``authorization_code`` or ``client_credentials``.

    ``requested`` is the user's explicit choice; ``auto`` picks the client
    credentials grant (SEP-1046, machine-to-machine: no user, no browser)
    only when nothing else can work — a pre-configured confidential client
    (it has a secret) at an AS whose metadata offers ``client_credentials``
    but not the authorization-code grant. A public client never uses it.
    """
    if requested not in ("auto", GRANT_CODE, GRANT_CLIENT_CREDENTIALS):
        raise PluginError(f"unsupported OAuth grant {requested!r}")
    wants_cc = requested == GRANT_CLIENT_CREDENTIALS or (
        requested == "auto"
        and client is not None
        and meta.supports_grant(GRANT_CLIENT_CREDENTIALS)
        and not meta.supports_grant(GRANT_CODE)
    )
    if not wants_cc:
        return GRANT_CODE
    if client is None or not client.client_secret or client.auth_method == "none":
        raise PluginError(
            "the client credentials grant needs a pre-configured client id and secret"
        )
    return GRANT_CLIENT_CREDENTIALS


def metadata_document_client(url: str, redirect_uri: str) -> ClientInfo:
    """Our client identified by its Client ID Metadata Document (MCP 2025-11-25, CIMD).

    The client id *is* the https URL of a JSON document we publish (it lists
    our name and redirect URIs; the AS fetches it), so no registration is
    needed. The URL must be https with a path (the CIMD draft); it is a
    public client (``none``) — the document carries no secret.
    """
    p = urlsplit(url)
    if p.scheme != "https" or not p.hostname or p.path in ("", "/") or p.fragment:
        raise PluginError(f"a client metadata document URL must be https with a path: {url!r}")
    return ClientInfo(
        client_id=url, auth_method="none", redirect_uri=redirect_uri, registered=False
    )


def id_jag_request(
    id_token: str, *, audience: str, resource: str, scopes: Sequence[str] = ()
) -> dict[str, str]:
    """The RFC 8693 token-exchange form that asks the IdP for an ID-JAG (SEP-990).

    ``audience`` is the issuer of the MCP server's authorization server,
    ``resource`` the MCP server (RFC 8707); the IdP decides by its policy.
    """
    if not id_token:
        raise PluginError("no identity provider ID token to exchange")
    form = {
        "grant_type": GRANT_TOKEN_EXCHANGE,
        "requested_token_type": TOKEN_TYPE_ID_JAG,
        "subject_token": id_token,
        "subject_token_type": TOKEN_TYPE_ID_TOKEN,
        "audience": audience,
        "resource": resource,
    }
    if scopes:
        form["scope"] = " ".join(scopes)
    return form


def parse_id_jag(doc: Any) -> str:
    """The ID-JAG from the IdP's token-exchange answer (RFC 8693 §2.2.1)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str):
        raise PluginError("the identity provider's token exchange returned no token")
    issued = doc.get("issued_token_type")
    if issued != TOKEN_TYPE_ID_JAG:
        raise PluginError(f"the identity provider issued {issued!r}, not an ID-JAG")
    return str(doc["access_token"])


def jwt_bearer_request(assertion: str, scopes: Sequence[str] = ()) -> dict[str, str]:
    """The RFC 7523 §2.1 JWT bearer authorization grant form, presenting an ID-JAG."""
    form = {"grant_type": GRANT_JWT_BEARER, "assertion": assertion}
    if scopes:
        form["scope"] = " ".join(scopes)
    return form


def preferred_auth_method(meta: AsMetadata) -> str:
    """``none`` (a public client, nothing to leak) unless the AS lists methods without it."""
    methods = meta.token_endpoint_auth_methods
    if not methods or "none" in methods:
        return "none"
    if "client_secret_basic" in methods:
        return "client_secret_basic"
    if "client_secret_post" in methods:
        return "client_secret_post"
    return "none"


def registration_body(meta: AsMetadata, redirect_uri: str, scopes: Sequence[str]) -> dict[str, Any]:
    """The RFC 7591 registration request for a loopback native client."""
    body: dict[str, Any] = {
        "client_name": "Reasonix",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": preferred_auth_method(meta),
    }
    if scopes:
        body["scope"] = " ".join(scopes)
    return body


def parse_registration(doc: Any, redirect_uri: str, scopes: Sequence[str]) -> ClientInfo:
    """The client the AS registered; its answer (not our wish) decides the auth method."""
    if not isinstance(doc, dict) or not isinstance(doc.get("client_id"), str):
        raise PluginError("the client registration answer has no client_id")
    secret = doc.get("client_secret")
    method = doc.get("token_endpoint_auth_method")
    if not isinstance(method, str) or not method:
        method = "client_secret_basic" if secret else "none"
    if method not in ("none", "client_secret_basic", "client_secret_post"):
        raise PluginError(f"unsupported token_endpoint_auth_method {method!r}")
    if method != "none" and not secret:
        raise PluginError(f"the AS chose {method} but returned no client_secret")
    scope = doc.get("scope")
    return ClientInfo(
        client_id=doc["client_id"],
        client_secret=str(secret or ""),
        auth_method=method,
        redirect_uri=redirect_uri,
        scope=scope if isinstance(scope, str) else " ".join(scopes),
    )


def client_auth(client: ClientInfo, form: dict[str, str]) -> dict[str, str]:
    """Add client authentication to a token request; return the extra headers.

    ``client_secret_basic`` form-encodes id and secret before base64 (RFC 6749
    §2.3.1); ``client_id`` stays in the form too, as public clients need it.
    """
    form["client_id"] = client.client_id
    if client.auth_method == "client_secret_post":
        form["client_secret"] = client.client_secret
        return {}
    if client.auth_method == "client_secret_basic":
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    return {}
