"""The few HTTP requests OAuth makes: metadata GETs, registration and token POSTs.

They go through ``urllib`` so the user's proxy settings (``HTTPS_PROXY``,
``HTTP_PROXY``, ``NO_PROXY`` — what Reasonix resolves for every outgoing
request, MCP-7) apply unchanged. A redirect to another origin is refused: a
metadata document must come from the origin we asked (MCP-5), and a token
request must never carry a client secret somewhere else.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from reasonix.errors import PluginError
from reasonix.lazy import dataclass
from reasonix.plugin.mcp.httpwire import same_origin

if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["HttpAnswer", "get_json", "post_form", "post_json"]

TIMEOUT = 30.0
_MAX_BODY = 1024 * 1024
USER_AGENT = "reasonix-mcp-oauth"


@dataclass(frozen=True)
class HttpAnswer:
    """A status and a decoded JSON body (None when the body was not JSON)."""

    status: int
    body: Any
    text: str


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        if not same_origin(req.full_url, newurl):
            raise PluginError(f"refused a redirect from {req.full_url} to another origin: {newurl}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener() -> urllib.request.OpenerDirector:
    # build_opener includes ProxyHandler(), which reads the proxy environment.
    return urllib.request.build_opener(_SameOriginRedirects())


def _exchange(req: urllib.request.Request, timeout: float) -> HttpAnswer:
    req.add_header("Accept", "application/json")
    req.add_header("User-Agent", USER_AGENT)
    try:
        with _opener().open(req, timeout=timeout) as resp:
            status, raw = int(resp.status), resp.read(_MAX_BODY)
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read(_MAX_BODY)
        exc.close()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PluginError(f"{req.get_method()} {req.full_url} failed: {reason}") from exc
    text = raw.decode("utf-8", "replace")
    try:
        body: Any = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    return HttpAnswer(status, body, text)


def get_json(url: str, *, timeout: float = TIMEOUT) -> HttpAnswer:
    """GET ``url`` (a metadata document), adding the MCP protocol version header."""
    req = urllib.request.Request(url, method="GET")
    req.add_header("MCP-Protocol-Version", "2025-06-18")
    return _exchange(req, timeout)


def post_form(
    url: str,
    form: Mapping[str, str],
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> HttpAnswer:
    """POST ``application/x-www-form-urlencoded`` (a token request)."""
    data = urlencode(dict(form)).encode("ascii")
    req = urllib.request.Request(url, data=data, method="POST")
    req.add_header("Content-Type", "application/x-www-form-urlencoded")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    return _exchange(req, timeout)


def post_json(url: str, doc: Mapping[str, Any], *, timeout: float = TIMEOUT) -> HttpAnswer:
    """POST a JSON document (a client registration)."""
    req = urllib.request.Request(url, data=json.dumps(doc).encode("utf-8"), method="POST")
    req.add_header("Content-Type", "application/json")
    return _exchange(req, timeout)


def oauth_error(answer: HttpAnswer) -> str:
    """``invalid_grant: the code was already used`` from an RFC 6749 §5.2 error body."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        desc = body.get("error_description")
        return str(body["error"]) + (f": {desc}" if isinstance(desc, str) and desc else "")
    return f"HTTP {answer.status}" + (f": {answer.text[:200]}" if answer.text.strip() else "")
