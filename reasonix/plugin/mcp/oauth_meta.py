"""I/O-free OAuth rules for MCP servers (MCP authorization spec, 2025-06-18 / 2025-11-25).

Everything here takes strings and dicts and returns values or raises
:class:`~reasonix.errors.PluginError`; nothing opens a socket. The flow in
:mod:`~reasonix.plugin.mcp.oauth_flow` strings these together:

* ``WWW-Authenticate`` parsing (RFC 6750 §3, RFC 9728 §5.1);
* which URLs to try for Protected Resource Metadata (RFC 9728 §3) and
  Authorization Server Metadata (RFC 8414 §3, OpenID Connect Discovery);
* checking what came back (``resource`` and ``issuer`` must match, MCP-5);
* PKCE S256 (RFC 7636) and the authorization URL with a ``resource``
  indicator (RFC 8707).

Our client's identity, the grant choice and token-endpoint client
authentication live in :mod:`~reasonix.plugin.mcp.oauth_client`.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from reasonix.errors import PluginError
from reasonix.lazy import Pattern, dataclass, field
from reasonix.plugin.mcp.httpwire import same_origin

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AsMetadata",
    "Challenge",
    "Pkce",
    "ResourceMetadata",
    "as_metadata_urls",
    "authorization_url",
    "canonical_resource",
    "challenge_from_headers",
    "legacy_default_metadata",
    "make_pkce",
    "make_state",
    "parse_as_metadata",
    "parse_resource_metadata",
    "parse_www_authenticate",
    "resource_metadata_urls",
    "select_scopes",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
GRANT_CODE = "authorization_code"
GRANT_CLIENT_CREDENTIALS = "client_credentials"
# Enterprise-managed authorization (SEP-990, "cross-app access"): an IdP ID
# token is exchanged (RFC 8693) for an Identity Assertion JWT Authorization
# Grant (ID-JAG), which the MCP server's AS takes as a JWT bearer *grant*
# (RFC 7523 §2.1). We only pass signed tokens along; we sign nothing.
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"

# RFC 7230 token characters, and auth-param = token "=" ( token / quoted-string ).
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = Pattern(
    rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}|[A-Za-z0-9\-._~+/]+=*))\s*'
)
_SCHEME = Pattern(rf"\s*({_TOKEN})(?:\s+|$|(?=,))")
_UNESCAPE = Pattern(r"\\(.)")
_VERIFIER_CHARS = Pattern(r"^[A-Za-z0-9\-._~]{43,128}$")


# -- WWW-Authenticate ----------------------------------------------------------
@dataclass(frozen=True)
class Challenge:
    """One ``Bearer`` challenge of a ``WWW-Authenticate`` header."""

    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def resource_metadata(self) -> str | None:
        """The Protected Resource Metadata URL (RFC 9728 §5.1), if named."""
        return self.params.get("resource_metadata") or None

    @property
    def scopes(self) -> list[str]:
        """The scopes the server asks for (``scope``), in order."""
        return self.params.get("scope", "").split()

    @property
    def error(self) -> str:
        """``invalid_token``, ``insufficient_scope`` … or ``""``."""
        return self.params.get("error", "")


def parse_www_authenticate(value: str | None) -> Challenge | None:
    """The ``Bearer`` challenge in ``value``, or None when there is none.

    A header may list several challenges (``Basic realm="x", Bearer …``); the
    parameters that follow ``Bearer`` up to the next scheme are ours.
    Parameter names are case-insensitive; quoted values are unescaped.
    """
    if not value:
        return None
    pos, scheme = 0, ""
    params: dict[str, str] = {}
    found: dict[str, str] | None = None
    while pos < len(value):
        m = _PARAM.match(value, pos)
        if m and scheme:
            name = m.group(1).lower()
            raw = m.group(2)
            val = _UNESCAPE.sub(r"\1", raw) if raw is not None else (m.group(3) or "")
            params.setdefault(name, val)
            pos = m.end()
            if pos < len(value) and value[pos] == ",":
                pos += 1
            continue
        s = _SCHEME.match(value, pos)
        if not s:
            pos += 1  # a stray character (an empty list element): skip it
            continue
        if scheme.lower() == "bearer" and found is None:
            found = params
        scheme, params, pos = s.group(1), {}, s.end()
        if pos < len(value) and value[pos] == ",":
            pos += 1
    if scheme.lower() == "bearer" and found is None:
        found = params
    return Challenge(found) if found is not None else None


def challenge_from_headers(headers: Mapping[str, str]) -> Challenge | None:
    """The Bearer challenge of a response's headers (header names compared case-insensitively)."""
    for name, value in headers.items():
        if name.lower() == "www-authenticate":
            got = parse_www_authenticate(value)
            if got is not None:
                return got
    return None


# -- resource identifiers and discovery URLs -------------------------------------
def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server, used as the RFC 8707 ``resource``.

    Lower-case scheme and host, no fragment, no default port, and no lone
    trailing ``/`` (the MCP spec's examples: ``https://mcp.example.com/mcp``,
    ``https://mcp.example.com``). The path and query keep their case.
    """
    p = urlsplit(url.strip())
    if p.scheme.lower() not in ("http", "https") or not p.hostname:
        raise PluginError(f"not an http(s) URL: {url!r}")
    scheme = p.scheme.lower()
    host = p.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = p.port
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    path = "" if p.path == "/" else p.path
    return urlunsplit((scheme, host, path, p.query, ""))


def _well_known(url: str, suffix: str, *, insert: bool) -> str:
    """``suffix`` inserted between host and path (RFC 8414 §3.1), or at the root."""
    p = urlsplit(url)
    path = p.path.rstrip("/") if insert else ""
    return urlunsplit((p.scheme, p.netloc, suffix + path, "", ""))


def resource_metadata_urls(server_url: str, challenge: Challenge | None = None) -> list[str]:
    """Where to look for the server's Protected Resource Metadata, in order.

    The URL named by the 401 challenge first, then the well-known URL with the
    server's path inserted, then the root one (RFC 9728 §3.1; MCP 2025-11-25).
    """
    urls: list[str] = []
    named = challenge.resource_metadata if challenge is not None else None
    if named:
        urls.append(named)
    for insert in (True, False):
        url = _well_known(server_url, PRM_WELL_KNOWN, insert=insert)
        if url not in urls:
            urls.append(url)
    return urls


def as_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an authorization server's metadata, in order (MCP 2025-11-25).

    With a path (``https://as.example/tenant``): RFC 8414 path insertion,
    OpenID path insertion, then OpenID path appending. Without one: the RFC 8414
    root, then the OpenID root. A trailing slash on the issuer is ignored.
    """
    p = urlsplit(issuer)
    path = p.path.rstrip("/")
    root = urlunsplit((p.scheme, p.netloc, "", "", ""))
    if not path:
        return [root + AS_WELL_KNOWN, root + OIDC_WELL_KNOWN]
    return [
        root + AS_WELL_KNOWN + path,
        root + OIDC_WELL_KNOWN + path,
        root + path + OIDC_WELL_KNOWN,
    ]


# -- metadata documents --------------------------------------------------------
@dataclass(frozen=True)
class ResourceMetadata:
    """What we use of a Protected Resource Metadata document (RFC 9728 §2)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] = ()


@dataclass(frozen=True)
class AsMetadata:
    """What we use of an Authorization Server Metadata document (RFC 8414 §2)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str = ""
    scopes_supported: tuple[str, ...] = ()
    token_endpoint_auth_methods: tuple[str, ...] = ()
    grant_types_supported: tuple[str, ...] = ()  # () = not published (RFC 8414 default applies)
    client_id_metadata_document_supported: bool = False

    def to_json(self) -> dict[str, Any]:
        """A dict for the token store."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "registration_endpoint": self.registration_endpoint,
            "scopes_supported": list(self.scopes_supported),
            "token_endpoint_auth_methods_supported": list(self.token_endpoint_auth_methods),
            "grant_types_supported": list(self.grant_types_supported),
            "client_id_metadata_document_supported": self.client_id_metadata_document_supported,
        }

    @classmethod
    def from_json(cls, m: Mapping[str, Any]) -> AsMetadata:
        """The inverse of :meth:`to_json` (raises KeyError on a missing endpoint)."""
        return cls(
            issuer=str(m["issuer"]),
            authorization_endpoint=str(m["authorization_endpoint"]),
            token_endpoint=str(m["token_endpoint"]),
            registration_endpoint=str(m.get("registration_endpoint") or ""),
            scopes_supported=_strings(m.get("scopes_supported")),
            token_endpoint_auth_methods=_strings(m.get("token_endpoint_auth_methods_supported")),
            grant_types_supported=_strings(m.get("grant_types_supported")),
            client_id_metadata_document_supported=(
                m.get("client_id_metadata_document_supported") is True
            ),
        )

    def supports_grant(self, grant: str) -> bool:
        """Whether the AS accepts ``grant``; RFC 8414 §2: unpublished = code and implicit."""
        if not self.grant_types_supported:
            return grant in (GRANT_CODE, "implicit")
        return grant in self.grant_types_supported


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str) and v)


def _http_url(value: Any, what: str) -> str:
    if not isinstance(value, str) or urlsplit(value).scheme not in ("http", "https"):
        raise PluginError(f"{what} is missing or not an http(s) URL: {value!r}")
    return value


def parse_resource_metadata(doc: Any, server_url: str) -> ResourceMetadata:
    """Check a Protected Resource Metadata document against the server it describes.

    Its ``resource`` must be the server's URL or a parent path of it on the
    same origin (servers often name their root); anything else is metadata for
    some other resource and is refused, so a token is never obtained for it.
    """
    if not isinstance(doc, dict):
        raise PluginError("protected resource metadata is not a JSON object")
    resource = _http_url(doc.get("resource"), "protected resource metadata 'resource'")
    if not resource_covers(resource, server_url):
        raise PluginError(
            f"protected resource metadata names resource {resource!r}, "
            f"which does not cover {canonical_resource(server_url)!r}"
        )
    servers = _strings(doc.get("authorization_servers"))
    if not servers:
        raise PluginError("protected resource metadata names no authorization_servers")
    for url in servers:
        _http_url(url, "an authorization server in the protected resource metadata")
    return ResourceMetadata(resource, servers, _strings(doc.get("scopes_supported")))


def resource_covers(resource: str, server_url: str) -> bool:
    """True when ``resource`` is ``server_url`` or a path prefix of it on the same origin."""
    try:
        want, have = canonical_resource(server_url), canonical_resource(resource)
    except PluginError:
        return False
    if not same_origin(want, have):
        return False
    want_path = urlsplit(want).path.rstrip("/") + "/"
    have_path = urlsplit(have).path.rstrip("/") + "/"
    return want_path.startswith(have_path)


def parse_as_metadata(doc: Any, issuer: str, *, legacy: bool = False) -> AsMetadata:
    """Check an Authorization Server Metadata document fetched for ``issuer``.

    RFC 8414 §3.3: the document's ``issuer`` must be the one whose well-known
    URL we read (a trailing slash aside: many servers add one). PKCE S256 must
    be advertised — the MCP spec tells clients to refuse an AS that does not.

    ``legacy``: the 2025-03-26 flow, where a server without Protected Resource
    Metadata is its own authorization server and ``issuer`` is its
    *authorization base URL* (the origin, path dropped). That revision knows
    no issuer check, and servers of the era often name an issuer with a path
    (``https://mcp.example/oauth``); any issuer on the base URL's own origin is
    accepted then — the document came from that origin, which is what MCP-5
    protects.
    """
    if not isinstance(doc, dict):
        raise PluginError("authorization server metadata is not a JSON object")
    got = doc.get("issuer")
    if not isinstance(got, str) or not (
        got.rstrip("/") == issuer.rstrip("/") or (legacy and _same_origin_url(got, issuer))
    ):
        raise PluginError(f"authorization server metadata issuer {got!r} does not match {issuer!r}")
    grants = _strings(doc.get("grant_types_supported"))
    needs_pkce = not grants or GRANT_CODE in grants  # PKCE guards the code grant only
    if needs_pkce and "S256" not in _strings(doc.get("code_challenge_methods_supported")):
        raise PluginError(f"authorization server {issuer} does not advertise PKCE S256")
    registration = doc.get("registration_endpoint")
    return AsMetadata(
        issuer=got,
        authorization_endpoint=_http_url(
            doc.get("authorization_endpoint"), "authorization_endpoint"
        ),
        token_endpoint=_http_url(doc.get("token_endpoint"), "token_endpoint"),
        registration_endpoint=(
            _http_url(registration, "registration_endpoint") if registration else ""
        ),
        scopes_supported=_strings(doc.get("scopes_supported")),
        token_endpoint_auth_methods=_strings(doc.get("token_endpoint_auth_methods_supported")),
        grant_types_supported=grants,
        client_id_metadata_document_supported=(
            doc.get("client_id_metadata_document_supported") is True
        ),
    )


def _same_origin_url(a: str, b: str) -> bool:
    try:
        return same_origin(canonical_resource(a), canonical_resource(b))
    except PluginError:
        return False


def legacy_default_metadata(base_url: str) -> AsMetadata:
    """The endpoints a 2025-03-26 client assumes when a server publishes no metadata.

    MCP 2025-03-26 "Fallbacks for Servers without Metadata Discovery": the
    authorization base URL (the server URL's origin, path discarded) with
    ``/authorize``, ``/token`` and ``/register``. Used only when neither
    Protected Resource Metadata nor Authorization Server Metadata exists.
    """
    p = urlsplit(base_url)
    root = urlunsplit((p.scheme, p.netloc, "", "", ""))
    return AsMetadata(
        issuer=root,
        authorization_endpoint=root + "/authorize",
        token_endpoint=root + "/token",
        registration_endpoint=root + "/register",
    )


def select_scopes(challenge: Challenge | None, prm: ResourceMetadata | None) -> list[str]:
    """The scopes to ask for (MCP 2025-11-25): the challenge's, else every supported one."""
    if challenge is not None and challenge.scopes:
        return challenge.scopes
    return list(prm.scopes_supported) if prm is not None else []


def union_scopes(*groups: Iterable[str]) -> list[str]:
    """Scopes of every group, first occurrence first (for step-up)."""
    out: list[str] = []
    for group in groups:
        for s in group:
            if s not in out:
                out.append(s)
    return out


# -- PKCE, state and the authorization URL ---------------------------------------
@dataclass(frozen=True)
class Pkce:
    """A PKCE verifier and its S256 challenge (RFC 7636 §4.1–4.2)."""

    verifier: str
    challenge: str


def s256(verifier: str) -> str:
    """BASE64URL(SHA256(verifier)) without padding."""
    if not _VERIFIER_CHARS.match(verifier):
        raise ValueError("a PKCE verifier is 43–128 unreserved characters")
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def make_pkce() -> Pkce:
    """A fresh verifier (64 random bytes → 86 characters) and its challenge."""
    verifier = secrets.token_urlsafe(64)
    return Pkce(verifier, s256(verifier))


def make_state() -> str:
    """An unguessable ``state`` value (CSRF protection, MCP-5)."""
    return secrets.token_urlsafe(32)


def authorization_url(
    endpoint: str,
    *,
    client_id: str,
    redirect_uri: str,
    pkce: Pkce,
    state: str,
    resource: str,
    scopes: Sequence[str] = (),
) -> str:
    """The URL the user's browser opens; existing query parameters of the endpoint are kept."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    p = urlsplit(endpoint)
    query = (p.query + "&" if p.query else "") + urlencode(params, quote_via=quote)
    return urlunsplit((p.scheme, p.netloc, p.path, query, ""))
