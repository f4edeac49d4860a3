"""The ``openai`` kind: OpenAI-compatible streaming chat completions (PROV-4).

Importing this package registers the kind. Target: ``request_url`` verbatim,
else legacy ``chat_url`` verbatim, else ``<base_url>/chat/completions``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import ProviderAPIError
from reasonix.provider import register
from reasonix.provider.base import Folder, SSEProvider, host_of, join_url
from reasonix.provider.openai.fold import OpenAIFolder
from reasonix.provider.openai.wire import encode_body
from reasonix.provider.sampling import configured
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, Request

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
        return encode_body(
            request,
            extra=extra,
            max_tokens_field=field,
            sampling=configured(request, self.cfg),
            reasoning_on_tool_calls=bool(
                getattr(self.cfg, "reasoning_content_on_tool_calls", False)
            ),
        )

    def stream(self, request: Request, cancel: Cancel) -> Iterator[Chunk]:
        """As :meth:`SSEProvider.stream`; a whole ``chat.completion`` JSON body (a server
        that ignores ``stream: true``) folds like one event instead of failing."""
        try:
            return super().stream(request, cancel)
        except ProviderAPIError as err:
            if err.status != 200:
                raise
            try:
                obj = json.loads(err.body)
            except ValueError:
                raise err from None
            if not isinstance(obj, dict) or obj.get("error") or not obj.get("choices"):
                raise
            folder = self.folder(request)
            chunks = folder.feed(ServerSentEvent(data=err.body))
            folder.done = True
            return iter([*chunks, *folder.finish()])

    def folder(self, request: Request) -> Folder:
        """A fresh fold."""
        return OpenAIFolder(f"{self.name} ({host_of(self.url()) or 'openai'})")


register("openai", OpenAIProvider)
