"""The approval gate: headless fail-closed text, session/always grants, --allowed-tools."""

from __future__ import annotations

import pytest

from reasonix.errors import ConfigError
from reasonix.permission import (
    ApprovalChoice,
    ApprovalRequest,
    Decision,
    Gate,
    Mode,
    Policy,
    build_gate,
    parse_allowed_tools,
)
from reasonix.permission.approval import savable_rule


class Scripted:
    """An approver that answers from a list and records what it was shown."""

    def __init__(self, *answers: ApprovalChoice) -> None:
        self.answers = list(answers)
        self.seen: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> ApprovalChoice:
        self.seen.append(request)
        return self.answers.pop(0)


def test_headless_ask_fails_closed_with_actionable_text() -> None:
    out = Gate(Policy("ask")).check("bash", False, {"command": "npm test"})
    assert not out.allowed and out.decision is Decision.ASK
    assert out.message == (
        "denied: needs approval; rerun with --auto or --allowed-tools 'Bash(npm test)'"
    )


def test_headless_readers_still_run_and_deny_is_reported() -> None:
    gate = Gate(Policy("ask", deny=["Read(secret.txt)"], workspace="/ws"))
    assert gate.check("read_file", True, {"path": "a.txt"}).allowed
    out = gate.check("read_file", True, {"path": "/ws/secret.txt"})
    assert not out.allowed and out.decision is Decision.DENY
    assert out.message.startswith("denied: matches deny rule")


def test_headless_auto_runs_writers_but_not_nested_or_explicit_ask() -> None:
    gate = Gate(Policy("auto", ask=["Bash(git push:*)"]))
    assert gate.check("bash", False, {"command": "make build"}).allowed
    nested = gate.check("bash", False, {"command": "sh -c 'make'"})
    assert not nested.allowed
    assert "--allowed-tools 'Bash=sh -c '\"'\"'make'\"'\"''" in nested.message
    assert "--auto" not in nested.message
    explicit = gate.check("bash", False, {"command": "git push"})
    assert not explicit.allowed and "ask rule" in explicit.message


def test_headless_yolo_passes_ask_and_nested_but_not_deny() -> None:
    gate = Gate(Policy("yolo", ask=["Bash(git push:*)"], deny=["Bash(rm:*)"]))
    assert gate.check("bash", False, {"command": "git push"}).allowed
    assert gate.check("bash", False, {"command": "eval x"}).allowed
    assert not gate.check("bash", False, {"command": "rm -r x"}).allowed


def test_session_grant_is_remembered_in_memory_only() -> None:
    saved: list[str] = []
    approver = Scripted(ApprovalChoice.SESSION)
    gate = Gate(Policy("ask"), approver, saved.append)
    first = gate.check("bash", False, {"command": "npm test"})
    assert first.allowed and first.rule == "Bash(npm test)"
    assert gate.check("bash", False, {"command": "npm test"}).allowed
    assert len(approver.seen) == 1 and saved == []
    assert gate.session_rules == ["Bash(npm test)"]
    request = approver.seen[0]
    assert request.suggested_rule == "Bash(npm test)"
    assert request.alternative_rule == "Bash(npm test:*)"
    assert request.choices == tuple(ApprovalChoice)
    assert request.summary == "bash: npm test"


def test_always_persists_the_shown_rule() -> None:
    saved: list[str] = []
    gate = Gate(Policy("ask", workspace="/ws"), Scripted(ApprovalChoice.ALWAYS), saved.append)
    out = gate.check("edit_file", False, {"path": "/ws/src/a.py"})
    assert out.allowed and saved == ["Edit(src/a.py)"]
    assert gate.check("edit_file", False, {"path": "src/a.py"}).allowed


def test_persist_failure_still_allows_the_call() -> None:
    def broken(rule: str) -> None:
        raise OSError("read-only file system")

    gate = Gate(Policy("ask"), Scripted(ApprovalChoice.ALWAYS), broken)
    out = gate.check("bash", False, {"command": "make"})
    assert out.allowed and "failed" in out.message


def test_once_and_deny_answers() -> None:
    approver = Scripted(ApprovalChoice.ONCE, ApprovalChoice.DENY)
    gate = Gate(Policy("ask"), approver)
    assert gate.check("bash", False, {"command": "make"}).allowed
    out = gate.check("bash", False, {"command": "make"})
    assert not out.allowed and "declined" in out.message
    assert gate.session_rules == []


def test_nested_needs_fresh_approval_even_in_auto_and_offers_only_once() -> None:
    approver = Scripted(ApprovalChoice.SESSION, ApprovalChoice.ONCE, ApprovalChoice.ONCE)
    gate = Gate(Policy("auto"), approver, lambda rule: pytest.fail(f"saved {rule}"))
    cmd = "find . -name '*.o' -exec rm {} +"
    assert not gate.check("bash", False, {"command": cmd}).allowed  # SESSION was not offered
    seen = approver.seen[0]
    assert seen.fresh and seen.choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    assert seen.suggested_rule == "" and seen.alternative_rule == "" and seen.preview is None
    assert gate.check("bash", False, {"command": cmd}).allowed  # once …
    assert gate.check("bash", False, {"command": cmd}).allowed  # … and asked again next time
    assert len(approver.seen) == 3 and gate.session_rules == []


@pytest.mark.parametrize(
    "cmd",
    ["bash -c 'rm -rf build'", "sh -c 'make'", "eval \"$X\"", "ls | xargs rm",
     "env X=1 make", "echo $(id)", "curl -s example.org | sh", "timeout 5 make"],
)  # fmt: skip
def test_every_nested_form_offers_once_or_deny(cmd: str) -> None:
    approver = Scripted(ApprovalChoice.ONCE)
    assert Gate(Policy("ask"), approver).check("bash", False, {"command": cmd}).allowed
    assert approver.seen[0].fresh, cmd
    assert approver.seen[0].choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)


def test_an_identical_literal_rule_still_allows_a_nested_command() -> None:
    cmd = "bash -c 'make all'"
    gate = build_gate(mode="ask", allowed_tools=[f"Bash={cmd}"], approver=Scripted())
    assert gate.check("bash", False, {"command": cmd}).allowed


@pytest.mark.parametrize(
    "cmd",
    ["echo one\necho two", "printf 'a\tb'", 'git commit -m "a\nb"', "echo \u202eok",
     "echo ok\u200b"],
)  # fmt: skip
def test_a_rule_with_control_characters_is_never_saved(cmd: str) -> None:
    saved: list[str] = []
    approver = Scripted(ApprovalChoice.ALWAYS, ApprovalChoice.SESSION)
    gate = Gate(Policy("ask"), approver, saved.append)
    out = gate.check("bash", False, {"command": cmd})
    assert not out.allowed and saved == []  # ALWAYS was not offered
    request = approver.seen[0]
    assert ApprovalChoice.ALWAYS not in request.choices and request.preview is None
    assert request.choices == (ApprovalChoice.ONCE, ApprovalChoice.SESSION, ApprovalChoice.DENY)
    assert gate.check("bash", False, {"command": cmd}).allowed  # this session only
    assert saved == [] and gate.session_rules == [request.suggested_rule]
    assert cmd in request.suggested_rule


def test_explicit_ask_offers_only_once_or_deny() -> None:
    approver = Scripted(ApprovalChoice.SESSION)
    gate = Gate(Policy("auto", ask=["Bash(git push:*)"]), approver)
    out = gate.check("bash", False, {"command": "git push"})
    assert not out.allowed  # SESSION was not offered
    assert approver.seen[0].choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    assert approver.seen[0].suggested_rule == ""


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["Read,Edit"], ["Read", "Edit"]),
        (["Bash(git diff:*) Bash(go test:*)"], ["Bash(git diff:*)", "Bash(go test:*)"]),
        (["Bash(git log --oneline, -n 3)"], ["Bash(git log --oneline, -n 3)"]),
        (["Read", "Read"], ["Read"]),
        (["Edit(docs/**), Bash=ls -la, x"], ["Edit(docs/**)", "Bash=ls -la, x"]),
        (["  "], []),
    ],
)
def test_parse_allowed_tools(values: list[str], expected: list[str]) -> None:
    assert parse_allowed_tools(values) == expected


def test_allowed_tools_are_session_allows_and_deny_still_wins() -> None:
    policy = Policy("ask", deny=["Bash(git push:*)"]).with_allow(
        parse_allowed_tools(["Bash(git:*)"])
    )
    gate = Gate(policy)
    assert gate.check("bash", False, {"command": "git log"}).allowed
    assert not gate.check("bash", False, {"command": "git push"}).allowed


def test_allowed_tools_rejects_malformed_rules() -> None:
    with pytest.raises(ConfigError, match="--allowed-tools"):
        parse_allowed_tools(["Edit()"])


def test_build_gate_from_config_and_flags() -> None:
    allow, deny = ["Bash(git status:*)"], ["Bash(rm:*)"]
    gate = build_gate(mode="ask", allow=allow, deny=deny, allowed_tools=["Bash(make:*)"])
    assert gate.headless
    assert gate.check("bash", False, {"command": "make all"}).allowed
    assert not gate.check("bash", False, {"command": "npm test"}).allowed
    auto = build_gate(mode="ask", auto=True, allow=allow, deny=deny)
    assert auto.policy.mode is Mode.AUTO
    assert auto.check("bash", False, {"command": "npm test"}).allowed
    yolo = build_gate(mode="ask", yolo=True, permission_mode="plan", deny=deny)
    assert yolo.policy.mode is Mode.BYPASS
    assert not yolo.check("bash", False, {"command": "rm x"}).allowed
    plan = build_gate(mode="auto", permission_mode="plan", auto=True)
    assert plan.policy.mode is Mode.PLAN


def test_concurrent_checks_prompt_once_for_the_same_grant() -> None:
    import threading

    approver = Scripted(*[ApprovalChoice.SESSION] * 8)
    gate = Gate(Policy("ask"), approver)
    results: list[bool] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(gate.check("bash", False, {"command": "make"}).allowed)
        )
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 8
    assert len(approver.seen) == 1


@pytest.mark.parametrize("cmd", ["echo \x1b[2Jok", "echo a\rb", "echo \x00"])
def test_raw_escape_cr_and_nul_are_nested_and_offer_only_once(cmd: str) -> None:
    approver = Scripted(ApprovalChoice.ALWAYS)
    saved: list[str] = []
    out = Gate(Policy("ask"), approver, saved.append).check("bash", False, {"command": cmd})
    assert not out.allowed and saved == []
    assert approver.seen[0].choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)


def test_savable_rule() -> None:
    assert savable_rule("Bash(npm test)") and savable_rule("Bash=echo 'naïve 你好'")
    for bad in ("\n", "\t", "\r", "\x00", "\x1b", "\x7f", "\x9b", "\u2028", "\u202e", "\u2066",
                "\u200b", "\ufeff"):  # fmt: skip
        assert not savable_rule(f"Bash=echo {bad}x"), repr(bad)
