"""Provider-layer data types shared by every provider kind.

These are plain frozen-ish dataclasses: the agent builds a :class:`Request`,
a provider turns it into wire bytes and yields :class:`Chunk` values back.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "FINISH_REASONS",
    "Chunk",
    "ChunkKind",
    "Message",
    "Request",
    "Role",
    "ToolCall",
    "ToolSchema",
    "Usage",
    "WebSearchCall",
    "WebSearchResult",
    "arguments_object",
]


class Role(str, enum.Enum):
    """Who said a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass
class ToolCall:
    """One complete tool call: id, tool name and the raw JSON argument text."""

    id: str
    name: str
    arguments: str = "{}"
    # the output limit cut the call before its arguments were complete (the kind's
    # fold sets it); such a call is never run (reasonix.agent.loop)
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used in transcripts."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolCall:
        """Inverse of :meth:`to_dict`."""
        return cls(id=str(d["id"]), name=str(d["name"]), arguments=str(d.get("arguments", "{}")))


@dataclass
class Message:
    """One conversation message.

    ``reasoning`` holds the model's thinking text where a wire format needs it
    replayed (DeepSeek reasoning_content, Anthropic thinking blocks);
    ``reasoning_meta`` holds opaque replay data such as an Anthropic thinking
    signature or Responses reasoning items.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""
    name: str = ""
    reasoning: str = ""
    reasoning_meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; empty optional fields are omitted (PROV-17)."""
        d: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [tc.to_dict() for tc in self.tool_calls]
        if self.tool_call_id:
            d["tool_call_id"] = self.tool_call_id
        if self.name:
            d["name"] = self.name
        if self.reasoning:
            d["reasoning"] = self.reasoning
        if self.reasoning_meta:
            d["reasoning_meta"] = self.reasoning_meta
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        """Inverse of :meth:`to_dict`."""
        return cls(
            role=Role(d["role"]),
            content=str(d.get("content") or ""),
            tool_calls=[ToolCall.from_dict(t) for t in d.get("tool_calls") or []],
            tool_call_id=str(d.get("tool_call_id") or ""),
            name=str(d.get("name") or ""),
            reasoning=str(d.get("reasoning") or ""),
            reasoning_meta=dict(d.get("reasoning_meta") or {}),
        )


@dataclass(frozen=True)
class ToolSchema:
    """What the model sees of a tool: name, description, JSON-Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class Request:
    """Everything one model call needs.

    ``max_tokens`` is the already-resolved wire value: None means "omit the
    optional field" (see provider.budget). ``effort`` is a reasoning-effort
    hint ("low"/"medium"/"high") or "".
    """

    model: str
    messages: list[Message]
    system: str = ""
    tools: list[ToolSchema] = field(default_factory=list)
    temperature: float | None = None
    max_tokens: int | None = None
    effort: str = ""


@dataclass(frozen=True)
class WebSearchResult:
    """One hit of a server-side web search: the page title ("" when unreported) and URL."""

    title: str
    url: str


@dataclass(frozen=True)
class WebSearchCall:
    """A web search the vendor ran on its side during one answer (not a local tool).

    ``id`` is the vendor's id (``srvtoolu_…``, ``ws_…``); ``query`` what the
    model searched for; ``results`` the hits in the vendor's order; ``error``
    the vendor's error code when the search failed ("" when it did not).
    """

    id: str
    query: str
    results: tuple[WebSearchResult, ...] = ()
    error: str = ""


@dataclass
class Usage:
    """Token accounting for one model call, normalised across wire formats.

    ``input_tokens`` is the whole prompt, cached parts included (Anthropic's
    separate counters are summed); ``cache_read_tokens`` and
    ``cache_write_tokens`` are parts of it; ``reasoning_tokens`` is part of
    ``output_tokens``. ``web_search_requests`` counts the server-side searches
    the vendor ran (and bills per call) for this request.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    web_search_requests: int = 0

    def add(self, other: Usage) -> None:
        """Accumulate ``other`` into this usage."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.web_search_requests += other.web_search_requests


# How a response ended, in one vocabulary for every provider kind (Chunk.finish_reason).
FINISH_REASONS = ("complete", "tool_calls", "length", "refusal", "content_filter", "error")


class ChunkKind(str, enum.Enum):
    """What a streamed :class:`Chunk` carries."""

    TEXT = "text"
    REASONING = "reasoning"
    TOOL_CALL = "tool_call"
    USAGE = "usage"
    WEB_SEARCH = "web_search"
    DONE = "done"
    ERROR = "error"


@dataclass
class Chunk:
    """One streamed piece of a model answer.

    Exactly one payload is meaningful per kind: ``text`` for TEXT/REASONING,
    ``tool_call`` (always complete) for TOOL_CALL, ``usage`` for USAGE,
    ``search`` for WEB_SEARCH (yielded as soon as the vendor's search result
    arrives), ``finish_reason`` and ``reasoning_meta`` for DONE, ``error`` for ERROR.

    ``finish_reason`` is one of :data:`FINISH_REASONS`, whatever the vendor
    called it: ``complete`` (the model ended its answer), ``tool_calls``,
    ``length`` (the output limit cut it), ``refusal`` (the model or the
    provider declined; the refusal text itself streams as TEXT), ``content_filter``
    (the provider's filter cut or blocked it) and ``error`` (the provider ended
    the response as failed). ``detail`` is the vendor's own explanation where it
    gives one (an incomplete reason, a refusal's category). ``reasoning_meta`` holds
    replay data keyed by kind (``"anthropic"``, ``"responses"``) for the caller
    to store in the assistant ``Message.reasoning_meta``. The built-in kinds
    raise typed errors from the iterator instead of yielding ERROR chunks.
    """

    kind: ChunkKind
    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None
    finish_reason: str = ""
    detail: str = ""
    reasoning_meta: dict[str, Any] = field(default_factory=dict)
    error: Exception | None = None
    search: WebSearchCall | None = None


def arguments_object(arguments: str) -> dict[str, Any]:
    """A tool call's JSON argument text as an object, ``{}`` when it is not one.

    For showing a call (the frontends, ``serve``, ``acp``): a tool checks its own
    arguments strictly and reports what is wrong (``reasonix.tool.base.parse_args``).
    """
    import json  # loaded by then: whatever produced the call text decoded JSON

    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
