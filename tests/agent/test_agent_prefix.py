"""Prefix-cache invariant: every request extends the previous one byte for byte.

A 30-request scripted session (10 user turns of two tool rounds and an
answer each) runs against the loopback fake of each wire format; for every
request the system prompt and tool list are identical to the previous
request's and its messages start with exactly the previous messages.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, SearchSpec, ToolSpec, Turn

import reasonix.provider as provider_registry
from reasonix.agent.events import Done
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool

KINDS = ("openai", "anthropic", "responses")
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}


def _load_kind(kind: str) -> None:
    # Every kind has landed: one that fails to import or register is a failure, not a skip.
    importlib.import_module(f"reasonix.provider.{kind}")
    assert kind in provider_registry.kinds(), f"provider kind {kind} did not register"


def _split(kind: str, body: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(system, tools, messages) of one request body, each as canonical JSON text."""
    tools = json.dumps(body.get("tools"), sort_keys=True)
    if kind == "openai":
        msgs = body["messages"]
        system = json.dumps(msgs[0], sort_keys=True)
        return system, tools, [json.dumps(m, sort_keys=True) for m in msgs[1:]]
    if kind == "anthropic":
        system = json.dumps(body.get("system"), sort_keys=True)
        msgs = body["messages"]
    else:
        system = json.dumps(body.get("instructions"), sort_keys=True)
        msgs = body["input"]
    return system, tools, [json.dumps(_strip_cache(m), sort_keys=True) for m in msgs]


def _strip_cache(value: Any) -> Any:
    # Anthropic cache_control breakpoints move with the tail by design; they are
    # request metadata, not message content, so they are left out of the comparison.
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("kind", "search"),
    [*((k, False) for k in KINDS), ("anthropic", True), ("responses", True)],
)
def test_thirty_requests_extend_each_other(kind: str, search: bool, tmp_path: Path) -> None:
    """With ``web_search = true`` every third answer also runs a server-side search."""
    _load_kind(kind)
    script: list[Turn] = []
    for turn in range(10):
        script.append(Turn.tools([ToolSpec("count", f'{{"n": {turn}}}', id=f"a{turn}")], text="a"))
        if search and turn % 3 == 0:
            hits = [(f"hit {turn}", f"https://example.org/{turn}")]
            script[-1].searches = [SearchSpec(f"query {turn}", hits, id=f"s{turn}")]
        script.append(Turn.tools([ToolSpec("count", f'{{"n": {turn + 1}}}', id=f"b{turn}")]))
        script.append(Turn.text_only(f"answer {turn}", reasoning="thought" if turn % 2 else ""))
    reg = Registry()
    reg.add(FunctionTool("count", "count", SCHEMA, lambda a, c: "n=" + str(a["n"]), read_only=True))
    with FakeServer(kind, script) as srv:
        cfg = ProviderConfig(
            name="fake", kind=kind, base_url=srv.url, models=["fake-model"], web_search=search
        )
        cfg.api_key = "k"
        prov = provider_registry.new(kind, cfg)
        with Session.create(tmp_path) as session:
            agent = Agent(
                prov,
                reg,
                session,
                model="fake-model",
                system="stable system prompt",
                tool_ctx=ToolContext(workspace=tmp_path),
                instructions="<instructions>be brief</instructions>",
            )
            for turn in range(10):
                events = list(agent.run(f"question {turn}", Cancel()))
                assert isinstance(events[-1], Done), events[-1]
        bodies = [r.json for r in srv.requests]
    assert len(bodies) == 30
    prev = _split(kind, bodies[0])
    for i, body in enumerate(bodies[1:], start=2):
        cur = _split(kind, body)
        assert cur[0] == prev[0], f"request {i}: system prompt changed"
        assert cur[1] == prev[1], f"request {i}: tool list changed"
        assert cur[2][: len(prev[2])] == prev[2], f"request {i}: history was rewritten"
        assert len(cur[2]) > len(prev[2])
        prev = cur
