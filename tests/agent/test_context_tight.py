"""Small windows with long tool outputs: maintenance must reach a summary (issue 34).

The real Agent loop, a real transcript and a ContextManager against
:class:`fakes.tight.TightWindow`, a fake local server that counts each prompt
itself and refuses what does not fit, like llama-server (prompt only) or
vLLM (prompt + ``max_tokens``). A tool prints 5-50 KB per call. Every
session must run to its end: prune, then summarise the old prefix (a
checkpoint install with a loss report), never CompactionRequired while a
summary can still fit.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, RecordedRequest, Step, Turn, dialects
from fakes.tight import TightWindow, is_summary_request

import reasonix.provider as provider_registry
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent import compaction as cp
from reasonix.agent.context import ContextManager
from reasonix.agent.events import Done, Error, Event
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.agent.tokens import estimate_text
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.errors import CompactionRequired
from reasonix.provider.types import Message, Role, ToolSchema
from reasonix.tool import Registry, ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

# About as large as the real system prompt, tool schemas and skill index of a
# `[tools] enabled = ["bash", "read_file"]` session (≈1500 tokens).
SYSTEM = "You are a coding agent working in a repository. " + " ".join(
    f"Rule {i}: keep edits small and explain what changed in file{i}.py." for i in range(95)
)
NO_USAGE = {"input_tokens": 0, "output_tokens": 1}
VOCAB = ["alpha", "beta", "gamma", "src/x.py", "Error:", "42", "delta", "ok", "->", "{}"]


def output(kb: int, seed: int) -> str:
    """``kb`` KB of log-like text (varied, so it costs tokens like real output does)."""
    rnd = random.Random(seed)
    lines, size, i = [], 0, 0
    while size < kb * 1024:
        line = f"line {i:05d} " + " ".join(rnd.choice(VOCAB) for _ in range(9))
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


class Rig:
    """The fake server, a real provider, transcript, context manager and Agent."""

    def __init__(self, srv: FakeServer, ws: Path, window: int, kb: int) -> None:
        cfg = ProviderConfig(name="local", kind="openai", base_url=srv.url, models=["m"])
        cfg.api_key = "k"
        self.srv = srv
        self.provider = provider_registry.new("openai", cfg)
        self.session = Session.create(ws, {"system": SYSTEM})
        self.runs = 0

        def bash(args: Any, ctx: Any) -> ToolResult:
            self.runs += 1
            text = output(kb, self.runs)
            return ToolResult(content=text[:32000], raw_content=text)

        self.registry = Registry()
        schema = {"type": "object", "properties": {"command": {"type": "string"}}}
        self.registry.add(FunctionTool("bash", "run a shell command", schema, bash, False))
        tools = [ToolSchema(**s) for s in self.registry.schemas()]
        self.ctx = ContextManager(self.provider, "m", window, 0.80, SYSTEM, tools, self.session)
        self.agent = Agent(
            self.provider, self.registry, self.session, model="m", system=SYSTEM,
            tool_ctx=ToolContext(workspace=ws), context=self.ctx,
        )  # fmt: skip

    def run(self, prompt: str) -> list[Event]:
        return list(self.agent.run(prompt, Cancel()))

    def bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.srv.requests]

    def checkpoints(self) -> list[int]:
        """The digest generations installed (a later prune-only checkpoint repeats one)."""
        records = self.session.records()
        return sorted(
            {r["generation"] for r in records if r["type"] == cp.CHECKPOINT and r["summary"]}
        )


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "ws"
    path.mkdir()
    yield path


def _aligned(summary: dict[str, Any], previous: dict[str, Any]) -> bool:
    """The summary request reuses the previous request's prefix: same system prompt and
    tools, and its messages (without the instruction) and the previous request's agree
    on their common length."""
    head = summary["messages"][:-1]
    prev = previous["messages"]
    n = min(len(head), len(prev))
    dump = json.dumps
    return (
        n >= 2
        and dump(summary.get("tools")) == dump(previous.get("tools"))
        and [dump(m, sort_keys=True) for m in head[:n]]
        == [dump(m, sort_keys=True) for m in prev[:n]]
    )


def _drive(ws: Path, window: int, kb: int, **server: Any) -> tuple[Rig, TightWindow, list[Event]]:
    tight = TightWindow(window, tool=("bash", '{"command": "make test"}'), rounds=8, **server)
    srv = FakeServer("openai", responder=tight).start()
    rig = Rig(srv, ws, window, kb)
    try:
        events = rig.run("run the tests and tell me what fails")
    finally:
        srv.close()
        rig.session.close()
    return rig, tight, events


WINDOWS = [4000, 6000, 8000, 16000]
OUTPUTS = [5, 20, 50]


@pytest.mark.parametrize("counts_output", [False, True], ids=["llama", "vllm"])
@pytest.mark.parametrize("kb", OUTPUTS)
@pytest.mark.parametrize("window", WINDOWS)
def test_a_small_window_session_runs_to_its_end(
    ws: Path, window: int, kb: int, counts_output: bool
) -> None:
    rig, tight, events = _drive(ws, window, kb, counts_output=counts_output)
    errors = [e.message for e in events if isinstance(e, Error)]
    assert not errors
    assert isinstance(events[-1], Done) and events[-1].result == "all done"
    assert tight.called == 8 and rig.runs == 8  # every tool round ran
    # The server reports its counts, so the estimate learns them: nothing is refused,
    # summary requests included (they leave a margin for the server's own count).
    assert tight.refused == []
    if window * 0.8 < 8 * kb * 256:  # the outputs do not fit: summaries were needed
        assert rig.checkpoints(), "no summary checkpoint was installed"
        assert len(rig.ctx.loss_reports) == len(rig.checkpoints())
        assert tight.summaries


def test_a_6000_window_summary_is_cache_aligned_and_reported(ws: Path) -> None:
    rig, tight, events = _drive(ws, 6000, 20, counts_output=True)
    assert isinstance(events[-1], Done)
    bodies = rig.bodies()
    firsts = [n for n in tight.summaries if not is_summary_request(bodies[n - 1])]
    assert firsts and all(_aligned(bodies[n], bodies[n - 1]) for n in firsts)
    assert all(bodies[n]["messages"][-1]["content"] == cp.SUMMARY_INSTRUCTION for n in firsts)
    # A summary request leaves room for the summary itself within the window.
    for n in tight.summaries:
        assert tight.prompts[n] + bodies[n]["max_tokens"] <= 6000
    assert rig.ctx.loss_reports and not rig.ctx.loss_reports[0].empty  # the command was dropped
    assert "commands" in rig.ctx.loss_reports[0].counts


class Direct:
    """A context manager over a transcript of three large tool rounds (over 6000 tokens)."""

    def __init__(self, srv: FakeServer, session: Session) -> None:
        cfg = ProviderConfig(name="local", kind="openai", base_url=srv.url, models=["m"])
        cfg.api_key = "k"
        prov = provider_registry.new("openai", cfg)
        tools = [ToolSchema("bash", "run", {"type": "object", "properties": {}})]
        self.ctx = ContextManager(prov, "m", 6000, 0.80, SYSTEM, tools, session)
        session.append_message(Message(Role.USER, "go"))
        for i in range(3):
            session.append_message(Message(Role.ASSISTANT, "", [cp_call(f"c{i}")]))
            text = output(6, i)  # under the prune threshold: only a summary helps
            session.append_message(
                Message(Role.TOOL, text, tool_call_id=f"c{i}", name="bash"), raw_content=text
            )


@pytest.mark.parametrize("dialect", ["llama.cpp", "vllm-legacy", "ollama", "anthropic"])
def test_a_refused_summary_request_is_made_smaller_not_a_failure(ws: Path, dialect: str) -> None:
    # The server counts a fifth more than the estimate, and says so when it
    # refuses the first summary request (prompt + max_tokens over its window).
    seen: list[int] = []

    def respond(rec: RecordedRequest) -> Step:
        seen.append(1)
        if len(seen) == 1:
            return dialects.OVERFLOWS[dialect](6000, int(1.2 * estimate_text(rec.body.decode())))
        return Turn.text_only("SUMMARY: three runs of make, all long.", usage=NO_USAGE)

    with (
        FakeServer("openai", responder=respond) as srv,
        Session.create(ws, {"system": SYSTEM}) as session,
    ):
        rig = Direct(srv, session)
        messages = rig.ctx.prepare(Cancel())
        result = rig.ctx.last_result
        assert result is not None and result.summaries == 1 and result.status == "ok"
        first, second = (r.json for r in srv.requests)
        assert is_summary_request(first) and is_summary_request(second)
        # Smaller in prompt and in prompt + max_tokens: a server that counts either is served.
        assert len(json.dumps(second["messages"])) < len(json.dumps(first["messages"]))
        assert second["max_tokens"] <= first["max_tokens"]
        assert "SUMMARY: three runs" in messages[0].content
        records = session.records()
        assert not [r for r in records if r["type"] == cp.COMPACTION]  # nothing blocked
        assert rig.ctx.generation == 1 and len(rig.ctx.loss_reports) == 1


def test_a_summary_request_refused_every_time_is_one_recorded_failure(ws: Path) -> None:
    with FakeServer("openai") as srv, Session.create(ws, {"system": SYSTEM}) as session:
        rig = Direct(srv, session)
        for _ in range(5):
            srv.add(dialects.OVERFLOWS["ollama"](6000, 6400))
        with pytest.raises(CompactionRequired) as err:
            rig.ctx.prepare(Cancel())
        assert "refused" in str(err.value)
        tries = len(srv.requests)
        assert 2 <= tries <= 3  # a bounded number of smaller tries, then one failure
        notes = [r for r in session.records() if r["type"] == cp.COMPACTION]
        assert len(notes) == 1 and notes[0]["generation"] == 0
        with pytest.raises(CompactionRequired) as again:  # no automatic retry in this generation
            rig.ctx.prepare(Cancel())
        assert len(srv.requests) == tries and "refused" in str(again.value)


def test_a_tool_call_instead_of_a_summary_says_so(ws: Path) -> None:
    with FakeServer("openai") as srv, Session.create(ws, {"system": SYSTEM}) as session:
        rig = Direct(srv, session)
        srv.add(Turn.tools([("bash", '{"command": "ls"}')]))
        with pytest.raises(CompactionRequired) as err:
            rig.ctx.prepare(Cancel())
        assert "called a tool instead of writing the summary" in str(err.value)
        # The generation is blocked now; the next refusal still says why.
        with pytest.raises(CompactionRequired) as again:
            rig.ctx.prepare(Cancel())
        assert "called a tool instead of writing the summary" in str(again.value)
        assert len(srv.requests) == 1


def cp_call(call_id: str) -> Any:
    from reasonix.provider.types import ToolCall

    return ToolCall(call_id, "bash", '{"command": "make"}')
