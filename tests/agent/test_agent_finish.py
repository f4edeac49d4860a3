"""How an answer ended reaches the turn (issue 33): refusals, filters, the output limit.

The scripted provider stands in for any kind: each kind's fold maps its
vendor's stop signal to ``Chunk.finish_reason`` (tests/provider/test_traffic_*
check that part against vendor-shaped streams); here the agent's side.
"""

from __future__ import annotations

from typing import Any

from agent_scripted import text
from test_agent_loop import MakeAgent, echo_registry, run

from reasonix.agent.events import Done, Error, Notice, TextDelta, ToolEnd
from reasonix.provider.types import Chunk, ChunkKind, Role, ToolCall, Usage


def answer(*chunks: Chunk, finish: str, detail: str = "") -> list[Chunk]:
    usage = Chunk(ChunkKind.USAGE, usage=Usage(input_tokens=100, output_tokens=10))
    return [*chunks, usage, Chunk(ChunkKind.DONE, finish_reason=finish, detail=detail)]


def said(s: str) -> Chunk:
    return Chunk(ChunkKind.TEXT, text=s)


def call(name: str, args: str, *, cut: bool = False, n: int = 0) -> Chunk:
    return Chunk(ChunkKind.TOOL_CALL, tool_call=ToolCall(f"c{n}", name, args, truncated=cut))


def notices(events: list[Any], kind: str) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.kind == kind]


def test_a_refusal_is_shown_recorded_and_not_retried(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([answer(said("I can't help with that."), finish="refusal")])
    events = run(agent)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "refusal"
    assert done.result == "I can't help with that."
    assert len(prov.requests) == 1  # no second, identical request
    assert notices(events, "refusal")
    last = agent.history[-1]
    assert last.role is Role.ASSISTANT and last.content == "I can't help with that."


def test_a_refusal_without_text_says_so_with_the_vendors_detail(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([answer(finish="refusal", detail="cyber")])
    events = run(agent)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "refusal"
    assert done.result == "refused by the provider: cyber"
    assert any(isinstance(e, TextDelta) and "refused" in e.text for e in events)
    assert len(prov.requests) == 1


def test_a_filter_block_ends_the_turn(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([answer(finish="content_filter")])
    done = run(agent)[-1]
    assert isinstance(done, Done) and done.reason == "content_filter"
    assert "content filter" in done.result and len(prov.requests) == 1


def test_a_cut_answer_is_reported_as_cut(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([answer(said("The first half of"), finish="length")])
    events = run(agent)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "max_tokens"
    assert done.result == "The first half of"
    assert notices(events, "truncated") and len(prov.requests) == 1


def test_a_cut_answer_with_nothing_in_it_is_not_retried(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([answer(finish="length")])
    done = run(agent)[-1]
    assert isinstance(done, Done) and done.reason == "max_tokens" and len(prov.requests) == 1


def test_a_tool_call_cut_by_the_limit_is_never_run(make_agent: MakeAgent) -> None:
    log: list[str] = []
    cut = call("echo", '{"x": "half of a lo', cut=True)
    agent, prov = make_agent([answer(said("Writing."), cut, finish="length")], echo_registry(log))
    events = run(agent)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "max_tokens"
    assert log == [] and not any(isinstance(e, ToolEnd) for e in events)
    assert len(prov.requests) == 1
    assert any("(echo)" in n and "not run" in n for n in notices(events, "truncated"))
    reply = agent.history[-1]
    assert reply.role is Role.ASSISTANT and reply.content == "Writing." and reply.tool_calls == []
    assert not any(m.role is Role.TOOL for m in agent.history)  # no result for a call not kept


def test_the_complete_calls_before_a_cut_one_run_and_the_model_learns_of_it(
    make_agent: MakeAgent,
) -> None:
    log: list[str] = []
    script = [
        answer(call("echo", '{"x": "one"}', n=0), call("echo", '{"x": "tw', cut=True, n=1),
               finish="length"),
        text("done"),
    ]  # fmt: skip
    agent, prov = make_agent(script, echo_registry(log))
    done = run(agent)[-1]
    assert isinstance(done, Done) and done.reason == "complete" and done.result == "done"
    assert log == ["one"]
    second = prov.requests[1].messages
    assistant = [m for m in second if m.role is Role.ASSISTANT][-1]
    assert [c.arguments for c in assistant.tool_calls] == ['{"x": "one"}']  # exactly as sent
    result = [m for m in second if m.role is Role.TOOL][-1]
    assert result.content.startswith("echo:one") and "cut by the output limit" in result.content


def test_an_empty_answer_that_ended_normally_is_still_retried_once(
    make_agent: MakeAgent,
) -> None:
    agent, prov = make_agent([answer(finish="complete"), text("there")])
    done = run(agent)[-1]
    assert isinstance(done, Done) and done.result == "there" and len(prov.requests) == 2


def test_a_response_the_provider_ended_as_failed_is_an_error_not_an_empty_answer(
    make_agent: MakeAgent,
) -> None:
    agent, prov = make_agent([answer(finish="error", detail="upstream timeout")])
    events = run(agent)
    assert isinstance(events[-1], Error) and "upstream timeout" in events[-1].message
    assert len(prov.requests) == 1


def test_a_failed_end_after_text_keeps_the_text_and_says_so(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([answer(said("Partial answer"), finish="error")])
    events = run(agent)
    done = events[-1]
    assert isinstance(done, Done) and done.result == "Partial answer"
    assert notices(events, "provider") and len(prov.requests) == 1
