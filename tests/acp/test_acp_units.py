"""Small pure pieces: answers → choices, replay text, the command adapter, tool-call fields."""

from __future__ import annotations

from pathlib import Path

from reasonix.acp.commands import advertised, editor_owned, render
from reasonix.acp.permissions import options_for, read_answer
from reasonix.acp.relay import plan_update
from reasonix.acp.replay import replay_updates, user_text
from reasonix.acp.toolcalls import CallBoard, describe
from reasonix.command.api import CommandResult, PickerItem
from reasonix.permission import ApprovalChoice, ApprovalRequest
from reasonix.provider.types import Message, Role, ToolCall
from reasonix.tool.ports import FileChange


def _request(choices: tuple[ApprovalChoice, ...], rule: str) -> ApprovalRequest:
    return ApprovalRequest("bash", "bash: make", {"command": "make"}, choices, rule, "why")


def test_answers_map_onto_the_permission_layer() -> None:
    full = _request(tuple(ApprovalChoice), "Bash(make:*)")
    assert [o["kind"] for o in options_for(full)] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert "Bash(make:*)" in options_for(full)[1]["name"]

    def pick(option: str) -> tuple[ApprovalChoice, str]:
        a = read_answer({"outcome": {"outcome": "selected", "optionId": option}}, full)
        return a.choice, a.deny_rule

    assert pick("allow-once") == (ApprovalChoice.ONCE, "")
    assert pick("allow-always") == (ApprovalChoice.ALWAYS, "")
    assert pick("reject-once") == (ApprovalChoice.DENY, "")
    assert pick("reject-always") == (ApprovalChoice.DENY, "Bash(make:*)")
    assert pick("made-up") == (ApprovalChoice.DENY, "")
    assert read_answer({"outcome": {"outcome": "cancelled"}}, full).choice is ApprovalChoice.DENY
    assert read_answer(None, full).choice is ApprovalChoice.DENY
    explicit = _request((ApprovalChoice.ONCE, ApprovalChoice.DENY), "")
    assert [o["optionId"] for o in options_for(explicit)] == ["allow-once", "reject-once"]
    once_only = read_answer(
        {"outcome": {"outcome": "selected", "optionId": "allow-always"}}, explicit
    )
    assert once_only.choice is ApprovalChoice.DENY  # not offered, so not honoured


def test_replay_shows_what_the_user_typed() -> None:
    block = "<instructions>\nrules\n</instructions>\n\nfix it"
    recall = "fix it\n\n<memory-recall>\nSaved notes…\n- a note\n</memory-recall>"
    assert user_text(block) == "fix it" and user_text(recall) == "fix it"
    assert user_text("plain </instructions>\n\n text") == "plain </instructions>\n\n text"
    skills = (
        "<instructions>\nx\n</instructions>\n\n<skills>\n- explore: read-only\n</skills>\n\nfix it"
    )
    assert user_text(skills) == "fix it"  # the skill index is the host's, not the user's
    msgs = [
        Message(Role.USER, "q"),
        Message(Role.ASSISTANT, "", tool_calls=[ToolCall("call_0", "ls", "{}")]),
        Message(Role.TOOL, "a\nb", tool_call_id="call_0", name="ls"),
        Message(Role.ASSISTANT, "", tool_calls=[ToolCall("call_0", "bash", '{"command": "x"}')]),
        Message(Role.TOOL, "blocked: no", tool_call_id="call_0", name="bash"),
        Message(Role.ASSISTANT, "done", reasoning="hmm"),
    ]
    updates = list(replay_updates(msgs, Path("/w")))
    ids = [u["toolCallId"] for u in updates if "toolCallId" in u]
    assert ids == ["call_0", "call_0", "call_0-2", "call_0-2"]  # unique although reused
    assert [u.get("status") for u in updates if u["sessionUpdate"] == "tool_call_update"] == [
        "completed",
        "failed",
    ]
    assert [u["sessionUpdate"] for u in updates][-2:] == [
        "agent_thought_chunk",
        "agent_message_chunk",
    ]


class _Registry:
    """The command registry's surface as TEAM.md fixes it (names only here)."""

    notices: list[str] = []

    def is_command(self, line: str) -> bool:
        return line.startswith("/") and not line.startswith("//")

    def run(self, line: str) -> CommandResult:
        return CommandResult(text=line)

    def names(self) -> list[tuple[str, str]]:
        return [
            ("/help", "list commands"),
            ("/exit", "leave"),
            ("/new", "new session"),
            ("/git:commit", "custom"),
            ("/mcp__srv__p", "an MCP prompt"),
        ]


def test_command_adapter_leaves_session_control_to_the_editor() -> None:
    names = [c["name"] for c in advertised(_Registry())]
    assert names == ["help", "git:commit", "mcp__srv__p"]
    assert advertised(None) == []
    assert editor_owned("/new now") and editor_owned("/resume") and not editor_owned("/help")
    shown = render(
        CommandResult(
            picker=[PickerItem("m1", "fake/m1")], picker_command="/model", picker_title="models"
        )
    )
    assert shown == "models:\n- m1: `/model fake/m1`"


def test_tool_call_fields_and_the_board() -> None:
    d = describe("read_file", '{"path": "src/a.py", "offset": 9}', Path("/w"))
    assert d == {
        "title": "Read src/a.py",
        "kind": "read",
        "locations": [{"path": "/w/src/a.py", "line": 10}],
        "rawInput": {"path": "src/a.py", "offset": 9},
    }
    assert describe("bash", '{"command": "make  test"}', Path("/w"))["title"] == "Run `make test`"
    assert describe("mcp__x__y", "not json", Path("/w"))["kind"] == "other"
    sent: list[dict[str, object]] = []
    board = CallBoard(sent.append)
    board.attach_terminal("c", "t1")  # before the announcement: folded into it
    board.announce("c", {"title": "x"})
    assert sent[-1]["content"] == [{"type": "terminal", "terminalId": "t1"}]
    board.record_change("c", FileChange(Path("/w/a"), None, "x"))
    assert board.take_changes("c")[0].new_text == "x" and board.take_changes("c") == []
    board.begin_step()
    assert board.acp_id("c") == "c-2" and not board.known("c")  # a reused id gets a new one
    assert plan_update("nope") is None
