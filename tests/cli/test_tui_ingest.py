"""Runner events and stored messages become view state, sanitised on the way in."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix.agent.events import (
    ApprovalRequested,
    Done,
    Error,
    Notice,
    ReasoningDelta,
    SandboxEscape,
    StepStart,
    TextDelta,
    ToolEnd,
    ToolStart,
    UsageReport,
    WebSearch,
)
from reasonix.cli.tui.ingest import apply_event, approval_overlay, blocks_from_messages, diff_for
from reasonix.cli.tui.state import (
    AnswerBlock,
    ApprovalOverlay,
    AppState,
    NoticeBlock,
    ReasoningBlock,
    ToolBlock,
    UserBlock,
)
from reasonix.cli.tui.view import render
from reasonix.cli.tui.width import plain
from reasonix.errors import ProviderError
from reasonix.permission import ApprovalChoice, ApprovalRequest
from reasonix.provider.types import Message, Role, ToolCall, Usage, WebSearchResult


def _request(
    tool: str, args: dict[str, object], choices: tuple[ApprovalChoice, ...] = tuple(ApprovalChoice)
) -> ApprovalRequest:
    return ApprovalRequest(
        tool_name=tool, summary=f"{tool}: {args.get('path', args.get('command', ''))}", args=args,
        choices=choices, suggested_rule="Edit(a.txt)", reason="needs approval (mode ask)",
    )  # fmt: skip


def test_a_streamed_turn_builds_reasoning_answer_and_cards() -> None:
    s = AppState()
    for event in [
        StepStart(1),
        ReasoningDelta("think "),
        ReasoningDelta("more"),
        TextDelta("Hello "),
        TextDelta("**world**"),
        ToolStart("c1", "read_file", json.dumps({"path": "a.txt"}), True),
        ToolEnd("c1", "read_file", "1\thello", False, 0.01),
        StepStart(2),
        TextDelta("Done."),
        UsageReport(2, Usage(input_tokens=1234)),
        Done("Done.", "complete", 1, Usage()),
    ]:
        apply_event(s, event)
    kinds = [type(b) for b in s.transcript.blocks]
    assert kinds == [ReasoningBlock, AnswerBlock, ToolBlock, AnswerBlock]
    reasoning, answer, card, final = s.transcript.blocks
    assert isinstance(reasoning, ReasoningBlock) and reasoning.text == "think more"
    assert isinstance(answer, AnswerBlock) and answer.text == "Hello **world**" and not answer.open
    assert (
        isinstance(card, ToolBlock) and card.status == "ok" and card.arguments == {"path": "a.txt"}
    )
    assert isinstance(final, AnswerBlock) and final.text == "Done."
    assert s.status.context_used == 1234


def test_untrusted_text_is_sanitised_before_it_is_stored() -> None:
    s = AppState()
    evil = "ok\x1b[2J\x1b]52;c;Zm9v\x07\u202eevil\r"
    apply_event(s, TextDelta(evil))
    apply_event(s, ToolStart("c1", "bash\x1b[31m", json.dumps({"command": "echo \x1b[1m"}), False))
    apply_event(s, ToolEnd("c1", "bash\x1b[31m", "out\x1b[0m", False, 0.1))
    apply_event(s, Notice("retry", "note\x9b1m"))
    apply_event(s, Error(ProviderError("bad\x1bc"), "bad\x1bc"))
    rows, _ = render(s, 80, 20)
    screen = "\n".join(plain(r) for r in rows)
    for raw in ("\x1b", "\x07", "\u202e", "\x9b", "\r"):
        assert raw not in screen
    assert "\\x1b[2J" in screen and "\\u202e" in screen and "bash\\x1b[31m" in screen


def test_approval_opens_a_modal_overlay_and_a_waiting_card_that_the_call_then_fills(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    args = {"path": "a.txt", "old_string": "hello", "new_string": "bye"}
    event = ApprovalRequested(_request("edit_file", args))
    s = AppState()
    diff = diff_for("edit_file", args, tmp_path)
    apply_event(s, event, {"diff": diff})
    overlay = s.overlay
    assert isinstance(overlay, ApprovalOverlay)
    assert overlay.diff == ["--- a/a.txt", "+++ b/a.txt", "@@ -1 +1 @@", "-hello", "+bye"]
    assert [k for k, _, _ in overlay.choices] == ["1", "2", "3", "4"]
    labels = [label for _, label, _ in overlay.choices]
    assert "always allow (Edit(a.txt), saved to ./reasonix.toml)" in labels
    card = s.transcript.blocks[-1]
    assert isinstance(card, ToolBlock) and card.status == "waiting" and card.diff == diff
    s.overlays.pop()
    apply_event(s, ToolStart("c9", "edit_file", json.dumps(args), False))
    apply_event(s, ToolEnd("c9", "edit_file", "Edited a.txt", False, 0.002))
    assert s.transcript.blocks[-1] is card and card.status == "ok" and card.call_id == "c9"


def test_a_denied_call_marks_its_card_blocked() -> None:
    s = AppState()
    apply_event(s, ApprovalRequested(_request("bash", {"command": "rm -rf x"})), {"diff": None})
    overlay = s.overlay
    assert isinstance(overlay, ApprovalOverlay) and "$ rm -rf x" in overlay.detail
    s.overlays.pop()
    apply_event(
        s, ToolEnd("c1", "bash", "blocked: bash was not run (denied)", True, 0.0, blocked=True)
    )
    card = s.transcript.blocks[-1]
    assert (
        isinstance(card, ToolBlock) and card.status == "blocked" and len(s.transcript.blocks) == 1
    )


def test_a_fresh_request_offers_once_and_deny_only() -> None:
    once_or_deny = (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    request = ApprovalRequest(
        "bash", "bash: eval x", {"command": "eval x"}, once_or_deny, "", "nested", fresh=True
    )
    overlay = approval_overlay(ApprovalRequested(request), None)
    assert [k for k, _, _ in overlay.choices] == ["1", "4"]
    assert any("only a person" in d for d in overlay.detail)


def test_a_resumed_session_shows_what_the_user_typed() -> None:
    messages = [
        Message(Role.USER, '<instructions>\nI\n<file name="AGENTS.md">\nbe nice\n</file>\n'
                "</instructions>\n\n<skills>\nPlaybooks …\n- explore [subagent] — x\n</skills>"
                "\n\nfix the bug\n\n<memory-recall>\nnotes\n</memory-recall>"),
        Message(Role.ASSISTANT, "", tool_calls=[ToolCall("c1", "edit_file", json.dumps(
            {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}))], reasoning="hmm"),
        Message(Role.TOOL, "Edited a.py", tool_call_id="c1", name="edit_file"),
        Message(Role.ASSISTANT, "Fixed \x1b[31m."),
    ]  # fmt: skip
    blocks = blocks_from_messages(messages)
    assert [type(b) for b in blocks] == [UserBlock, ReasoningBlock, ToolBlock, AnswerBlock]
    user, _, card, answer = blocks
    assert isinstance(user, UserBlock) and user.text == "fix the bug"
    assert isinstance(card, ToolBlock) and card.diff is not None and "+x = 2" in card.diff
    assert card.output == "Edited a.py" and card.status == "done"
    assert isinstance(answer, AnswerBlock) and answer.text == "Fixed \\x1b[31m."


def test_notices_become_notice_blocks() -> None:
    s = AppState()
    apply_event(s, Notice("cancelled", "the turn was cancelled"))
    block = s.transcript.blocks[-1]
    assert isinstance(block, NoticeBlock) and block.kind == "warn"


def test_call_ids_reused_across_turns_do_not_mix_up_cards() -> None:
    s = AppState()
    apply_event(s, ToolStart("call_0", "read_file", '{"path": "a"}', True))
    apply_event(s, ToolEnd("call_0", "read_file", "contents", False, 0.1))
    apply_event(s, ToolStart("call_0", "bash", '{"command": "ls"}', False))
    apply_event(s, ToolEnd("call_0", "bash", "listing", False, 0.2))
    first, second = s.transcript.blocks
    assert isinstance(first, ToolBlock) and first.output == "contents"
    assert isinstance(second, ToolBlock) and second.name == "bash" and second.output == "listing"


def test_a_provider_web_search_gets_a_card_with_its_links() -> None:
    hits = (WebSearchResult("curses — docs", "https://docs.python.org/x"),
            WebSearchResult("", "https://e.org"))  # fmt: skip
    s = AppState()
    apply_event(s, WebSearch("ws_1", "python\x1b[2J curses", hits))
    apply_event(s, WebSearch("ws_2", "nothing", (), error="max_uses_exceeded"))
    card, failed = s.transcript.blocks
    assert isinstance(card, ToolBlock) and card.name == "web_search" and card.status == "ok"
    assert card.arguments == {"query": "python\\x1b[2J curses"}
    assert card.output == "curses — docs — https://docs.python.org/x\nhttps://e.org"
    assert isinstance(failed, ToolBlock) and failed.status == "error"
    assert "max_uses_exceeded" in failed.output


def test_a_sandbox_escape_decision_is_a_notice() -> None:
    s = AppState()
    apply_event(s, SandboxEscape("c1", "make install", "needs /usr", False, "declined"))
    note = s.transcript.blocks[-1]
    assert isinstance(note, NoticeBlock) and "refused: make install (declined)" in note.text


def test_a_plan_awaiting_approval_is_shown_in_full_before_the_keys() -> None:
    plan = "\n".join(["# Plan", "1. read calc.py", "2. fix add()", "\x1b[2Jevil"])
    request = ApprovalRequest(
        tool_name="plan", summary="execute this plan", args={}, choices=(ApprovalChoice.ONCE,
        ApprovalChoice.DENY), suggested_rule="", reason="", detail=plan,
    )  # fmt: skip
    s = AppState()
    apply_event(s, ApprovalRequested(request), {"diff": None})
    overlay = s.overlay
    assert isinstance(overlay, ApprovalOverlay)
    assert "1. read calc.py" in overlay.detail and "2. fix add()" in overlay.detail
    assert all("\x1b" not in line for line in overlay.detail)  # sanitised like any model text
