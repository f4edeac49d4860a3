"""Issue 36 item 3 over real child runtimes and a loopback model server: per-spawn
budgets (``[agent] subagent_max_*`` and the call's own), reserved from the run's and
cut to what it has left; the session's spawn cap; live per-child counters
(:class:`SubagentProgress`); stopping the parent stops the whole subtree."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from coord_kit import project
from fakes import FakeServer, RecordedRequest, ToolSpec, Turn

from reasonix.agent.events import Done, Event, SubagentProgress, ToolEnd
from reasonix.agent.session import read_records
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.config.paths import sessions_dir

USAGE = {"input_tokens": 300, "output_tokens": 50}  # 350 tokens a request


def read(i: int) -> Turn:
    return Turn.tools([ToolSpec("read_file", json.dumps({"path": "a.txt"}), id=f"r{i}")],
                      usage=USAGE)  # fmt: skip


def task(id_: str, **args: object) -> Turn:
    call = ToolSpec("task", json.dumps({"prompt": "read a.txt forever", **args}), id=id_)
    return Turn.tools([call], usage=USAGE)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    return tmp_path / "repo"


def turn_of(ws: Path, script: list[Turn], agent: str) -> tuple[list[Event], int]:
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, planner=False, agent=agent)
        (ws / "a.txt").write_text("fact\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            events = list(rt.runner.run("go", Cancel()))
        finally:
            rt.close()
        return events, len(srv.requests)


def progress(events: list[Event]) -> list[SubagentProgress]:
    return [e for e in events if isinstance(e, SubagentProgress)]


def test_the_agent_default_caps_a_child_and_its_counters_stream_live(ws: Path) -> None:
    script = [task("t0"), *[read(i) for i in range(10)]]
    script[3:] = [Turn.text_only("the parent goes on"), *script[3:]]
    events, sent = turn_of(ws, script, "subagent_max_tokens = 500")
    # parent 1, child 350 then 700 >= 500: no third request, parent answers
    assert sent == 4
    ends = [e for e in events if isinstance(e, ToolEnd) and e.name == "task"]
    assert "its budget ran out" in ends[0].content
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "complete"
    seen = [(p.state, p.tokens, p.turns) for p in progress(events)]
    assert seen == [("running", 0, 0), ("running", 350, 1), ("running", 700, 2),
                    ("budget", 700, 2)]  # fmt: skip
    last = progress(events)[-1]
    assert last.call_id == "t0" and last.depth == 1 and last.limits == {"tokens": 500.0}
    assert last.cost is None  # the fake model has no price: shown as unpriced


def test_a_call_budget_is_cut_to_the_run_remaining_and_the_spawn_cap_holds(ws: Path) -> None:
    script = [
        task("t0", max_tokens=100_000, max_turns=1), read(1),
        task("t1"), Turn.text_only("done without a second helper"),
    ]  # fmt: skip
    events, sent = turn_of(ws, script, "max_tokens = 5000\nmax_subagent_spawns = 1")
    first = progress(events)[-1]
    # 5000 less the parent's first request (350); one request (max_turns), then "turns"
    assert first.limits == {"tokens": 4650.0, "turns": 1.0}
    assert (first.turns, first.state) == (1, "budget")
    ends = [e for e in events if isinstance(e, ToolEnd) and e.name == "task"]
    assert len(ends) == 2 and ends[1].is_error
    assert "max_subagent_spawns allows (1)" in ends[1].content
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "complete"  # the run goes on
    assert sent == 4  # parent, child (one turn), parent (refused spawn), parent


def test_unspent_budget_returns_to_the_run(ws: Path) -> None:
    script = [
        task("t0", max_tokens=2500), Turn.text_only("child one done", usage=USAGE),
        task("t1", max_tokens=2500), Turn.text_only("child two done", usage=USAGE),
        Turn.text_only("all done", usage=USAGE),
    ]  # fmt: skip
    events, _sent = turn_of(ws, script, "max_tokens = 3000")
    one, two = (p for p in progress(events) if p.state != "running")
    assert one.limits["tokens"] == 2500.0  # 3000 - 350 used leaves more than it asked
    assert (one.state, two.state) == ("complete", "complete")
    # the first child's unspent 2150 came back: 3000 - 3 x 350 used = 1950 left
    assert two.limits["tokens"] == 1950.0


def _child_loops(n_children: int) -> tuple[list[RecordedRequest], FakeServer]:
    """A parent that starts ``n_children`` read-only children which read forever."""
    prompts = [{"prompt": f"read a.txt forever ({i})"} for i in range(n_children)]
    state = {"parent": 0}
    lock = threading.Lock()

    def answer(req: RecordedRequest) -> Turn:
        tools = {t["function"]["name"] for t in (req.json or {}).get("tools", [])}
        if "fleet" in tools:  # the parent (children get no fleet tool)
            with lock:
                state["parent"] += 1
                first = state["parent"] == 1
            if first:
                call = ToolSpec("parallel_tasks", json.dumps({"tasks": prompts}), id="p0")
                return Turn.tools([call], usage=USAGE)
            return Turn.text_only("stopped", usage=USAGE)
        return Turn(tool_calls=[ToolSpec("read_file", '{"path": "a.txt"}')], usage=USAGE,
                    delay=0.01)  # fmt: skip

    srv = FakeServer("openai", [], responder=answer)
    return srv.requests, srv


def test_stopping_the_parent_stops_every_child_and_keeps_their_usage(ws: Path) -> None:
    requests, srv = _child_loops(3)
    with srv:
        project(ws, srv.url, planner=False)
        (ws / "a.txt").write_text("fact\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        cancel = Cancel()
        events: list[Event] = []
        try:
            worker = threading.Thread(
                target=lambda: events.extend(rt.runner.run("go", cancel)), daemon=True
            )
            worker.start()
            deadline = time.monotonic() + 30
            while len(requests) < 12 and time.monotonic() < deadline:  # the fleet is busy
                time.sleep(0.01)
            cancel.cancel("stop")
            stopped = time.monotonic()
            at_stop = len(requests)
            worker.join(10)
            took = time.monotonic() - stopped
            assert not worker.is_alive()
            time.sleep(0.3)
        finally:
            rt.close()
        after = len(requests)
    assert took < 2.0, took  # the whole subtree within 2 s
    assert after - at_stop <= 3, (at_stop, after)  # at most the in-flight ones
    states = {p.run_id: p.state for p in progress(events)}
    assert len(states) == 3 and set(states.values()) == {"cancelled"}
    recorded = 0
    for path in (sessions_dir(ws) / "subagents").glob("*.jsonl"):
        recorded += sum(1 for r in read_records(path) if r.get("type") == "usage")
    assert recorded >= at_stop - 1 - 3  # every finished child request (parent's first excluded)


def test_a_nested_child_reserves_from_its_parent_child_and_reports_up(ws: Path) -> None:
    nested = ToolSpec("task", json.dumps({"prompt": "look deeper", "max_tokens": 5000}), id="n0")
    script = [
        task("t0", max_tokens=1000),
        Turn.tools([nested], usage=USAGE),  # the child delegates
        Turn.text_only("deep answer", usage=USAGE),  # the nested child
        Turn.text_only("child answer", usage=USAGE),
        Turn.text_only("all done", usage=USAGE),
    ]
    events, sent = turn_of(ws, script, "")
    assert sent == 5
    seen = progress(events)
    deep = [p for p in seen if p.depth == 2]
    assert deep and {p.call_id for p in seen} == {"t0"}  # passed up under the top call
    # the child's 1000, less its own first request (350)
    assert deep[-1].limits == {"tokens": 650.0} and deep[-1].state == "complete"
    top = [p for p in seen if p.depth == 1]
    assert top[-1].state == "complete" and top[-1].tokens == 700  # its own requests only
