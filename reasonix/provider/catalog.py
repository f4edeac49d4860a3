"""Ask an endpoint which models it serves (``GET …/models``), and say failures plainly.

Used by ``reasonix setup`` (test a key, list models to choose from) and
``reasonix doctor`` (is the provider reachable, is the key accepted). One
GET, a short timeout, no retries: a health check should answer fast.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

from reasonix.errors import (
    ProviderAPIError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
)
from reasonix.provider.base import join_url
from reasonix.provider.http import USER_AGENT, CertificateError, translate

if TYPE_CHECKING:
    from typing import Any

__all__ = ["list_models", "models_url", "plain_words"]

ANTHROPIC_VERSION = "2023-06-01"
BODY_LIMIT = 4 * 1024 * 1024  # a model list is never larger than this


def models_url(kind: str, base_url: str) -> str:
    """Where ``kind`` lists models: ``<base>/models``; Anthropic's is ``<base>/v1/models``."""
    base = base_url.rstrip("/")
    if kind == "anthropic" and not base.endswith("/v1"):
        return join_url(base, "v1/models")
    return join_url(base, "models")


def _headers(kind: str, api_key: str, extra: dict[str, str] | None) -> dict[str, str]:
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if api_key:
        if kind == "anthropic":
            headers["x-api-key"] = api_key
            headers["anthropic-version"] = ANTHROPIC_VERSION
        else:
            headers["Authorization"] = f"Bearer {api_key}"
    headers.update(extra or {})
    return headers


def list_models(
    kind: str,
    base_url: str,
    api_key: str = "",
    *,
    timeout: float = 10.0,
    headers: dict[str, str] | None = None,
) -> list[str]:
    """The model ids the endpoint lists, in its order, without repeats.

    Raises ProviderAPIError (HTTP status), ProviderConnectionError,
    ProviderTimeout or ProviderError (an answer that is not a model list).
    """
    url = models_url(kind, base_url)
    request = urllib.request.Request(url, headers=_headers(kind, api_key, headers), method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            data = resp.read(BODY_LIMIT + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if isinstance(exc, ValueError):  # urllib: "unknown url type"
            raise ProviderConnectionError(f"{url}: not an http(s) address") from None
        raise translate(exc, where=url, streaming=False) from None
    return _ids(data, url)


def _ids(data: bytes, url: str) -> list[str]:
    try:
        body: Any = json.loads(data[:BODY_LIMIT].decode("utf-8", "replace"))
    except json.JSONDecodeError:
        raise ProviderError(f"{url}: the answer is not JSON, so this is not a model API") from None
    items = body.get("data", body.get("models")) if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise ProviderError(f"{url}: the answer has no model list")
    ids: dict[str, None] = {}
    for item in items:
        name = item if isinstance(item, str) else None
        if isinstance(item, dict):
            name = item.get("id") or item.get("name") or item.get("model")
        if isinstance(name, str) and name:
            ids[name] = None
    return list(ids)


def plain_words(err: BaseException) -> str:
    """A failure as a new user would want to read it, with what to do about it."""
    if isinstance(err, ProviderAPIError):
        status = err.status
        if status in (401, 403):
            return f"the key was rejected (HTTP {status}): check that it is right and active"
        if status == 404:
            return "the address answers but has no model list there (HTTP 404): check the URL"
        if status == 429:
            return "the endpoint is rate-limiting (HTTP 429): wait a moment and try again"
        if status >= 500:
            return f"the server had a problem (HTTP {status}): try again later"
        return f"the endpoint refused the request (HTTP {status}): {err}"
    if isinstance(err, CertificateError):
        return f"the TLS certificate could not be verified: {err}"
    if isinstance(err, ProviderTimeout):
        return "no answer in time: is the address right and the server running?"
    if isinstance(err, ProviderConnectionError):
        text = str(err)
        if "refused" in text.lower():
            return "nothing is listening at that address: is the server running?"
        if "name or service not known" in text.lower() or "nodename" in text.lower():
            return "the host name does not resolve: check the URL"
        return f"cannot connect: {text}"
    return str(err)
