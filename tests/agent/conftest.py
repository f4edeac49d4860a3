"""Fixtures for agent tests (the scripted provider lives in agent_scripted.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_scripted import ScriptedProvider, Step

import reasonix.provider as provider_registry
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.tool import Registry, ToolContext


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
