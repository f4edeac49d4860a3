"""The rule simulator over real transcripts: what a rule would have approved, and alternatives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.agent.session import Session
from reasonix.errors import ConfigError
from reasonix.permission.simulate import RecordedCall, simulate
from reasonix.provider.types import Message, Role, ToolCall

ROOT = Path(__file__).resolve().parents[2]


def _session(ws: Path, calls: list[tuple[str, bool]]) -> None:
    s = Session.create(ws)
    for i, (command, ran) in enumerate(calls):
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": command}))
        s.append_message(Message(Role.ASSISTANT, "", tool_calls=[call]))
        text = "exit 0" if ran else "blocked: bash was not run (needs approval)"
        s.append_message(Message(Role.TOOL, text, tool_call_id=call.id, name="bash"))
    s.close()


def test_thirty_git_calls_across_three_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    per_session = [("git status", True)] * 4 + [("git diff", True)] * 2 + [
        ("git push origin main", False), ("git reset --hard HEAD~1", False),
        ("git status --short", True), ("git log -1", True),
    ]  # fmt: skip
    for _ in range(3):
        _session(ws, per_session)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "reasonix", "permission", "simulate", "Bash(git:*)", "--json"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["calls_recorded"] == 30 and report["matched"] == 30
    assert report["newly_approved"] == 6  # the three pushes and three resets
    assert sorted(report["examples"]) == ["git push origin main", "git reset --hard HEAD~1"]
    narrower = {r["rule"]: r for r in report["narrower"]}
    assert narrower["Bash(git status:*)"]["matched"] == 15  # only the status calls
    assert narrower["Bash(git status:*)"]["newly_approved"] == 0
    assert narrower["Bash(git push:*)"]["newly_approved"] == 3
    assert report["wider"] == []


def test_alternatives_of_a_subcommand_and_an_exact_rule() -> None:
    seen = [("npm test", True), ("npm test -- --watch", False), ("npm install left-pad", False)]
    calls = [RecordedCall("bash", {"command": c}, ran) for c, ran in seen]
    sub = simulate("Bash(npm test:*)", calls)
    assert (sub.rule.matched, sub.rule.newly) == (2, 1)
    assert [w.rule for w in sub.wider] == ["Bash(npm:*)"] and sub.wider[0].newly == 2
    assert "Bash(npm test)" in [n.rule for n in sub.narrower]
    exact = simulate("Bash(npm test)", calls)
    assert exact.rule.matched == 1
    assert [w.rule for w in exact.wider] == ["Bash(npm test:*)", "Bash(npm:*)"]


def test_file_rules_count_only_what_the_rule_adds(tmp_path: Path) -> None:
    calls = [
        RecordedCall("edit_file", {"path": "src/a.py"}, False),
        RecordedCall("edit_file", {"path": "docs/x.md"}, False),
        RecordedCall("read_file", {"path": "src/a.py"}, True, read_only=True),  # allowed anyway
    ]
    sim = simulate("Edit(src/**)", calls, str(tmp_path))
    assert (sim.rule.matched, sim.rule.newly) == (1, 1) and sim.narrower == []
    assert "would approve 1 of 3 recorded calls" in sim.summary()


def test_a_malformed_rule_is_an_error() -> None:
    with pytest.raises(ConfigError):
        simulate("Bash(:*)", [])


def test_the_gate_offers_the_preview_before_an_always_answer(tmp_path: Path) -> None:
    from reasonix.boot.permissions import build_gate
    from reasonix.config import load
    from reasonix.permission import ApprovalChoice, ApprovalRequest

    ws = tmp_path / "ws"
    ws.mkdir()
    _session(ws, [("make deploy", False), ("make test", True)])
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> ApprovalChoice:
        seen.append(request)
        return ApprovalChoice.ONCE

    gate = build_gate(load(ws), [], approver, ws)  # type: ignore[arg-type]
    assert gate.check("bash", False, {"command": "make lint"}).allowed
    request = seen[0]
    assert request.preview is not None and ApprovalChoice.ALWAYS in request.choices
    text = request.preview("Bash(make:*)")
    assert "would approve 2 of 2 recorded calls; 1 of them were not approved then" in text
    assert "make deploy" in text
