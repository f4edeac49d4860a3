"""The agent over a real provider and the fakes: server-side searches become WebSearch
events and transcript records, usage counts them, and the request stays a byte prefix;
a bash tool result carrying an escape decision becomes a SandboxEscape event and record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer, SearchSpec, ToolSpec, Turn

from reasonix.agent.events import Done, Event, SandboxEscape, TextDelta, ToolEnd, WebSearch
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session, read_records
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.provider.anthropic import AnthropicProvider
from reasonix.provider.base import SSEProvider
from reasonix.provider.responses import ResponsesProvider
from reasonix.tool import Registry, ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

HITS = [("Release notes", "https://example.org/notes"), ("", "https://example.org/raw")]
CLASSES: dict[str, type[SSEProvider]] = {"anthropic": AnthropicProvider,
                                         "responses": ResponsesProvider}  # fmt: skip


def _provider(kind: str, url: str) -> SSEProvider:
    base = url if kind == "anthropic" else url + "/v1"
    cfg = ProviderConfig(name="f", kind=kind, base_url=base, api_key="k", web_search=True)
    return CLASSES[kind](cfg)


def _registry() -> Registry:
    reg = Registry()
    obj = {"type": "object", "properties": {}}
    reg.add(FunctionTool("ls", "list", obj, lambda a, c: "a.txt", read_only=True))
    return reg


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
def test_a_search_is_an_event_a_record_and_counted(workspace: Path, kind: str) -> None:
    turns = [
        Turn(searches=[SearchSpec("release date", HITS)], tool_calls=[ToolSpec("ls", "{}")]),
        Turn(text="Out now."),
    ]
    with FakeServer(kind, turns) as srv:
        session = Session.create(workspace, {"system": "sys"})
        agent = Agent(_provider(kind, srv.url), _registry(), session, model="m", system="sys",
                      tool_ctx=ToolContext(workspace=workspace))  # fmt: skip
        events: list[Event] = list(agent.run("when?", Cancel()))
        first, second = srv.requests[0].body, srv.requests[1].body
        session.close()
    searches = [e for e in events if isinstance(e, WebSearch)]
    assert len(searches) == 1
    found = searches[0]
    assert found.query == "release date" and [r.url for r in found.results] == [u for _, u in HITS]
    assert events.index(found) < next(i for i, e in enumerate(events) if isinstance(e, ToolEnd))
    done = events[-1]
    assert isinstance(done, Done) and done.usage.web_search_requests == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Out now."
    records = read_records(session.path)
    rec = next(r for r in records if r["type"] == "web_search")
    assert rec["query"] == "release date" and rec["results"][0]["url"] == HITS[0][1]
    assert rec["id"] == found.call_id
    # the second request carries the replayed search and still extends the first
    cut = first.rindex(b'"messages"' if kind == "anthropic" else b'"input"')
    assert second[:cut] == first[:cut]
    assert json.loads(second).get("tools") == json.loads(first).get("tools")


def test_an_escape_decision_becomes_an_event_and_a_record(workspace: Path) -> None:
    def fake_bash(args: dict[str, object], ctx: ToolContext) -> ToolResult:
        record = {"command": "make", "justification": "why", "granted": False,
                  "detail": "headless"}  # fmt: skip
        return ToolResult("refused: headless", is_error=True, metadata={"sandbox_escape": record})

    reg = Registry()
    reg.add(FunctionTool("bash", "run", {"type": "object", "properties": {}}, fake_bash))
    turns = [Turn.tools([ToolSpec("bash", "{}", id="call_x")]), Turn(text="ok")]
    with FakeServer("anthropic", turns) as srv:
        session = Session.create(workspace, {"system": "sys"})
        cfg = ProviderConfig(name="f", kind="anthropic", base_url=srv.url, api_key="k")
        agent = Agent(AnthropicProvider(cfg), reg, session, model="m", system="sys",
                      tool_ctx=ToolContext(workspace=workspace))  # fmt: skip
        events = list(agent.run("go", Cancel()))
        session.close()
    escape = next(e for e in events if isinstance(e, SandboxEscape))
    assert escape.call_id == "call_x" and not escape.granted and escape.detail == "headless"
    order = [type(e).__name__ for e in events]
    assert order.index("SandboxEscape") < order.index("ToolEnd")
    rec = next(r for r in read_records(session.path) if r["type"] == "sandbox_escape")
    assert rec == {"type": "sandbox_escape", "call_id": "call_x", "command": "make",
                   "justification": "why", "granted": False, "detail": "headless"}  # fmt: skip
