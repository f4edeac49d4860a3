"""A 400 that names the output limit is learned and the request retried once (D10)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from fakes import FakeServer, Fault, Turn

import reasonix.provider as provider_registry
from reasonix.agent.budget import OutputBudget
from reasonix.agent.events import Done, Error
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.tool import Registry, ToolContext

importlib.import_module("reasonix.provider.openai")
LIMIT_400 = "This model supports at most 4096 completion tokens, but you requested 9000"


def agent_for(srv: FakeServer, session: Session, budget: OutputBudget) -> Agent:
    cfg = ProviderConfig(name="fake", kind="openai", base_url=srv.url, models=["m"])
    cfg.api_key = "k"
    return Agent(
        provider_registry.new("openai", cfg),
        Registry(),
        session,
        model="m",
        system="s",
        tool_ctx=ToolContext(),
        budget=budget,
    )


def test_learned_output_limit_is_used_from_then_on(tmp_path: Path) -> None:
    script = [Fault.status(400, message=LIMIT_400), Turn.text_only("a"), Turn.text_only("b")]
    budget = OutputBudget(9000, kind="openai", host="127.0.0.1", context_window=100000)
    with FakeServer("openai", script) as srv, Session.create(tmp_path) as session:
        agent = agent_for(srv, session, budget)
        assert isinstance(list(agent.run("one", Cancel()))[-1], Done)
        assert isinstance(list(agent.run("two", Cancel()))[-1], Done)
        sent = [json.dumps(r.json) for r in srv.requests]
    assert "9000" in sent[0] and "4096" in sent[1] and "4096" in sent[2]
    assert budget.learned == 4096


def test_the_same_limit_twice_is_an_error_not_a_loop(tmp_path: Path) -> None:
    script = [Fault.status(400, message=LIMIT_400), Fault.status(400, message=LIMIT_400)]
    budget = OutputBudget(9000, kind="openai", host="127.0.0.1", context_window=100000)
    with FakeServer("openai", script) as srv, Session.create(tmp_path) as session:
        events = list(agent_for(srv, session, budget).run("one", Cancel()))
        assert len(srv.requests) == 2
    assert isinstance(events[-1], Error) and "4096" in events[-1].message
