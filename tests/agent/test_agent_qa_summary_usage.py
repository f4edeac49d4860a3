"""QA: a summary call is paid for, so its usage counts in the run's telemetry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakes import FakeServer, Fault, ToolSpec, Turn

import reasonix.provider as provider_registry
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent.context import ContextManager
from reasonix.agent.events import Done
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.provider.types import ToolSchema
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool


def _usage(output: int) -> dict[str, int]:
    return {"input_tokens": 0, "output_tokens": output, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "reasoning_tokens": 0}  # fmt: skip


def test_summary_usage_is_part_of_the_run(tmp_path: Path) -> None:
    reg = Registry()
    rows = " ".join(f"row{i:04d}" for i in range(700))  # short enough to stay unpruned
    reg.add(
        FunctionTool("dump", "dump rows", {"type": "object"}, lambda a, c: rows, read_only=True)
    )
    script: list[Any] = [
        Turn.tools([ToolSpec("dump", "{}", id="d1")], usage=_usage(1)),
        Turn.tools([ToolSpec("dump", "{}", id="d2")], usage=_usage(1)),
        Turn.tools([ToolSpec("dump", "{}", id="d3")], usage=_usage(1)),
        Fault.context_overflow(),
        Turn.text_only("DIGEST", usage=_usage(700)),  # the summary call
        Turn.text_only("answer", usage=_usage(1)),
    ]
    with FakeServer("openai", script) as srv, Session.create(tmp_path / "ws") as session:
        cfg = ProviderConfig(name="fake", kind="openai", base_url=srv.url, models=["m"])
        cfg.api_key = "k"
        prov = provider_registry.new("openai", cfg)
        tools = [ToolSchema(**s) for s in reg.schemas()]
        ctx = ContextManager(prov, "m", 8000, 0.80, "sys", tools, session)
        agent = Agent(prov, reg, session, model="m", system="sys",
                      tool_ctx=ToolContext(workspace=tmp_path), context=ctx)  # fmt: skip
        events = list(agent.run("dump three times", Cancel()))
        assert isinstance(events[-1], Done) and events[-1].result == "answer"
        assert "DIGEST" in srv.requests[-1].json["messages"][1]["content"]
    assert len(agent.telemetry.per_request) == 5  # four ordinary answers and the summary
    assert agent.telemetry.total.output_tokens == 704
