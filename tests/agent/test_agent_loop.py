"""The agent loop against a scripted provider: LOOP-2..5, ERR-3, empty retry, budget, cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_scripted import ScriptedProvider, calls, text

from reasonix.agent.events import (
    ApprovalRequested,
    Done,
    Error,
    Event,
    Notice,
    TextDelta,
    ToolEnd,
    ToolStart,
)
from reasonix.agent.execute import EventApprover
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.provider.types import Chunk, ChunkKind, Request, Role
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool

MakeAgent = Callable[..., tuple[Agent, ScriptedProvider]]
OBJ: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}


def run(agent: Agent, prompt: str = "go", cancel: Cancel | None = None) -> list[Event]:
    return list(agent.run(prompt, cancel or Cancel()))


def echo_registry(log: list[str] | None = None) -> Registry:
    reg = Registry()

    def echo(args: dict[str, Any], ctx: ToolContext) -> str:
        if log is not None:
            log.append(args.get("x", ""))
        return "echo:" + args.get("x", "")

    def boom(args: dict[str, Any], ctx: ToolContext) -> str:
        raise RuntimeError("kaput")

    reg.add(FunctionTool("echo", "echo x", OBJ, echo, read_only=True))
    reg.add(FunctionTool("boom", "always fails", OBJ, boom))
    return reg


def test_tool_round_then_answer(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([calls(("echo", '{"x":"hi"}')), text("done")], echo_registry())
    events = run(agent)
    assert isinstance(events[-1], Done) and events[-1].result == "done"
    assert events[-1].reason == "complete" and events[-1].steps == 1
    roles = [m.role for m in agent.session.messages()]
    assert roles == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    tool_msg = agent.session.messages()[2]
    assert tool_msg.content == "echo:hi" and tool_msg.name == "echo"
    assert tool_msg.tool_call_id == agent.session.messages()[1].tool_calls[0].id
    assert [type(e) for e in events if isinstance(e, (ToolStart, ToolEnd))] == [ToolStart, ToolEnd]
    # the second request carries the tool result and the same system prompt and tools
    assert prov.requests[1].messages[-1].content == "echo:hi"
    assert prov.requests[0].system == prov.requests[1].system == "sys"
    assert agent.telemetry.counters["tool_calls"] == 1


def test_tool_errors_and_unknown_tools_become_results(make_agent: MakeAgent) -> None:
    agent, _prov = make_agent(
        [calls(("boom", "{}"), ("nope", "{}"), ("echo", "not json")), text("ok")], echo_registry()
    )
    events = run(agent)
    assert isinstance(events[-1], Done)
    results = [m.content for m in agent.session.messages() if m.role is Role.TOOL]
    assert "kaput" in results[0]
    assert "unknown tool 'nope'" in results[1] and "echo" in results[1]
    assert "not valid JSON" in results[2]


@dataclass
class Outcome:
    allowed: bool
    message: str = ""


class DenyBoom:
    def check(self, tool_name: str, read_only: bool, args: dict[str, Any]) -> Outcome:
        return Outcome(tool_name != "boom", "deny rule Boom")


def test_gate_denial_is_a_blocked_result(make_agent: MakeAgent) -> None:
    ran: list[str] = []
    reg = echo_registry(ran)
    agent, _ = make_agent(
        [calls(("boom", "{}"), ("echo", '{"x":"a"}')), text("ok")], reg, gate=DenyBoom()
    )
    events = run(agent)
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert ends[0].blocked and "blocked" in ends[0].content and "deny rule Boom" in ends[0].content
    assert ran == ["a"]
    assert not any(isinstance(e, ToolStart) and e.name == "boom" for e in events)


class AskEverything:
    def __init__(self, approver: EventApprover) -> None:
        self.approver = approver

    def check(self, tool_name: str, read_only: bool, args: dict[str, Any]) -> Outcome:
        choice = self.approver({"tool": tool_name, "args": args})
        return Outcome(choice == "yes", "the user said no")


def test_approval_requests_are_events(make_agent: MakeAgent) -> None:
    ran: list[str] = []
    approver = EventApprover()
    agent, _ = make_agent(
        [calls(("echo", '{"x":"1"}'), ("echo", '{"x":"2"}')), text("ok")],
        echo_registry(ran),
        gate=AskEverything(approver),
        approver=approver,
    )
    answers = iter(["yes", None])
    seen = []
    for ev in agent.run("go", Cancel()):
        if isinstance(ev, ApprovalRequested):
            seen.append(ev.request["args"]["x"])
            answer = next(answers)
            if answer is not None:
                ev.answer(answer)  # the second request is left unanswered: that means deny
    assert seen == ["1", "2"] and ran == ["1"]


def test_empty_response_is_retried_once_with_the_same_request(make_agent: MakeAgent) -> None:
    empty = [Chunk(ChunkKind.DONE, finish_reason="stop")]
    agent, prov = make_agent([empty, text("second try")])
    events = run(agent)
    assert any(isinstance(e, Notice) and e.kind == "retry_empty" for e in events)
    assert isinstance(events[-1], Done) and events[-1].result == "second try"
    assert prov.requests[0] == prov.requests[1]

    agent2, _ = make_agent([empty, empty])
    events = run(agent2)
    assert isinstance(events[-1], Error) and "empty response" in events[-1].message


def test_step_budget_stops_the_loop(make_agent: MakeAgent) -> None:
    steps = [calls(("echo", f'{{"x":"{i}"}}')) for i in range(10)]
    agent, prov = make_agent(steps, echo_registry(), max_steps=3)
    events = run(agent)
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "max_steps" and done.steps == 3
    assert len(prov.requests) == 3
    assert any(isinstance(e, Notice) and e.kind == "max_steps" for e in events)


def test_max_steps_zero_means_the_automatic_bound(make_agent: MakeAgent) -> None:
    agent, _ = make_agent([text("x")], max_steps=0)
    assert agent.max_steps == 200


def _timed_registry(spans: dict[str, tuple[float, float]]) -> Registry:
    reg = Registry()

    def slow(args: dict[str, Any], ctx: ToolContext) -> str:
        start = time.monotonic()
        time.sleep(0.3)
        spans[args["x"]] = (start, time.monotonic())
        return args["x"]

    reg.add(FunctionTool("slow_read", "slow reader", OBJ, slow, read_only=True))
    reg.add(FunctionTool("slow_write", "slow writer", OBJ, slow, read_only=False))
    return reg


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_readers_run_in_parallel_writers_in_order(make_agent: MakeAgent) -> None:
    spans: dict[str, tuple[float, float]] = {}
    script = [
        calls(
            ("slow_read", '{"x":"r1"}'),
            ("slow_read", '{"x":"r2"}'),
            ("slow_write", '{"x":"w1"}'),
            ("slow_write", '{"x":"w2"}'),
            ("slow_read", '{"x":"r3"}'),
        ),
        text("ok"),
    ]
    agent, _ = make_agent(script, _timed_registry(spans))
    run(agent)
    assert _overlap(spans["r1"], spans["r2"])
    assert not _overlap(spans["w1"], spans["w2"])
    assert spans["r2"][1] <= spans["w1"][0] and spans["w2"][1] <= spans["r3"][0]
    results = [m.content for m in agent.session.messages() if m.role is Role.TOOL]
    assert results == ["r1", "r2", "w1", "w2", "r3"]  # the model's call order


def test_cancel_during_a_tool_ends_the_turn_and_keeps_the_transcript(
    make_agent: MakeAgent, workspace: Path
) -> None:
    started = threading.Event()

    def wait_for_cancel(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        ctx.cancel.wait(10)
        return "stopped"

    reg = Registry()
    reg.add(FunctionTool("hang", "waits", OBJ, wait_for_cancel))
    agent, _ = make_agent([calls(("hang", "{}"))], reg)
    cancel = Cancel()
    threading.Thread(target=lambda: started.wait(5) and cancel.cancel("ctrl-c")).start()
    t0 = time.monotonic()
    events = run(agent, cancel=cancel)
    assert time.monotonic() - t0 < 5
    assert isinstance(events[-1], Done) and events[-1].reason == "cancelled"
    path = agent.session.path
    agent.session.close()
    with Session.open(path) as again:
        msgs = again.messages()
        assert msgs[-1].role is Role.TOOL and "cancelled" in msgs[-1].content


def test_cancel_during_streaming_keeps_partial_text(make_agent: MakeAgent) -> None:
    def drip(request: Request, cancel: Cancel) -> Iterator[Chunk]:
        yield Chunk(ChunkKind.TEXT, text="partial ")
        cancel.cancel("ctrl-c")
        cancel.raise_if_cancelled()

    agent, _ = make_agent([drip, text("next")])
    events = run(agent)
    assert isinstance(events[-1], Done) and events[-1].reason == "cancelled"
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["partial "]
    last = agent.session.messages()[-1]
    assert last.role is Role.ASSISTANT and last.content.startswith("partial ")
    assert isinstance(run(agent, "again")[-1], Done)  # the agent stays usable


def test_instructions_only_in_the_first_user_turn(make_agent: MakeAgent) -> None:
    agent, prov = make_agent([text("a"), text("b")], instructions="<instructions>X</instructions>")
    run(agent, "first")
    run(agent, "second")
    users = [m.content for m in prov.requests[1].messages if m.role is Role.USER]
    assert users == ["<instructions>X</instructions>\n\nfirst", "second"]
    assert agent.session.title == "first"


def test_dangling_tool_calls_are_answered_on_resume(make_agent: MakeAgent, workspace: Path) -> None:
    agent, _ = make_agent([calls(("echo", '{"x":"1"}'), ("echo", '{"x":"2"}'))], echo_registry())
    gen = agent.run("go", Cancel())
    for ev in gen:
        if isinstance(ev, ToolStart):
            break
    gen.close()  # the consumer went away mid-tools, like a kill between records
    path = agent.session.path
    agent.session.close()
    session = Session.open(path)
    agent2, _ = make_agent([text("fine")], echo_registry(), session=session)
    tool_ids = [m.tool_call_id for m in agent2.history if m.role is Role.TOOL]
    assert sorted(tool_ids) == ["c0-echo", "c1-echo"]
    assert isinstance(run(agent2, "continue")[-1], Done)


def test_a_call_id_reused_by_an_earlier_round_is_still_answered_on_resume(
    make_agent: MakeAgent, workspace: Path
) -> None:
    """Servers that number calls per answer repeat ``call_0``: the earlier round's result
    does not answer the killed round's call (the request would be invalid without one)."""
    from reasonix.provider.types import Message, ToolCall

    with Session.create(workspace) as s:
        s.append_message(Message(Role.USER, "first"))
        s.append_message(Message(Role.ASSISTANT, "", [ToolCall("call_0", "echo", '{"x":"1"}')]))
        s.append_message(Message(Role.TOOL, "1", tool_call_id="call_0", name="echo"))
        s.append_message(Message(Role.ASSISTANT, "done"))
        s.append_message(Message(Role.USER, "second"))
        s.append_message(Message(Role.ASSISTANT, "", [ToolCall("call_0", "echo", '{"x":"2"}')]))
        path = s.path
    agent, _ = make_agent([text("fine")], echo_registry(), session=Session.open(path))
    last = agent.history[-1]
    assert last.role is Role.TOOL and last.tool_call_id == "call_0"
    assert "interrupted" in last.content and len(agent.history) == 7


def test_reassessment_nudge_after_eight_rounds_without_todo_progress(
    make_agent: MakeAgent,
) -> None:
    todos_schema: dict[str, Any] = {"type": "object", "properties": {"todos": {"type": "array"}}}

    def todo(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.extra["todos"] = args["todos"]
        return "ok"

    reg = echo_registry()
    reg.add(FunctionTool("todo_write", "todos", todos_schema, todo, read_only=True))
    plan = '{"todos": [{"content": "fix it", "status": "in_progress"}]}'
    script = [calls(("todo_write", plan))]
    script += [calls(("echo", '{"x":"same"}')) for _ in range(12)]
    script += [calls(("todo_write", plan)), text("done")]  # an exact repeat is no progress
    agent, _ = make_agent(script, reg)
    run(agent)
    tool_texts = [m.content for m in agent.session.messages() if m.role is Role.TOOL]
    nudged = [i for i, t in enumerate(tool_texts) if "did not move your todo list" in t]
    assert nudged == [8]  # once: the 8th stale round after the plan was written
