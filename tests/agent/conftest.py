"""Shared fixtures for agent tests: a scripted provider entering through the real registry."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import reasonix.provider as provider_registry
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.provider.types import Chunk, ChunkKind, Request, ToolCall, Usage
from reasonix.tool import Registry, ToolContext

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


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def make_agent(workspace: Path) -> Iterator[Callable[..., tuple[Agent, ScriptedProvider]]]:
    sessions: list[Session] = []

    def make(
        steps: list[Step], registry: Registry | None = None, **kw: Any
    ) -> tuple[Agent, ScriptedProvider]:
        prov = provider_registry.new("scripted", {"steps": steps})
        assert isinstance(prov, ScriptedProvider)
        session = kw.pop("session", None) or Session.create(workspace, {"system": "sys"})
        sessions.append(session)
        agent = Agent(
            prov,
            registry or Registry(),
            session,
            model="m",
            system="sys",
            tool_ctx=ToolContext(workspace=workspace),
            **kw,
        )
        return agent, prov

    yield make
    for s in sessions:
        s.close()
