"""The real Agent loop with a ContextManager, against the OpenAI fake (integration)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakes import FakeServer, Fault, ToolSpec, Turn

import reasonix.provider as provider_registry
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent import compaction as cp
from reasonix.agent.context import ContextManager
from reasonix.agent.events import Done, Notice
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.provider.types import ToolSchema
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool

NO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 1,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
}
SYSTEM = "system prompt for the integration test"


def build(srv: FakeServer, session: Session, tmp_path: Path) -> Agent:
    reg = Registry()
    big = " ".join(f"row{i:05d}" for i in range(3000))  # ~30k code points: gets pruned
    reg.add(FunctionTool("dump", "dump rows", {"type": "object"}, lambda a, c: big, read_only=True))
    cfg = ProviderConfig(name="fake", kind="openai", base_url=srv.url, models=["m"])
    cfg.api_key = "k"
    prov = provider_registry.new("openai", cfg)
    tools = [ToolSchema(**s) for s in reg.schemas()]
    ctx = ContextManager(prov, "m", 8000, 0.80, SYSTEM, tools, session)
    return Agent(
        prov, reg, session, model="m", system=SYSTEM,
        tool_ctx=ToolContext(workspace=tmp_path), context=ctx,
    )  # fmt: skip


def test_agent_prunes_summarises_and_recovers_from_overflow(tmp_path: Path) -> None:
    script: list[Any] = [
        Turn.tools([ToolSpec("dump", "{}", id="d1")], usage=NO_USAGE),
        Turn.text_only("dumped", usage=NO_USAGE),
    ]
    with FakeServer("openai", script) as srv, Session.create(tmp_path / "ws") as session:
        agent = build(srv, session, tmp_path)
        events = list(agent.run("dump the rows", Cancel()))
        assert isinstance(events[-1], Done)
        notices = [e for e in events if isinstance(e, Notice) and e.kind == "compaction"]
        assert notices, "the large tool result should have been pruned before the second request"
        second = srv.requests[1].json
        assert cp.PRUNE_MARKER in second["messages"][-1]["content"]
        # An overflow from the provider: one summary, one retry, the turn still completes.
        srv.add(Fault.context_overflow())
        srv.add(Turn.text_only("DIGEST of the dump", usage=NO_USAGE))
        srv.add(Turn.text_only("answer after retry", usage=NO_USAGE))
        events = list(agent.run("and now summarise what you saw " * 20, Cancel()))
        assert isinstance(events[-1], Done) and events[-1].result == "answer after retry"
        bodies = [r.json for r in srv.requests]
        assert bodies[-2]["messages"][-1]["content"] == cp.SUMMARY_INSTRUCTION
        retry = bodies[-1]["messages"]
        assert "DIGEST of the dump" in retry[1]["content"]
        assert json.dumps(bodies[-1]["tools"]) == json.dumps(bodies[0]["tools"])
        assert retry[0] == {"role": "system", "content": SYSTEM}
