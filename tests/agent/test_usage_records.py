"""Every model request leaves a usage record in the transcript (issue 36: `reasonix usage`)."""

from __future__ import annotations

from pathlib import Path

from agent_scripted import calls, text
from test_agent_loop import MakeAgent, echo_registry, run

from reasonix.agent.session import read_records
from reasonix.agent.usage_report import build_report
from reasonix.provider.types import Usage


def test_each_request_is_recorded_and_the_report_sums_to_the_runs_telemetry(
    make_agent: MakeAgent,
) -> None:
    big = Usage(input_tokens=5000, output_tokens=300, cache_read_tokens=4000,
                cache_write_tokens=200, reasoning_tokens=50)  # fmt: skip
    agent, _ = make_agent(
        [calls(("echo", '{"x": "a"}')), text("done", big), text("again")], echo_registry()
    )
    run(agent)
    run(agent, "more")
    path = Path(agent.session.path)
    agent.session.sync()
    records = [r for r in read_records(path) if r.get("type") == "usage"]
    assert len(records) == 3 == len(agent.telemetry.per_request)
    assert records[1]["cache_read"] == 4000 and records[1]["model"] == "m"
    report = build_report([("p", path)], lambda p, m: ({"input": 1.0, "output": 2.0}, "test"))
    total, want = report.total, agent.telemetry.total
    assert total.requests == 3
    assert total.tokens["input"] == want.input_tokens
    assert total.tokens["output"] == want.output_tokens
    assert total.tokens["cache_read"] == want.cache_read_tokens
    assert total.tokens["cache_write"] == want.cache_write_tokens
    assert total.tokens["reasoning"] == want.reasoning_tokens
