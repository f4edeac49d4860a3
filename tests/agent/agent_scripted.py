"""A scripted in-process provider for agent tests, entering through the real registry."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import reasonix.provider as provider_registry
from reasonix.cancel import Cancel
from reasonix.provider.types import Chunk, ChunkKind, Request, ToolCall, Usage

Step = list[Chunk] | Callable[[Request, Cancel], Iterator[Chunk]]


class ScriptedProvider:
    """Answers each request with the next scripted list of chunks (or a generator function)."""

    name = "scripted"

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.steps: list[Step] = list(cfg.get("steps", []))
        self.requests: list[Request] = []

    def stream(self, request: Request, cancel: Cancel) -> Iterator[Chunk]:
        self.requests.append(copy.deepcopy(request))
        if not self.steps:
            raise AssertionError("the script ran out of steps")
        step = self.steps.pop(0)
        if callable(step):
            yield from step(request, cancel)
        else:
            yield from step


provider_registry.register("scripted", ScriptedProvider)


def text(s: str, usage: Usage | None = None) -> list[Chunk]:
    """A plain text answer."""
    out = [Chunk(ChunkKind.TEXT, text=s)]
    out.append(Chunk(ChunkKind.USAGE, usage=usage or Usage(input_tokens=100, output_tokens=10)))
    return [*out, Chunk(ChunkKind.DONE, finish_reason="stop")]


def calls(*specs: tuple[str, str], say: str = "") -> list[Chunk]:
    """An answer calling tools: (name, arguments JSON) pairs."""
    out = [Chunk(ChunkKind.TEXT, text=say)] if say else []
    for i, (name, args) in enumerate(specs):
        out.append(Chunk(ChunkKind.TOOL_CALL, tool_call=ToolCall(f"c{i}-{name}", name, args)))
    out.append(Chunk(ChunkKind.USAGE, usage=Usage(input_tokens=100, output_tokens=10)))
    return [*out, Chunk(ChunkKind.DONE, finish_reason="tool_calls")]
