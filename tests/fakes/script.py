"""Script steps for the fake provider servers: what to answer, request by request.

A script is a list of steps. Each incoming POST consumes the next step:

* a :class:`Turn` streams one model answer (reasoning, text, tool calls, usage),
  optionally broken on purpose (``cut_after``, ``malformed_after``,
  ``error_after``, ``delay``);
* a :class:`Fault` answers without a stream (an HTTP error status, a reset
  connection, a stall).

Both round-trip through plain dicts so a script can live in a JSON file for
``python -m fakes.serve``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Fault", "SearchSpec", "Step", "ToolSpec", "Turn", "split_text", "step_from_dict"]


@dataclass
class ToolSpec:
    """One tool call the fake model makes; ``arguments`` is the exact JSON text."""

    name: str
    arguments: str = "{}"
    id: str = ""


@dataclass
class SearchSpec:
    """One server-side web search the fake vendor runs before the answer text.

    ``results`` are ``(title, url)`` pairs; ``error`` (e.g. "max_uses_exceeded")
    renders the vendor's search error instead of results; ``id`` "" -> generated.
    """

    query: str
    results: list[tuple[str, str]] = field(default_factory=list)
    error: str = ""
    id: str = ""


def _default_usage() -> dict[str, int]:
    return {
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }


@dataclass
class Turn:
    """One streamed model answer.

    ``usage`` uses Reasonix's normalised names: ``input_tokens`` is the whole
    prompt (cached part included), ``cache_read_tokens`` / ``cache_write_tokens``
    are parts of it; each wire format renders them its own way.

    Fault knobs (all counted in SSE events of the rendered stream):
    ``cut_after=k`` closes the connection after k events; ``malformed_after=k``
    inserts a garbage ``data:`` line after k events and carries on;
    ``error_after=k`` sends the vendor's in-stream error event after k events
    and ends the stream; ``delay`` sleeps that many seconds before every event
    (slow drip); ``think`` sleeps that many seconds before the answer's first
    byte, its status line (a model's time to first token).
    """

    text: str | list[str] = ""
    reasoning: str | list[str] = ""
    tool_calls: list[ToolSpec] = field(default_factory=list)
    searches: list[SearchSpec] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=_default_usage)
    finish_reason: str = ""  # "" = derived: tool calls -> tool use, else stop
    signature: str = "sig-fake"  # anthropic thinking signature
    encrypted: str = ""  # responses reasoning encrypted_content
    arg_pieces: int = 3  # each argument JSON is split into this many deltas
    delay: float = 0.0
    think: float = 0.0
    cut_after: int | None = None
    malformed_after: int | None = None
    error_after: int | None = None
    error_message: str = "fake in-stream error"
    model: str = "fake-model"

    # -- constructors -------------------------------------------------------
    def __post_init__(self) -> None:
        # A partial usage dict keeps the defaults for the keys it leaves out (README).
        self.usage = {**_default_usage(), **self.usage}

    @classmethod
    def text_only(cls, text: str, **kw: Any) -> Turn:
        """A plain text answer."""
        return cls(text=text, **kw)

    @classmethod
    def tools(cls, calls: list[ToolSpec | tuple[str, str]], text: str = "", **kw: Any) -> Turn:
        """An answer that calls tools; ``calls`` are ToolSpecs or (name, args_json)."""
        specs = [c if isinstance(c, ToolSpec) else ToolSpec(c[0], c[1]) for c in calls]
        return cls(text=text, tool_calls=specs, **kw)

    # -- helpers used by the renderers --------------------------------------
    def text_pieces(self) -> list[str]:
        """The text deltas, in order."""
        return split_text(self.text)

    def reasoning_pieces(self) -> list[str]:
        """The reasoning deltas, in order."""
        return split_text(self.reasoning)

    def search_ids(self, prefix: str) -> list[str]:
        """Search call ids, generated (with the vendor's ``prefix``) where left empty."""
        return [s.id or f"{prefix}{i}" for i, s in enumerate(self.searches)]

    def search_count(self) -> int:
        """Searches the vendor bills: ``usage["web_search_requests"]``, else the successful ones."""
        given = self.usage.get("web_search_requests")
        return given if given is not None else sum(1 for s in self.searches if not s.error)

    def call_ids(self) -> list[str]:
        """Tool call ids, generated where the script left them empty."""
        return [c.id or f"call_{i}" for i, c in enumerate(self.tool_calls)]

    def arg_chunks(self, call: ToolSpec) -> list[str]:
        """Split one call's argument JSON into ``arg_pieces`` non-empty parts."""
        s = call.arguments
        n = max(1, min(self.arg_pieces, len(s)))
        bounds = [round(i * len(s) / n) for i in range(n + 1)]
        return [s[bounds[i] : bounds[i + 1]] for i in range(n)]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for script files)."""
        d = asdict(self)
        d["type"] = "turn"
        return d


Text = str | list[str]


def split_text(text: Text) -> list[str]:
    """Split text into word-sized deltas (a list is taken as the deltas verbatim)."""
    if isinstance(text, list):
        return [t for t in text if t]
    return re.findall(r"\s*\S+\s*|\s+", text)


@dataclass
class Fault:
    """A non-streamed answer: an error status, a reset, a stall, or a raw stream.

    ``kind`` is one of ``status`` (``code``, ``retry_after``, ``message``,
    ``body``), ``reset`` (close the socket with RST before any byte),
    ``stall`` (say nothing for ``seconds``, then close), ``sse`` (HTTP 200
    with ``body`` as the event stream, verbatim: a server's own error event).
    """

    kind: str
    code: int = 500
    retry_after: str | None = None
    message: str = ""
    body: str | None = None  # verbatim body; else a vendor-shaped error JSON
    seconds: float = 0.0
    error_type: str = ""  # vendor error type/code, e.g. "context_length_exceeded"
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers (status)

    @classmethod
    def status(
        cls,
        code: int,
        *,
        retry_after: float | str | None = None,
        message: str = "",
        body: str | None = None,
        error_type: str = "",
        headers: dict[str, str] | None = None,
    ) -> Fault:
        """Answer with HTTP ``code``; ``retry_after`` becomes the Retry-After header,
        ``headers`` are sent as well (a vendor's rate-limit reset headers)."""
        ra = None if retry_after is None else str(retry_after)
        return cls(
            "status",
            code=code,
            retry_after=ra,
            message=message,
            body=body,
            error_type=error_type,
            headers=dict(headers or {}),
        )

    @classmethod
    def reset(cls) -> Fault:
        """Read the request, then reset the connection before any response byte."""
        return cls("reset")

    @classmethod
    def stall(cls, seconds: float) -> Fault:
        """Read the request and say nothing for ``seconds`` (or until shutdown)."""
        return cls("stall", seconds=seconds)

    @classmethod
    def sse(cls, body: str) -> Fault:
        """HTTP 200 whose event stream is ``body`` verbatim (e.g. an ``event: error``)."""
        return cls("sse", code=200, body=body)

    @classmethod
    def context_overflow(cls) -> Fault:
        """HTTP 400 with the vendor's 'prompt longer than the context window' body."""
        return cls("status", code=400, error_type="context_length_exceeded")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for script files)."""
        d = asdict(self)
        d["type"] = "fault"
        return d


Step = Turn | Fault


def step_from_dict(d: dict[str, Any]) -> Step:
    """Inverse of ``to_dict``; a dict without ``type`` is a Turn."""
    d = dict(d)
    typ = d.pop("type", "turn")
    if typ == "fault":
        return Fault(**d)
    calls = [ToolSpec(**c) for c in d.pop("tool_calls", [])]
    searches = [
        SearchSpec(**{**s, "results": [tuple(r) for r in s.get("results", [])]})
        for s in d.pop("searches", [])
    ]
    usage = {**_default_usage(), **d.pop("usage", {})}
    return Turn(tool_calls=calls, searches=searches, usage=usage, **d)
