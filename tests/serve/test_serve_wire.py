"""What the browser receives: Runner events, approval cards, edit diffs, stored history."""

from __future__ import annotations

import json

from reasonix.agent.events import (
    Done,
    Error,
    Notice,
    Phase,
    ReasoningDelta,
    SandboxEscape,
    StepStart,
    TextDelta,
    ToolEnd,
    ToolStart,
    UsageReport,
    WebSearch,
)
from reasonix.errors import ProviderError
from reasonix.permission import ApprovalChoice, ApprovalRequest
from reasonix.provider.types import Usage, WebSearchResult
from reasonix.serve.wire import (
    MAX_TOOL_TEXT,
    approval_payload,
    display_user_text,
    edit_diff,
    event_payload,
    history_items,
)


def test_every_runner_event_has_a_browser_form() -> None:
    usage = Usage(input_tokens=10, output_tokens=2, cache_read_tokens=4)
    cases = [
        (TextDelta("hi"), {"type": "text", "text": "hi"}),
        (ReasoningDelta("hm"), {"type": "reasoning", "text": "hm"}),
        (StepStart(2), {"type": "step", "step": 2}),
        (Notice("cancelled", "x"), {"type": "notice", "kind": "cancelled", "text": "x"}),
        (Done("ok", "complete", 3, usage),
         {"type": "done", "result": "ok", "reason": "complete", "steps": 3}),
        (Error(ProviderError("boom"), "boom"), {"type": "error", "message": "boom"}),
        (ToolEnd("c1", "bash", "out", False, 1.23456, blocked=False),
         {"type": "tool_end", "call_id": "c1", "name": "bash", "content": "out",
          "is_error": False, "blocked": False, "seconds": 1.235}),
    ]  # fmt: skip
    for event, want in cases:
        assert event_payload(event) == want
    report = event_payload(UsageReport(1, usage))
    assert report == {
        "type": "usage",
        "step": 1,
        "input_tokens": 10,
        "output_tokens": 2,
        "cache_read_tokens": 4,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }
    start = event_payload(ToolStart("c2", "read_file", '{"path": "a.py"}', True))
    assert start is not None and start["summary"] == "read_file: a.py" and start["diff"] == []
    assert start["read_only"] is True and start["arguments"] == '{"path": "a.py"}'
    json.dumps([event_payload(e) for e, _ in cases])  # all JSON-ready


def test_web_search_and_sandbox_escape_cards_live_and_stored() -> None:
    hit = WebSearchResult("T", "https://x.example/")
    live = event_payload(WebSearch("ws1", "q", (hit,)))
    hits = [{"title": "T", "url": "https://x.example/"}]
    stored = history_items([{"type": "web_search", "id": "ws1", "query": "q", "results": hits}])
    want = {"type": "web_search", "call_id": "ws1", "query": "q", "results": hits, "error": ""}
    assert live == stored[0] == want
    esc = event_payload(SandboxEscape("c1", "make", "needs the cache", False, "declined"))
    kept = history_items([{"type": "sandbox_escape", "call_id": "c1", "command": "make",
                           "justification": "needs the cache", "granted": False,
                           "detail": "declined"}])  # fmt: skip
    assert esc == kept[0] and esc is not None and esc["granted"] is False


def test_coordination_phases_carry_codes_only() -> None:
    got = event_payload(Phase("plan", plan_id="p1", status="saved", stats={"turns": 2.0}))
    assert got == {"type": "phase", "phase": "plan", "route": "", "reason": "", "plan_id": "p1",
                   "status": "saved", "stats": {"turns": 2.0}}  # fmt: skip


def test_long_tool_output_is_clipped_for_the_card() -> None:
    end = event_payload(ToolEnd("c", "bash", "x" * (MAX_TOOL_TEXT + 10), False, 0.0))
    assert end is not None and end["content"].endswith("… (10 more characters)")


def test_edit_diffs_from_the_call_arguments() -> None:
    args = {"path": "a.py", "old_string": "x = 1\ny = 2", "new_string": "x = 1\ny = 3"}
    assert edit_diff("edit_file", args) == [
        "--- a/a.py", "+++ b/a.py", "@@ -1,2 +1,2 @@", " x = 1", "-y = 2", "+y = 3"]  # fmt: skip
    multi = {"path": "b.py", "edits": [{"old_string": "a", "new_string": "b"},
                                       {"old_string": "c", "new_string": ""}, "junk"]}  # fmt: skip
    assert [ln for ln in edit_diff("multi_edit", multi) if ln[0] in "+-" and ln[:3] not in
            ("---", "+++")] == ["-a", "+b", "-c"]  # fmt: skip
    assert edit_diff("write_file", {"path": "n.txt", "content": "one\ntwo\n"})[-2:] == [
        "+one", "+two"]  # fmt: skip
    assert edit_diff("bash", {"command": "ls"}) == []
    assert edit_diff("edit_file", {}) == []


def test_approval_card_shows_the_rule_it_would_save() -> None:
    request = ApprovalRequest(
        tool_name="bash", summary="bash: make test", args={"command": "make test"},
        choices=(ApprovalChoice.ONCE, ApprovalChoice.DENY), suggested_rule="Bash(make test)",
        reason="needs approval (mode ask)", alternative_rule="Bash(make:*)", fresh=True,
    )  # fmt: skip
    card = approval_payload("a1", request)
    assert card == {
        "type": "approval", "id": "a1", "tool": "bash", "summary": "bash: make test",
        "reason": "needs approval (mode ask)", "rule": "Bash(make test)",
        "alternative_rule": "Bash(make:*)", "fresh": True, "choices": ["once", "deny"],
        "diff": [], "command": "make test", "preview": "",
    }  # fmt: skip


def test_display_user_text_drops_instructions_and_recall() -> None:
    stored = (
        '<instructions>\nInstructions …\n<file name="AGENTS.md">\nbe nice\n</file>\n'
        "</instructions>\n\n<skills>\nPlaybooks …\n- explore [subagent] — x\n</skills>\n\n"
        "fix the bug\n\n<memory-recall>\nSaved notes …\n- a fact\n"
        "</memory-recall>"
    )
    assert display_user_text(stored) == "fix the bug"
    assert display_user_text("plain <instructions> text") == "plain <instructions> text"


def test_history_pairs_tool_calls_with_their_results() -> None:
    arguments = json.dumps({"path": "a", "old_string": "1", "new_string": "2"})
    call = {"id": "c1", "name": "edit_file", "arguments": arguments}
    records = [
        {"type": "meta", "id": "s"},
        {"type": "title", "title": "t"},
        {"type": "message", "message": {"role": "user", "content": "go"}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": "",
                "reasoning": "hm",
                "tool_calls": [call],
            },
        },
        {
            "type": "message",
            "message": {"role": "tool", "content": "Edited a", "tool_call_id": "c1"},
        },
        {"type": "checkpoint", "summary": "…"},
        {"type": "message", "message": {"role": "assistant", "content": "done"}},
        {"type": "unknown-future-record"},
    ]
    items = history_items(records)
    assert [i["type"] for i in items] == ["user", "reasoning", "tool", "notice", "assistant"]
    tool = items[2]
    assert tool["result"] == "Edited a" and tool["diff"][-2:] == ["-1", "+2"]
    assert tool["summary"] == "edit_file: a"
