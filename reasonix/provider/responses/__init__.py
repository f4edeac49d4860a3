"""The ``responses`` kind: OpenAI Responses API streaming, stateless replay (D2).

Importing this package registers the kind. Target: ``request_url`` verbatim,
else ``<base_url>/responses``; ``chat_url`` is ignored (PROV-8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.provider import register
from reasonix.provider.base import Folder, SSEProvider, host_of, join_url
from reasonix.provider.responses.fold import ResponsesFolder
from reasonix.provider.responses.wire import encode_body
from reasonix.provider.sampling import configured
from reasonix.provider.types import Request

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ResponsesProvider"]


class ResponsesProvider(SSEProvider):
    """Responses over SSE with ``store: false``; the full input is sent every turn."""

    kind = "responses"
    supports_web_search = True  # the hosted web_search tool

    def url(self) -> str:
        """request_url, else base_url + /responses."""
        cfg = self.cfg
        return str(cfg.request_url or join_url(cfg.base_url, "responses"))

    def auth_headers(self, key: str) -> dict[str, str]:
        """Bearer auth when a key exists."""
        return {"Authorization": f"Bearer {key}"} if key else {}

    def encode(self, request: Request) -> dict[str, Any]:
        """Responses body."""
        search = bool(getattr(self.cfg, "web_search", False))
        return encode_body(
            request,
            extra=getattr(self.cfg, "extra_body", None) or {},
            web_search=search,
            sampling=configured(request, self.cfg),
        )

    def folder(self, request: Request) -> Folder:
        """A fresh fold."""
        return ResponsesFolder(f"{self.name} ({host_of(self.url()) or 'responses'})")


register("responses", ResponsesProvider)
