"""Golden exchanges: the protocol docs' example messages in, our exact answers out.

``golden/handshake.jsonl`` holds ``{"send": …}`` / ``{"expect": …}`` lines;
``golden/errors.json`` pairs raw lines (JSON-RPC 2.0's own examples of bad
input among them) with the exact error response.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from acp_client import AgentProcess

GOLDEN = Path(__file__).with_name("golden")


def _settle(agent: AgentProcess, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(agent.messages) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # anything extra (an answer to a notification) would show up now


def test_handshake_golden() -> None:
    steps = [json.loads(line) for line in (GOLDEN / "handshake.jsonl").read_text().splitlines()]
    agent = AgentProcess()
    try:
        for step in steps:
            if "send" in step:
                agent.send(step["send"])
        expected = [s["expect"] for s in steps if "expect" in s]
        _settle(agent, len(expected))
    finally:
        agent.close()
    assert agent.messages == expected


def test_error_golden() -> None:
    cases = json.loads((GOLDEN / "errors.json").read_text())
    agent = AgentProcess()
    try:
        for raw, _ in cases:
            agent.send(raw.encode() + b"\n")
        _settle(agent, len(cases))
    finally:
        agent.close()
    assert agent.messages == [want for _, want in cases]
