"""What the three built-in kinds share: the streaming skeleton and small helpers.

A kind supplies three things: the request target and headers, a pure
``encode(request) -> dict`` body builder, and a pure :class:`Folder` that
turns decoded SSE events into :class:`Chunk` values. :class:`SSEProvider`
wires them to :class:`~reasonix.provider.http.HTTPClient` and the SSE decoder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from reasonix.cancel import Cancel
from reasonix.errors import MissingAPIKey, ProviderAPIError, ProviderError, ProviderStreamError
from reasonix.provider.http import HTTPClient, StreamResponse, vendor_message
from reasonix.provider.sampling import Refusals
from reasonix.provider.sse import ServerSentEvent, SSEDecoder
from reasonix.provider.types import Chunk, Request, ToolCall

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Folder",
    "PartialCall",
    "SSEProvider",
    "as_int",
    "dumps",
    "host_of",
    "join_url",
    "load_event",
    "merge_extra",
    "parse_arguments",
    "stream_error",
]


class Folder(Protocol):
    """Pure fold of one response's events into chunks (one instance per call)."""

    done: bool  # the vendor's end-of-response event was seen

    def feed(self, event: ServerSentEvent) -> list[Chunk]:
        """Chunks completed by ``event``: text/reasoning deltas in order."""
        ...

    def finish(self) -> list[Chunk]:
        """At the end: complete tool calls, usage, DONE; raise if the stream was cut."""
        ...


def dumps(obj: Any) -> bytes:
    """The one JSON encoding for request bodies: compact, UTF-8, key order as built."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def load_event(event: ServerSentEvent, where: str) -> Any:
    """Parse an event's JSON data, or raise a stream error naming the vendor."""
    try:
        return json.loads(event.data)
    except ValueError:
        snippet = event.data[:120]
        raise ProviderStreamError(f"{where}: malformed event data: {snippet!r}") from None


def stream_error(where: str, obj: Any) -> ProviderError:
    """A vendor's in-stream error event as a typed error.

    A context overflow reported as an event (LM Studio answers 200 and then
    ``event: error`` "Input does not fit in context length …") becomes the
    same :class:`ProviderAPIError` a 400 would have been, so the session
    learns the window and compacts instead of failing on a broken stream.
    """
    body = json.dumps(obj, ensure_ascii=False)
    message = vendor_message(body)
    overflow = ProviderAPIError(400, message, body=body)
    if overflow.is_context_overflow:
        return overflow
    return ProviderStreamError(f"{where}: error from the server mid-stream: {message}")


def as_int(value: Any) -> int:
    """A token counter from vendor JSON (missing or null -> 0)."""
    return value if isinstance(value, int) else 0


def join_url(base: str, path: str) -> str:
    """``base`` + ``path`` with exactly one slash between them."""
    return base.rstrip("/") + "/" + path.lstrip("/")


def host_of(url: str) -> str:
    """The lower-cased host name of ``url`` ("" when it has none)."""
    return (urlsplit(url).hostname or "").lower()


def merge_extra(body: dict[str, Any], extra: Mapping[str, Any], core: frozenset[str]) -> None:
    """Add ``extra_body`` keys to ``body``; keys in ``core`` are never replaced."""
    for key, value in extra.items():
        if key not in core:
            body[key] = value


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool-call argument JSON as an object (for wire formats that want one)."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class PartialCall:
    """A tool call being assembled from deltas (``parts`` of its arguments' text).

    A plain class, not a dataclass: a builder the stream folds fill in place (issue 39).
    """

    def __init__(self, id: str = "", name: str = "", parts: list[str] | None = None) -> None:
        self.id = id
        self.name = name
        self.parts: list[str] = [] if parts is None else parts

    def complete(self, fallback_id: str, where: str) -> ToolCall:
        """The finished call; a call that never got a name is a broken stream."""
        if not self.name:
            raise ProviderStreamError(f"{where}: tool call {self.id or fallback_id} has no name")
        return ToolCall(
            id=self.id or fallback_id, name=self.name, arguments="".join(self.parts) or "{}"
        )


JSON_REPLY_LIMIT = 1 << 20


def _json_instead_of_stream(resp: StreamResponse) -> ProviderAPIError:
    # Some gateways answer 200 with a JSON error (quota, moderation) even when
    # asked to stream; its message is worth more than "stream ended early".
    parts: list[bytes] = []
    size = 0
    with resp:
        for chunk in resp.chunks():
            parts.append(chunk)
            size += len(chunk)
            if size > JSON_REPLY_LIMIT:
                break
    text = b"".join(parts).decode("utf-8", "replace")
    message = vendor_message(text)
    if '"error"' not in text:
        message = f"expected an event stream, got a JSON body: {message}"
    return ProviderAPIError(resp.status, message, request_id=resp.request_id, body=text)


class SSEProvider:
    """Streaming skeleton shared by the built-in kinds.

    ``cfg`` is a resolved provider config (``reasonix.config.ProviderConfig``
    or anything with the same attributes); it is read structurally because the
    provider layer may not import config.
    """

    kind = ""
    # True when the kind maps ``web_search = true`` to the vendor's server-side search;
    # otherwise the setting is ignored (the request is unchanged) and the caller says so.
    supports_web_search = False

    def __init__(self, cfg: Any, client: HTTPClient | None = None) -> None:
        self.cfg = cfg
        self.name: str = str(getattr(cfg, "name", "") or self.kind)
        if client is None:
            client = HTTPClient()
            urls = (getattr(cfg, k, "") for k in ("request_url", "chat_url", "base_url"))
            if any(str(u or "").lower().startswith("https:") for u in urls):
                client.warm_tls()  # ready by the first request instead of delaying it
        self.client = client
        self.refusals = Refusals()  # parameters a model refused this session
        self._notices: list[str] = []

    # -- per-kind hooks --------------------------------------------------------
    def url(self) -> str:
        """The request target."""
        raise NotImplementedError

    def auth_headers(self, key: str) -> dict[str, str]:
        """Authentication (and protocol) headers for ``key``."""
        raise NotImplementedError

    def encode(self, request: Request) -> dict[str, Any]:
        """The request body as a JSON-ready dict."""
        raise NotImplementedError

    def folder(self, request: Request) -> Folder:
        """A fresh fold for one response."""
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        """Auth headers plus the config's extra ``headers`` (which win)."""
        key = str(getattr(self.cfg, "api_key", "") or "")
        env = str(getattr(self.cfg, "api_key_env", "") or "")
        if not key and env:
            raise MissingAPIKey(
                f"provider {self.name!r}: {env} is not set; put {env}=… in the Reasonix "
                f"home .env file (~/.reasonix/.env or $REASONIX_HOME/.env) or export it"
            )
        out = self.auth_headers(key)
        out.update({str(k): str(v) for k, v in (getattr(self.cfg, "headers", None) or {}).items()})
        return out

    def take_notices(self) -> list[str]:
        """What the provider changed on its own since last asked (a parameter a model
        refused and is now sent without); the caller shows them (the agent loop)."""
        notes, self._notices = self._notices, []
        return notes

    def stream(self, request: Request, cancel: Cancel) -> Iterator[Chunk]:
        """Send ``request``; failures before the first byte raise here (PROV-1).

        A 400 that names an optional parameter as unsupported (temperature, top_p,
        reasoning effort, max_tokens …) is answered by sending the request again
        without it (once per parameter); the model is remembered as refusing it for
        the rest of this provider's life and a notice says so (:meth:`take_notices`).
        """
        while True:
            body = self.encode(request)
            self.refusals.apply(request.model, body)
            try:
                resp = self.client.post_stream(self.url(), self.headers(), dumps(body), cancel)
            except ProviderAPIError as err:
                note = self.refusals.learn(request.model, err, body)
                if not note:
                    raise
                self._notices.append(f"{self.name}: {note}")
                continue
            break
        if "json" in str(resp.headers.get("Content-Type", "")).lower():
            raise _json_instead_of_stream(resp)
        return self._events(resp, self.folder(request))

    def _events(self, resp: StreamResponse, folder: Folder) -> Iterator[Chunk]:
        decoder = SSEDecoder()
        with resp:
            for data in resp.chunks():
                for event in decoder.feed(data):
                    yield from folder.feed(event)
                    if folder.done:
                        break
                if folder.done:
                    break
            yield from folder.finish()
