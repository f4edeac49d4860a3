"""The ``openai`` kind: OpenAI-compatible streaming chat completions (PROV-4).

Importing this package registers the kind. Target: ``request_url`` verbatim,
else legacy ``chat_url`` verbatim, else ``<base_url>/chat/completions``.
"""

from __future__ import annotations

from reasonix.provider import register
from reasonix.provider.base import Folder, SSEProvider, host_of, join_url
from reasonix.provider.openai.fold import OpenAIFolder
from reasonix.provider.openai.wire import encode_body
from reasonix.provider.types import Request

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["OpenAIProvider"]


class OpenAIProvider(SSEProvider):
    """Chat completions over SSE; any OpenAI-compatible vendor is just a config."""

    kind = "openai"

    def url(self) -> str:
        """request_url > chat_url > base_url + /chat/completions (PROV-7/8)."""
        cfg = self.cfg
        return cfg.request_url or cfg.chat_url or join_url(cfg.base_url, "chat/completions")

    def auth_headers(self, key: str) -> dict[str, str]:
        """Bearer auth when a key exists."""
        return {"Authorization": f"Bearer {key}"} if key else {}

    def encode(self, request: Request) -> dict[str, Any]:
        """Chat-completions body; api.openai.com wants max_completion_tokens."""
        field = "max_completion_tokens" if host_of(self.url()) == "api.openai.com" else "max_tokens"
        extra = getattr(self.cfg, "extra_body", None) or {}
        return encode_body(request, extra=extra, max_tokens_field=field)

    def folder(self, request: Request) -> Folder:
        """A fresh fold."""
        return OpenAIFolder(f"{self.name} ({host_of(self.url()) or 'openai'})")


register("openai", OpenAIProvider)
