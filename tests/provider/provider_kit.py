"""Helpers shared by the provider tests (imported as ``kit``; not a test module)."""

from __future__ import annotations

from typing import Any

from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.provider.anthropic import AnthropicProvider
from reasonix.provider.base import SSEProvider
from reasonix.provider.http import HTTPClient, RetryPolicy, Timeouts
from reasonix.provider.openai import OpenAIProvider
from reasonix.provider.responses import ResponsesProvider
from reasonix.provider.types import Chunk, ChunkKind, Message, Request, Role

KINDS = ["openai", "anthropic", "responses"]
CLASSES: dict[str, type[SSEProvider]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
    "responses": ResponsesProvider,
}


class Sleeps:
    """An injected backoff sleep: records delays, returns at once, honours cancel."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float, cancel: Cancel) -> bool:
        self.delays.append(seconds)
        return cancel.cancelled


def client(sleeps: Sleeps | None = None, *, idle: float = 2.0, **retry: Any) -> HTTPClient:
    """A client with test-sized timeouts and an instant, recorded backoff."""
    return HTTPClient(
        retry=RetryPolicy(**retry),
        timeouts=Timeouts(connect=2.0, idle=idle),
        sleep=sleeps or Sleeps(),
        rand=lambda: 1.0,
    )


def provider(kind: str, url: str, *, http: HTTPClient | None = None, **cfg: Any) -> SSEProvider:
    """A provider of ``kind`` pointed at ``url`` (a fake's base URL)."""
    base = url + "/v1" if kind != "anthropic" else url
    conf = ProviderConfig(name=f"test-{kind}", kind=kind, base_url=base, api_key="sk-test", **cfg)
    return CLASSES[kind](conf, client=http or client())


def request(text: str = "hello", **kw: Any) -> Request:
    """A one-message request."""
    return Request(model="fake-model", messages=[Message(Role.USER, text)], **kw)


def collect(
    p: SSEProvider, req: Request | None = None, cancel: Cancel | None = None
) -> list[Chunk]:
    """Every chunk of one call."""
    return list(p.stream(req or request(), cancel or Cancel()))


def kinds_of(chunks: list[Chunk]) -> list[ChunkKind]:
    """The sequence of chunk kinds, with consecutive duplicates collapsed."""
    out: list[ChunkKind] = []
    for c in chunks:
        if not out or out[-1] is not c.kind:
            out.append(c.kind)
    return out


def text(chunks: list[Chunk], kind: ChunkKind = ChunkKind.TEXT) -> str:
    """The joined text of one chunk kind."""
    return "".join(c.text for c in chunks if c.kind is kind)
