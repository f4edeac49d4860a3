"""The real window, learned and enforced: the Agent against fakes of local servers.

A session configured with a too-large window (the model card's 32768 where
the server was started with 8192) must recover from the first refusal in
every dialect: learn the window, summarise once, retry once, finish. A
message that can never fit is refused without a summary request and without
touching the transcript; so is a tool call whose arguments could never fit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, ToolSpec, Turn, dialects

import reasonix.provider as provider_registry
import reasonix.provider.anthropic
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent import compaction as cp
from reasonix.agent import oversize
from reasonix.agent.budget import OutputBudget
from reasonix.agent.context import ContextManager
from reasonix.agent.events import Done, Error, Event, Notice, ToolEnd
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.agent.tokens import estimate_request
from reasonix.agent.window import ContextWindow
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.errors import InputTooLarge
from reasonix.provider.probe import probe_window
from reasonix.provider.types import Message, Role, ToolSchema
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool

SYSTEM = "system prompt of the window tests"
SERVED, CONFIGURED = 8192, 32768
NO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 1,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
}


def words(word: str, n: int) -> str:
    return " ".join([word] * n)


class Rig:
    """A fake server, a real provider, session, context manager, budget and Agent."""

    def __init__(self, srv: FakeServer, ws: Path, configured: int, kind: str = "openai") -> None:
        self.srv = srv
        self.cfg = ProviderConfig(name="local", kind=kind, base_url=srv.url, models=["m"])
        self.provider = provider_registry.new(kind, self.cfg)
        self.session = Session.create(ws, {"system": SYSTEM})
        self.window = ContextWindow(configured)
        self.calls: list[str] = []
        self.registry = Registry()
        self.registry.add(
            FunctionTool(
                "write", "write a file", {"type": "object"}, lambda a, c: self._ran(a), False
            )
        )
        self.kind = kind

    def _ran(self, args: Any) -> str:
        self.calls.append(json.dumps(args))
        return "written"

    def history(self, pairs: int, size: int = 1000) -> None:
        for i in range(pairs):
            self.session.append_message(Message(Role.USER, words("alpha", size) + f" q{i}"))
            self.session.append_message(Message(Role.ASSISTANT, words("beta", size) + f" a{i}"))

    def agent(self) -> Agent:
        tools = [ToolSchema(**s) for s in self.registry.schemas()]
        self.ctx = ContextManager(
            self.provider, "m", self.window, 0.80, SYSTEM, tools, self.session
        )
        budget = OutputBudget(0, kind=self.kind, host="127.0.0.1", context_window=self.window)
        return Agent(
            self.provider, self.registry, self.session, model="m", system=SYSTEM,
            tool_ctx=ToolContext(workspace=self.session.path.parent), context=self.ctx,
            budget=budget,
        )  # fmt: skip

    def file(self) -> bytes:
        return self.session.path.read_bytes()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def rigs(ws: Path) -> Iterator[list[Rig]]:
    made: list[Rig] = []
    yield made
    for rig in made:
        rig.session.close()


def _rig(rigs: list[Rig], srv: FakeServer, ws: Path, configured: int, kind: str = "openai") -> Rig:
    rig = Rig(srv, ws, configured, kind)
    rigs.append(rig)
    return rig


def _size(req: Any, ratio: float) -> int:
    return round(estimate_request(req.system, req.messages, req.tools) * ratio)


def _notices(events: list[Event], kind: str = "context_window") -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.kind == kind]


CASES = [("openai", d) for d in dialects.OVERFLOWS if d != "anthropic"]
CASES += [("anthropic", "anthropic"), ("anthropic", "llama.cpp")]


@pytest.mark.parametrize(("kind", "dialect"), CASES)
def test_a_too_large_configured_window_is_learned_from_the_refusal(
    kind: str, dialect: str, ws: Path, rigs: list[Rig]
) -> None:
    with FakeServer(kind) as srv:
        rig = _rig(rigs, srv, ws, CONFIGURED, kind)
        rig.history(6)  # about 12k tokens: over the served 8192, far under 0.8 x 32768
        agent = rig.agent()
        question = Message(Role.USER, "what next?")
        prompt = rig.ctx.estimate([question])
        srv.add(dialects.OVERFLOWS[dialect](SERVED, prompt))
        srv.add(Turn.text_only("DIGEST of the work so far", usage=NO_USAGE))
        srv.add(Turn.text_only("the answer", usage=NO_USAGE))
        events = list(agent.run("what next?", Cancel()))
        assert isinstance(events[-1], Done) and events[-1].result == "the answer", events[-1]
        assert len(srv.requests) == 3  # the refused request, one summary, one retry
        if dialect in dialects.NAMES_NO_NUMBERS:
            # The refusal names no window: it is below the refused request, not 32768.
            assert rig.window.served is not None and rig.window.served <= prompt
        else:
            assert rig.window.served == SERVED and rig.window.limit == SERVED
            text = f"the server's window is {SERVED} tokens, not the configured {CONFIGURED}"
            assert any(text in n for n in _notices(events))
        result = rig.ctx.last_result
        assert result is not None and result.summaries == 1
        summary = result.summary_requests[0]
        assert summary.messages[-1].content == cp.SUMMARY_INSTRUCTION
        limit = rig.window.limit
        assert _size(summary, rig.ctx.counter.ratio) + (summary.max_tokens or 0) <= limit
        retry = srv.requests[2].json
        last = (retry["messages"][-1]["content"], retry["messages"][-1]["role"])
        assert last[1] == "user" and "what next?" in json.dumps(last[0])
        assert "DIGEST of the work so far" in json.dumps(retry["messages"])
        users = [
            m for m in rig.session.messages() if m.role is Role.USER and m.content == "what next?"
        ]
        assert len(users) == 1  # written once, before its answer


def test_the_start_up_probe_makes_the_first_request_fit(ws: Path, rigs: list[Rig]) -> None:
    meta = {"GET /props": dialects.llama_cpp_props(SERVED)}
    with FakeServer("openai", meta=meta) as srv:
        rig = _rig(rigs, srv, ws, CONFIGURED)
        rig.history(6)
        rig.window.start_probe(lambda: probe_window(rig.cfg, "m"))
        agent = rig.agent()
        srv.add(Turn.text_only("DIGEST", usage=NO_USAGE), Turn.text_only("fits", usage=NO_USAGE))
        events = list(agent.run("what next?", Cancel()))
    assert isinstance(events[-1], Done) and events[-1].result == "fits"
    assert len(srv.requests) == 2  # compacted under pressure before the first request: no refusal
    assert srv.requests[0].json["messages"][-1]["content"] == cp.SUMMARY_INSTRUCTION
    assert rig.window.source == "llama.cpp GET /props"
    assert any("8192 tokens, not the configured 32768" in n for n in _notices(events))


def test_a_message_that_cannot_fit_a_known_window_sends_nothing(ws: Path, rigs: list[Rig]) -> None:
    with FakeServer("openai") as srv:
        rig = _rig(rigs, srv, ws, SERVED)
        rig.history(1, size=100)
        agent = rig.agent()
        before = rig.file()
        events = list(agent.run(words("gamma", 14000), Cancel()))
        assert srv.requests == []  # no model request, no summary request
    err = events[-1]
    assert isinstance(err, Error) and isinstance(err.error, InputTooLarge)
    assert (
        "your message is about" in err.message and f"the model's window is {SERVED}" in err.message
    )
    assert rig.file() == before  # the transcript is unchanged


def test_a_message_the_refusal_shows_cannot_fit_gets_no_summary(ws: Path, rigs: list[Rig]) -> None:
    with FakeServer("openai") as srv:
        rig = _rig(rigs, srv, ws, CONFIGURED)
        rig.history(2, size=300)
        agent = rig.agent()
        before = rig.file()
        srv.add(dialects.OVERFLOWS["llama.cpp"](SERVED, 15500))
        events = list(agent.run(words("gamma", 14000), Cancel()))
        assert len(srv.requests) == 1  # the refused request only: no summary
        err = events[-1]
        assert isinstance(err, Error) and isinstance(err.error, InputTooLarge)
        assert "your message is about" in err.message and "window is 8192 tokens" in err.message
        assert rig.file() == before
        # The user retries with a shorter message: it fits, and the long one is gone.
        srv.add(Turn.text_only("short answer", usage=NO_USAGE))
        events = list(agent.run("a short question", Cancel()))
        assert isinstance(events[-1], Done) and events[-1].result == "short answer"
        assert "gamma" not in srv.requests[-1].body.decode()


def test_a_five_megabyte_prompt_is_refused_before_anything(ws: Path, rigs: list[Rig]) -> None:
    with FakeServer("openai") as srv:
        rig = _rig(rigs, srv, ws, 128000)
        agent = rig.agent()
        before = rig.file()
        events = list(agent.run("x y " * (5 * 1024 * 1024 // 4), Cancel()))
        assert srv.requests == []
    assert isinstance(events[-1], Error) and isinstance(events[-1].error, InputTooLarge)
    assert rig.file() == before


def test_an_oversized_tool_argument_becomes_a_tool_error(ws: Path, rigs: list[Rig]) -> None:
    huge = json.dumps({"path": "big.txt", "content": words("delta", 9000)})
    script = [
        Turn.tools([ToolSpec("write", huge, id="w1")], usage=NO_USAGE),
        Turn.text_only("I will write it in parts", usage=NO_USAGE),
    ]
    with FakeServer("openai", script) as srv:
        rig = _rig(rigs, srv, ws, SERVED)
        events = list(rig.agent().run("write a big file", Cancel()))
        second = srv.requests[1].json["messages"]
    assert isinstance(events[-1], Done) and events[-1].result == "I will write it in parts"
    assert rig.calls == []  # never run
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert ends and ends[0].is_error and "not run" in ends[0].content
    call = second[-2]["tool_calls"][0]["function"]
    assert "omitted" in json.loads(call["arguments"])  # a short, valid placeholder
    assert second[-1]["role"] == "tool" and "smaller calls" in second[-1]["content"]
    assert "delta delta" not in rig.file().decode()  # the transcript keeps no giant argument


def test_a_huge_message_in_an_old_transcript_is_cut_for_the_summary(
    ws: Path, rigs: list[Rig]
) -> None:
    with FakeServer("openai") as srv:
        rig = _rig(rigs, srv, ws, CONFIGURED)
        rig.session.append_message(Message(Role.USER, words("omega", 40000)))  # before this fix
        rig.session.append_message(Message(Role.ASSISTANT, "noted"))
        agent = rig.agent()
        srv.add(Turn.text_only("DIGEST", usage=NO_USAGE), Turn.text_only("done", usage=NO_USAGE))
        events = list(agent.run("carry on", Cancel()))
    assert isinstance(events[-1], Done) and events[-1].result == "done"
    summary = srv.requests[0].json["messages"]
    assert summary[-1]["content"] == cp.SUMMARY_INSTRUCTION
    assert "characters cut" in summary[1]["content"]
    result = rig.ctx.last_result
    assert result is not None
    req = result.summary_requests[0]
    assert _size(req, rig.ctx.counter.ratio) + (req.max_tokens or 0) <= CONFIGURED
    assert "omega" not in json.dumps(srv.requests[1].json["messages"])  # the digest replaced it


def test_ollama_serving_less_than_configured_is_said_at_start(ws: Path, rigs: list[Rig]) -> None:
    meta = {
        "POST /api/show": dialects.ollama_show(32768),
        "GET /api/ps": dialects.ollama_ps("m", 4096),
    }
    with FakeServer("openai", [Turn.text_only("hi", usage=NO_USAGE)], meta=meta) as srv:
        rig = _rig(rigs, srv, ws, CONFIGURED)
        rig.window.start_probe(lambda: probe_window(rig.cfg, "m"))
        events = list(rig.agent().run("hello", Cancel()))
    assert isinstance(events[-1], Done)
    notes = _notices(events)
    assert notes and "4096 tokens, not the configured 32768" in notes[0]
    assert "silently" in notes[0]
    assert rig.window.limit == 4096


def test_ollama_loaded_by_the_first_answer_is_asked_again(ws: Path, rigs: list[Rig]) -> None:
    meta: dict[str, Any] = {
        "POST /api/show": dialects.ollama_show(131072),
        "GET /api/ps": {"models": []},
    }
    script = [Turn.text_only("one", usage={**NO_USAGE, "input_tokens": 50}), Turn.text_only("two")]
    with FakeServer("openai", script, meta=meta) as srv:
        rig = _rig(rigs, srv, ws, CONFIGURED)
        rig.window.start_probe(
            lambda: probe_window(rig.cfg, "m"),
            reprobe=lambda: probe_window(rig.cfg, "m", only_ollama_ps=True),
        )
        agent = rig.agent()
        rig.window.settle()
        srv.meta["GET /api/ps"] = dialects.ollama_ps("m", 2048)  # the answer loaded it
        list(agent.run("hello", Cancel()))
        deadline = time.monotonic() + 5
        while rig.window.served != 2048 and time.monotonic() < deadline:
            time.sleep(0.02)
        events = list(agent.run("again", Cancel()))
    assert rig.window.served == 2048
    assert any("2048 tokens" in n for n in _notices(events))


def test_the_summary_output_cap_is_d9_in_a_large_window() -> None:
    assert oversize.summary_output_cap(131072, 40000) == cp.SUMMARY_MAX_TOKENS
    # Never past the window, less a 1/20 margin for the server's own token count.
    assert oversize.summary_output_cap(8192, 6000) == 8192 - 6000 - 8192 // 20
    assert oversize.summary_output_cap(0, 10**6) == cp.SUMMARY_MAX_TOKENS  # no window known


def test_a_twenty_megabyte_argument_is_measured_without_walking_it() -> None:
    from reasonix.provider.types import ToolCall

    content = "line of generated text 12345\n" * (20 * 1024 * 1024 // 29)
    call = ToolCall("c1", "write", json.dumps({"path": "big.txt", "content": content}))
    started = time.monotonic()
    tokens = oversize.call_too_large(call, 131072, 1.0)
    assert tokens > 131072 // 2
    assert time.monotonic() - started < 5.0  # sampled: the exact pass takes over 10 s
    kept = oversize.omitted_call(call, tokens)
    assert len(kept.arguments) < 200 and "omitted" in json.loads(kept.arguments)
