"""The ``anthropic`` kind: Anthropic-compatible Messages streaming (D2).

Importing this package registers the kind. Target: ``request_url`` verbatim,
else ``<base_url>/v1/messages`` (``/messages`` when base_url already ends in
``/v1``). ``chat_url`` is ignored (PROV-8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.provider import register
from reasonix.provider.anthropic.fold import AnthropicFolder
from reasonix.provider.anthropic.wire import encode_body
from reasonix.provider.base import Folder, SSEProvider, host_of, join_url
from reasonix.provider.budget import resolve_max_tokens
from reasonix.provider.sampling import configured
from reasonix.provider.types import Request

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ANTHROPIC_VERSION", "AnthropicProvider"]

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider(SSEProvider):
    """Messages API over SSE with prompt-cache breakpoints and thinking replay."""

    kind = "anthropic"
    supports_web_search = True  # the Messages server tool (PROV: web_search = true)

    def url(self) -> str:
        """request_url, else base_url + /v1/messages."""
        cfg = self.cfg
        if cfg.request_url:
            return str(cfg.request_url)
        base = str(cfg.base_url).rstrip("/")
        return join_url(base, "messages" if base.endswith("/v1") else "v1/messages")

    def auth_headers(self, key: str) -> dict[str, str]:
        """x-api-key plus the mandatory anthropic-version."""
        out = {"anthropic-version": ANTHROPIC_VERSION}
        if key:
            out["x-api-key"] = key
        return out

    def encode(self, request: Request) -> dict[str, Any]:
        """Messages body; max_tokens falls back to the automatic budget (PROV-13)."""
        max_tokens = request.max_tokens
        if max_tokens is None:
            cw = getattr(self.cfg, "context_window_for", None)
            window = int(cw(request.model)) if callable(cw) else 0
            max_tokens = resolve_max_tokens(
                0,
                kind="anthropic",
                host=host_of(self.url()),
                context_window=window,
                prompt_tokens=0,
            )
        extra = getattr(self.cfg, "extra_body", None) or {}
        search = bool(getattr(self.cfg, "web_search", False))
        return encode_body(
            request,
            max_tokens=max_tokens or 1,
            extra=extra,
            web_search=search,
            sampling=configured(request, self.cfg),
        )

    def folder(self, request: Request) -> Folder:
        """A fresh fold."""
        return AnthropicFolder(f"{self.name} ({host_of(self.url()) or 'anthropic'})")


register("anthropic", AnthropicProvider)
