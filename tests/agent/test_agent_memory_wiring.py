"""Memory wired into a real agent: recall keeps the prefix, approvals, self-gating, paging.

Real parts only: the loopback fake provider, the real Gate/Policy, real fact
stores and transcripts under the per-test REASONIX_HOME.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, ToolSpec, Turn

import reasonix.provider as provider_registry
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent.events import ApprovalRequested, Done, Event, ToolEnd
from reasonix.agent.execute import EventApprover
from reasonix.agent.loop import Agent
from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.recall import Recaller
from reasonix.agent.memory.wiring import (
    controller_tools,
    memory_extra,
    tool_result_capability,
)
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.cli.setup_run import add_run_flags, build
from reasonix.config.model import ProviderConfig
from reasonix.permission import ApprovalChoice, Gate, Policy
from reasonix.permission.modes import Decision
from reasonix.plugin.mcp.tools import UseCapabilityTool
from reasonix.tool import Registry, ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

FACT = "The release checklist lives in docs/RELEASING.md and needs two reviewers"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


class Run:
    """One agent over a session with the controller's memory tools and the pager."""

    def __init__(
        self,
        url: str,
        ws: Path,
        *,
        recall: bool = True,
        gate: Gate | None = None,
        approver: EventApprover | None = None,
        mode: str = "ask",
        extra_tools: tuple[FunctionTool, ...] = (),
    ) -> None:
        self.session = Session.create(ws)
        self.memory = Memory.for_workspace(ws)
        reg = Registry()
        for tool in controller_tools(self.memory, ws, lambda: self.session):
            reg.add(tool)
        reg.add(UseCapabilityTool(dict, local=[tool_result_capability(lambda: self.session)]))
        for tool in extra_tools:
            reg.add(tool)
        cfg = ProviderConfig(name="fake", kind="openai", base_url=url, models=["fake-model"])
        cfg.api_key = "k"
        ctx = ToolContext(workspace=ws, headless=approver is None)
        ctx.extra.update(memory_extra(mode, approver))
        self.agent = Agent(
            provider_registry.new("openai", cfg),
            reg,
            self.session,
            model="fake-model",
            system="stable system prompt",
            tool_ctx=ctx,
            gate=gate,
            approver=approver,
            recall=Recaller(self.memory).recall_suffix if recall else None,
        )

    def turn(self, text: str, answer: ApprovalChoice | None = None) -> list[Event]:
        events = []
        for event in self.agent.run(text, Cancel()):
            if isinstance(event, ApprovalRequested):
                event.answer(answer)
            events.append(event)
        assert isinstance(events[-1], Done), events[-1]
        return events

    def close(self) -> None:
        self.session.close()


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    made: list[Run] = []
    yield made
    for r in made:
        r.close()


def _system_and_tools(body: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(body["messages"][0], sort_keys=True), json.dumps(
        body["tools"], sort_keys=True
    )


def _last_user(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def _tool_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def test_recall_with_facts_keeps_system_and_tools_bytes_and_extends_prefix(
    ws: Path, runs: list[Run]
) -> None:
    # A baseline run without facts and without recall: the bytes to match.
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        runs.append(Run(srv.url, ws, recall=False))
        runs[-1].turn("where does the release checklist live")
        baseline = _system_and_tools(srv.requests[0].json)
    memory = Memory.for_workspace(ws)
    memory.store("project").create(FACT, type="project", title="release checklist")
    memory.store("global").create("Prefer small release commits", type="user")
    script = []
    for i in range(4):
        script.append(Turn.tools([ToolSpec("memory", '{"operation": "list"}', id=f"m{i}")]))
        script.append(Turn.text_only(f"answer {i}"))
    with FakeServer("openai", script) as srv:
        run = Run(srv.url, ws)
        runs.append(run)
        for i in range(4):
            run.turn(f"question {i} about the release checklist reviewers")
        bodies = [r.json for r in srv.requests]
    assert len(bodies) == 8
    prev_msgs: list[str] = []
    for i, body in enumerate(bodies):
        assert _system_and_tools(body) == baseline, f"request {i + 1}: system/tools changed"
        assert "RELEASING" not in json.dumps(body["messages"][0])
        msgs = [json.dumps(m, sort_keys=True) for m in body["messages"][1:]]
        assert msgs[: len(prev_msgs)] == prev_msgs, f"request {i + 1}: history rewritten"
        prev_msgs = msgs
    user = _last_user(bodies[0])
    assert user.startswith("question 0 about the release checklist reviewers\n\n<memory-recall>")
    assert "docs/RELEASING.md" in user and user.endswith("</memory-recall>")


def test_generic_turn_recalls_nothing(ws: Path, runs: list[Run]) -> None:
    Memory.for_workspace(ws).store("project").create(FACT, type="project")
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        runs.append(Run(srv.url, ws))
        runs[-1].turn("continue")
        assert _last_user(srv.requests[0].json) == "continue"


def _remember(content: str, **kw: str) -> Turn:
    return Turn.tools([ToolSpec("remember", json.dumps({"content": content, **kw}), id="r1")])


def test_interactive_ask_prompts_once_through_the_approver(ws: Path, runs: list[Run]) -> None:
    approver = EventApprover()
    gate = Gate(Policy("ask"), approver)
    script = [
        _remember("Use tabs in Makefiles", scope="global", type="user"),
        Turn.text_only("saved"),
        _remember("Prefer rebase over merge", scope="global", type="user"),
        Turn.text_only("not saved"),
        _remember("The API server listens on port 8080", type="project"),
        Turn.text_only("saved quietly"),
    ]
    with FakeServer("openai", script) as srv:
        run = Run(srv.url, ws, gate=gate, approver=approver)
        runs.append(run)
        events = run.turn("remember that I use tabs in makefiles", ApprovalChoice.ONCE)
        asks = [e for e in events if isinstance(e, ApprovalRequested)]
        assert len(asks) == 1  # the tool's fresh confirmation only: no gate fallback prompt
        req = asks[0].request
        assert req.tool_name == "remember" and req.args == {} and req.fresh
        assert req.choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)
        assert "global scope" in req.reason and "Makefiles" not in req.summary
        events = run.turn("remember that I prefer rebase", ApprovalChoice.DENY)
        assert sum(isinstance(e, ApprovalRequested) for e in events) == 1
        end = next(e for e in events if isinstance(e, ToolEnd))
        assert end.is_error and "did not approve" in end.content
        events = run.turn("note the api port please")
        assert not any(isinstance(e, ApprovalRequested) for e in events)
    facts = {f.content: f.scope for f in run.memory.facts()}
    assert facts == {
        "Use tabs in Makefiles": "global",
        "The API server listens on port 8080": "project",
    }


def test_explicit_rules_reach_the_self_gated_tool(ws: Path, runs: list[Run]) -> None:
    # Interactive Auto allows memory writes by fallback but keeps an explicit ask (MEM-11).
    approver = EventApprover()
    gate = Gate(Policy("auto", ask=["remember"]), approver)
    script = [_remember("Deploys happen on Tuesdays", type="project"), Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        run = Run(srv.url, ws, gate=gate, approver=approver, mode="auto")
        runs.append(run)
        events = run.turn("deploy schedule", ApprovalChoice.ONCE)
    assert sum(isinstance(e, ApprovalRequested) for e in events) == 1
    assert [f.content for f in run.memory.facts()] == ["Deploys happen on Tuesdays"]
    # An explicit deny blocks at the gate; headless an explicit ask fails closed.
    for policy in (Policy("bypassPermissions", deny=["remember"]), Policy("ask", ask=["remember"])):
        with FakeServer("openai", [*script]) as srv:
            run = Run(srv.url, ws, gate=Gate(policy, None), mode=str(policy.mode))
            runs.append(run)
            events = run.turn("deploy schedule again")
        end = next(e for e in events if isinstance(e, ToolEnd))
        assert end.is_error, end.content
    assert len(run.memory.facts()) == 1


def test_gate_self_gated_applies_only_explicit_rules() -> None:
    asked: list[Any] = []

    def approver(request: Any) -> ApprovalChoice:
        asked.append(request)
        return ApprovalChoice.ONCE

    args = {"content": "x"}
    headless = Gate(Policy("ask"))
    assert not headless.check("remember", False, args).allowed  # ordinary writer: fails closed
    out = headless.check("remember", False, args, self_gated=True)
    assert out.allowed and out.decision is Decision.ALLOW
    out = Gate(Policy("ask", deny=["remember"]), approver).check(
        "remember", False, args, self_gated=True
    )
    assert not out.allowed and out.decision is Decision.DENY
    out = Gate(Policy("auto", ask=["forget"]), approver).check(
        "forget", False, {"id": "f"}, self_gated=True
    )
    assert out.allowed and out.decision is Decision.ASK
    out = Gate(Policy("dontAsk", ask=["forget"]), approver).check(
        "forget", False, {"id": "f"}, self_gated=True
    )
    assert not out.allowed
    assert asked == []  # the gate never prompts for a self-gated tool


def test_use_capability_pages_a_long_result_headless(ws: Path, runs: list[Run]) -> None:
    lines = [f"LINE-{i:05d} " + "x" * 90 for i in range(1000)]  # ~100 KB, clipped at 32 KiB
    big = FunctionTool(
        "big", "big output", {"type": "object", "properties": {}}, lambda a, c: "\n".join(lines),
        read_only=True,
    )  # fmt: skip
    page = {"tool_call_id": "c_big", "page": 7}
    call = {"action": "call", "server": "session", "tool": "tool_result", "arguments": page}
    script = [
        Turn.tools([ToolSpec("big", "{}", id="c_big")]),
        Turn.tools([ToolSpec("use_capability", json.dumps(call), id="c_page")]),
        Turn.tools([ToolSpec("use_capability", '{"action": "list"}', id="c_list")]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        # headless, mode ask: the pager passes the gate as a reader; other writers would not
        run = Run(srv.url, ws, gate=Gate(Policy("ask")), extra_tools=(big,))
        runs.append(run)
        run.turn("show me the big output")
        bodies = [r.json for r in srv.requests]
    clipped = _tool_texts(bodies[1])[0]
    assert "LINE-00500" not in clipped and "bytes omitted" in clipped
    paged = _tool_texts(bodies[2])[1]
    assert paged.startswith("[tool result c_big: page 7 of 13,")
    assert "LINE-00500" in paged and len(paged.encode()) <= 32768
    listing = _tool_texts(bodies[3])[2]
    assert "session [built-in]" in listing and "tool_result" in listing
    tools = {t["function"]["name"]: t["function"] for t in bodies[0]["tools"]}
    assert 'server "session", tool "tool_result"' in tools["use_capability"]["description"]


def test_history_follows_the_session_in_use(ws: Path, runs: list[Run]) -> None:
    calls = [
        ToolSpec("history", '{"query": "zebra plum", "scope": "session"}', id="h1"),
        ToolSpec("history", '{"query": "zebra plum", "scope": "project"}', id="h2"),
    ]
    script = [Turn.text_only("noted"), Turn.tools(calls), Turn.text_only("found")]
    with FakeServer("openai", script) as srv:
        run = Run(srv.url, ws)
        runs.append(run)
        run.turn("the codeword is zebra plum")
        first, run.session = run.session, Session.create(ws)  # what /new does
        first.close()
        a = run.agent
        run.agent = Agent(
            a.provider, a.registry, run.session, model=a.model, system=a.system,
            tool_ctx=a.tool_ctx,
        )  # fmt: skip
        run.turn("search for the codeword")
        in_session, in_project = _tool_texts(srv.requests[2].json)
    # scope=session reads the new session (where only this very call matches), not the first
    assert first.id not in in_session and in_session.startswith(f"{run.session.id}#")
    assert in_project.startswith(f"{first.id}#") and "zebra plum" in in_project


def _args(ws: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_run_flags(parser)
    return parser.parse_args(["--dir", str(ws), *extra])


def _project(ws: Path, url: str, enabled: str = "") -> None:
    tools = f"\n[tools]\nenabled = [{enabled}]\n" if enabled else ""
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n'
        f'{tools}\n[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )


def test_build_wires_memory_and_tools_enabled_names_them(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    _project(ws, "http://127.0.0.1:9")
    setup = build(_args(ws), interactive=False)
    try:
        names = set(setup.agent.registry.names())
        assert {"memory", "remember", "forget", "history", "use_capability"} <= names
        assert "read_file" in names and "session_tool_result" not in names
        extra = setup.agent.tool_ctx.extra
        assert "approve_memory" not in extra and extra["subagent"] is False
        assert setup.agent.recall is not None
        tools = [t.__dict__ for t in setup.agent.tools]
        setup.new_session()
        assert [t.__dict__ for t in setup.agent.tools] == tools  # same schema after /new
    finally:
        setup.close()
    _project(ws, "http://127.0.0.1:9", '"read_file", "memory", "history"')
    setup = build(_args(ws, "--permission-mode", "auto"), interactive=True)
    try:
        names = set(setup.agent.registry.names())
        assert names == {"read_file", "memory", "history", "use_capability"}
        extra = setup.agent.tool_ctx.extra
        assert callable(extra["approve_memory"]) and str(extra["permission_mode"]) == "auto"
    finally:
        setup.close()


def test_tool_result_capability_reports_bad_arguments(ws: Path) -> None:
    with Session.create(ws) as session:
        cap = UseCapabilityTool(dict, local=[tool_result_capability(lambda: session)])
        call = {"action": "call", "tool": "session:tool_result", "arguments": {"page": 1}}
        res: ToolResult = cap.execute(json.dumps(call), ToolContext())
        assert res.is_error and "tool_call_id" in res.content
        call["arguments"] = {"tool_call_id": "nope"}
        res = cap.execute(json.dumps(call), ToolContext())
        assert res.is_error and "no tool result" in res.content
        assert cap.reads_only(call) and not cap.reads_only({"action": "call", "server": "x"})
