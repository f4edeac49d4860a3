"""SUB-9…11: complete_subtask, host receipts, adjudication and the parent's text."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix.agent.events import ToolEnd, ToolStart
from reasonix.agent.subagent.completion import (
    adjudicate,
    complete_subtask_tool,
    render,
    run_verdict,
)
from reasonix.agent.subagent.ledger import Ledger
from reasonix.tool import ToolContext


def _call(ledger: Ledger, n: int, name: str, args: dict, content: str, err: bool = False) -> None:
    cid = f"c{n}"
    ledger.observe(ToolStart(cid, name, json.dumps(args), False))
    ledger.observe(ToolEnd(cid, name, content, err, 0.0))


def _ledger(ws: Path) -> Ledger:
    (ws / "src").mkdir(parents=True, exist_ok=True)
    led = Ledger(ws)
    _call(led, 1, "write_file", {"path": "src/a.py", "content": "x"}, "Created src/a.py")
    _call(led, 2, "read_file", {"path": "README.md"}, "1\thello")
    _call(led, 3, "bash", {"command": "pytest -q"}, "3 passed\n[exit code 0]")
    _call(led, 4, "bash", {"command": "make lint"}, "boom\n[exit code 2]", err=True)
    _call(led, 5, "write_file", {"path": "../x"}, "write_file: writing '../x' is not allowed", True)
    return led


def test_the_ledger_records_what_the_host_saw(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    led = _ledger(ws)
    assert led.writes == [ws.resolve() / "src" / "a.py"] and led.tool_calls == 5
    assert led.reads == [ws.resolve() / "README.md"]
    assert [(c.command, c.exit_code) for c in led.commands] == [("pytest -q", 0), ("make lint", 2)]
    assert led.refused and led.refused[0].startswith("write_file ../x:")
    assert led.ran("`pytest -q`") is not None and led.ran("pytest") is None
    assert led.saw("src/a.py") and led.saw("src") and not led.saw("src/b.py")


def test_fabricated_citations_are_downgraded(tmp_path: Path) -> None:
    led = _ledger(tmp_path / "ws")
    report = {
        "status": "complete",
        "summary": "all done",
        "acceptance_criteria": [
            {"text": "a.py exists", "kind": "files", "evidence": ["src/a.py"]},
            {"text": "tests pass", "kind": "verification", "evidence": ["pytest -q"]},
            {"text": "docs updated", "kind": "diff", "evidence": ["docs/guide.md"]},
            {"text": "e2e green", "kind": "verification", "evidence": ["npm run e2e"]},
            {"text": "lint clean", "kind": "verification", "evidence": ["make lint"]},
            {"text": "looks right", "kind": "manual"},
        ],
        "unresolved": ["nothing"],
    }
    v = adjudicate(report, led)
    assert [c.status for c in v.criteria] == ["satisfied", "satisfied"] + ["unsatisfied"] * 4
    assert v.status == "partial" and v.claimed == "complete" and v.false_completion
    assert v.criterion_downgrades == 4
    reasons = " | ".join(v.downgrades)
    assert "never saw docs/guide.md" in reasons and "never saw `npm run e2e` run" in reasons
    assert "exited 2" in reasons and "manual criteria are never backed" in reasons
    assert "status complete → partial" in reasons


def test_valid_evidence_keeps_a_claim_and_nothing_is_upgraded(tmp_path: Path) -> None:
    led = _ledger(tmp_path / "ws")
    good = [{"text": "tests pass", "kind": "verification", "evidence": ["pytest -q"]}]
    blocked = adjudicate({"status": "blocked", "summary": "s", "acceptance_criteria": good}, led)
    assert blocked.status == "blocked" and not blocked.downgrades and not blocked.false_completion
    done = adjudicate({"status": "complete", "summary": "s", "acceptance_criteria": good}, led)
    assert done.status == "complete" and not done.false_completion
    own = [{"text": "x", "kind": "files", "evidence": ["src/a.py"], "status": "unsatisfied"}]
    partial = adjudicate({"status": "complete", "summary": "s", "acceptance_criteria": own}, led)
    assert partial.status == "partial" and partial.criterion_downgrades == 0  # its own word
    assert adjudicate({"status": "partial", "summary": "s"}, led).status == "partial"


def test_the_parent_gets_verdict_then_prose_then_receipts(tmp_path: Path) -> None:
    led = _ledger(tmp_path / "ws")
    crit = [{"text": "tests pass", "kind": "verification", "evidence": ["tox"]}]
    v = adjudicate({"status": "complete", "summary": "did it", "acceptance_criteria": crit}, led)
    text = render(v, "I changed a.py.", ["wrote: src/a.py", "ran: `pytest -q` → exit 0"], True)
    assert text.startswith("status: partial (claimed complete; the host downgraded it)")
    assert text.index("criteria:") < text.index("I changed a.py.") < text.index("host receipts:")
    assert text.index("host receipts:") < text.index("- wrote: src/a.py")
    prose_only = render(run_verdict("complete", ""), "done", [], True)
    assert prose_only.startswith("status: complete (prose only")
    assert render(run_verdict("", "provider down"), "", [], False).startswith("status: failed")


def test_complete_subtask_schema_and_validation() -> None:
    tool = complete_subtask_tool()
    props = tool.schema["properties"]
    assert set(props) == {"status", "summary", "acceptance_criteria", "unresolved"}
    assert props["status"]["enum"] == ["complete", "partial", "blocked", "failed"]
    item = props["acceptance_criteria"]["items"]["properties"]
    assert item["kind"]["enum"] == ["verification", "diff", "files", "manual"]
    assert set(tool.schema["required"]) == {"status", "summary"} and tool.read_only
    ok = tool.execute(json.dumps({"status": "complete", "summary": "s"}), ToolContext())
    assert not ok.is_error and "end your turn" in ok.content.lower()
    bad = {"status": "complete", "summary": "s", "acceptance_criteria": [{"kind": "vibes"}]}
    assert tool.execute(json.dumps(bad), ToolContext()).is_error


def test_complete_without_criteria_is_not_accepted_as_complete(tmp_path: Path) -> None:
    led = _ledger(tmp_path / "ws")  # the child did write: the task asked for a change
    bare = {"status": "complete", "summary": "done"}
    for report in (bare, {**bare, "acceptance_criteria": []}):
        v = adjudicate(report, led)
        assert v.status == "partial" and v.claimed == "complete" and v.false_completion
        assert v.downgrades == [
            "status complete → partial: the report names no acceptance criteria,"
            " so the host could check nothing"
        ]
        text = render(v, "done", ["wrote: src/a.py"], True)
        assert text.startswith("status: partial (claimed complete; the host downgraded it)")
    for status in ("partial", "blocked", "failed"):  # only a complete claim is lowered
        v = adjudicate({"status": status, "summary": "s"}, led)
        assert v.status == status and not v.downgrades and not v.false_completion
