"""QA regressions for the bash classifier and path rules (found by black-box attack)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.permission import Decision, Kind, Policy, analyze


@pytest.mark.parametrize(
    "command",
    [
        "'g''it' status",
        '"git" status',
        "\\git status",
        "$'\\x67it' status",
        "$'\\147it' status",
        "'ls' -la",
    ],
)
def test_quoted_command_names_are_not_reused_by_prefix_rules(command: str) -> None:
    policy = Policy("ask", allow=["Bash(git status:*)", "Bash(ls:*)"])
    assert analyze(command).kind is Kind.DYNAMIC
    assert policy.decide("bash", False, {"command": command}) is Decision.ASK
    # ...but the ordinary fallback still applies (PERM-11) and deny still sees the name.
    assert Policy("auto").decide("bash", False, {"command": command}) is Decision.ALLOW
    assert (
        Policy("yolo", deny=["Bash(git:*)", "Bash(ls:*)"]).decide(
            "bash", False, {"command": command}
        )
        is Decision.DENY
    )


@pytest.mark.parametrize(
    "command",
    [
        "bash -c -- 'rm -rf /'",
        "sh -c -e 'rm -rf /'",
        "env -S 'rm -rf /'",
        "env -S'rm -rf /'",
        "env --split-string='rm -rf /'",
        "env -S rm -rf /",
        "su -c 'rm -rf /'",
        "script -c 'rm -rf /' log",
        "git -c alias.x='!rm -rf /' x",
        "rm${IFS}-rf${IFS}/",
        "rm$IFS-rf$IFS/",
        "true;rm${IFS}-rf /",
    ],
)
def test_deny_is_not_bypassed_by_yolo_through_command_strings(command: str) -> None:
    policy = Policy("yolo", deny=["Bash(rm:*)"])
    assert policy.decide("bash", False, {"command": command}) is Decision.DENY


@pytest.mark.parametrize(
    "command",
    [
        "git -C . push",
        "git --no-pager push origin main",
        "git -c user.name=x push",
        "git --git-dir .git --work-tree . push",
        "git --git-dir=.git -p push",
        "/usr/bin/git -P push --force",
    ],
)
def test_git_global_options_do_not_hide_a_denied_subcommand(command: str) -> None:
    for mode in ("auto", "yolo"):
        policy = Policy(mode, deny=["Bash(git push:*)"])
        assert policy.decide("bash", False, {"command": command}) is Decision.DENY, mode
    assert (
        Policy("auto", ask=["Bash(git push:*)"]).decide("bash", False, {"command": command})
        is Decision.ASK
    )


def test_git_global_options_do_not_widen_deny_to_other_subcommands() -> None:
    policy = Policy("auto", deny=["Bash(git push:*)"])
    assert policy.decide("bash", False, {"command": "git -C . status"}) is Decision.ALLOW
    assert policy.decide("bash", False, {"command": "echo $IFS"}) is Decision.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "find . -exec " * 400 + "rm x",
        "timeout 1 " * 2000 + "rm x",
        "env " * 5000 + "rm x",
        "nice " * 3000 + "ls",
        "xargs " * 3000,
    ],
)
def test_deeply_chained_wrappers_never_raise(command: str) -> None:
    analysis = analyze(command)  # must not raise RecursionError
    assert analysis.kind is Kind.NESTED
    assert (
        Policy("ask", allow=["Bash(find:*)", "Bash(timeout:*)"]).decide(
            "bash", False, {"command": command}
        )
        is not Decision.ALLOW
    )


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("code_index", {"path": "~/.ssh"}),
        ("code_index", {"path": "/home/u/.ssh/keys"}),
        ("read_file", {"path": "/proc/self/root/home/u/.ssh/id_rsa"}),
        ("read_file", {"path": "/proc/thread-self/root/home/u/.ssh/id_rsa"}),
        ("ls", {"path": "/proc/1/root/proc/self/root/home/u/.ssh"}),
        ("grep", {"pattern": "x", "path": "/proc/self/root//home/u/.ssh"}),
    ],
)
def test_read_deny_covers_code_index_and_proc_root_aliases(tool: str, args: dict[str, str]) -> None:
    policy = Policy("yolo", deny=["Read(~/.ssh/**)"], home="/home/u", workspace="/w")
    assert policy.decide(tool, True, args) is Decision.DENY


def test_proc_root_alias_in_edit_rules() -> None:
    policy = Policy("ask", deny=["Edit(/etc/**)"], workspace="/w")
    args = {"path": "/proc/self/root/etc/passwd"}
    assert policy.decide("write_file", False, args) is Decision.DENY
    # a /proc path that is not a root alias stays itself
    assert (
        Policy("ask", allow=["Edit(/etc/**)"]).decide(
            "write_file", False, {"path": "/proc/self/rootx/etc/passwd"}
        )
        is Decision.ASK
    )


@pytest.mark.parametrize(
    "command",
    [
        "bash <<< 'rm -rf /'",
        "bash <<EOF\nrm -rf /\nEOF",
        "sh <<'EOF'\nrm -rf /\nEOF",
        "echo 'rm -rf /' | sh",
        "echo 'rm -rf /' | bash -s",
        "source <(echo 'rm -rf /')",
        "coproc rm -rf /",
        "function f { rm -rf /; }; f",
        "f() { rm -rf /; }; f",
        "echo $(case x in x) rm -rf / ;; esac)",
    ],
)
def test_deny_sees_into_commands_the_parser_cannot_follow(command: str) -> None:
    """Stdin-fed shells and unsupported syntax are nested; yolo must still honour deny."""
    assert analyze(command).kind is Kind.NESTED
    assert (
        Policy("yolo", deny=["Bash(rm:*)"]).decide("bash", False, {"command": command})
        is Decision.DENY
    )
    assert (
        Policy("yolo", deny=["Bash(curl:*)"]).decide("bash", False, {"command": command})
        is Decision.ALLOW
    )


@pytest.mark.parametrize("path", ["a\x00b", "docs/\x00", "\x00"])
def test_evaluate_never_raises_on_a_nul_in_a_path(path: str) -> None:
    """QA: the protected-target check called realpath() on model input with a NUL."""
    policy = Policy("ask", allow=["Edit(docs/**)"], workspace="/w")
    for tool in ("write_file", "edit_file", "read_file"):
        verdict = policy.evaluate(tool, tool == "read_file", {"path": path})
        assert verdict.decision in (Decision.ALLOW, Decision.ASK)
    both = {"source_path": "docs/a", "destination_path": path}
    assert policy.decide("move_file", False, both) in (Decision.ALLOW, Decision.ASK)


def test_path_rules_see_through_symlinks(tmp_path: Path) -> None:
    """QA: `Edit(docs/**)` allowed writes through docs/link -> ../src; a deny was dodged."""
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "secret").mkdir()
    (ws / "docs" / "link").symlink_to("../src")
    (ws / "docs" / "peek").symlink_to("../secret")
    (ws / "docs" / "self").symlink_to(".")
    allow = Policy("ask", allow=["Edit(docs/**)"], workspace=ws)
    assert allow.decide("write_file", False, {"path": "docs/a.md"}) is Decision.ALLOW
    assert allow.decide("write_file", False, {"path": str(ws / "docs/new/b.md")}) is Decision.ALLOW
    assert allow.decide("write_file", False, {"path": "docs/self/c.md"}) is Decision.ALLOW
    assert allow.decide("write_file", False, {"path": "docs/link/x.py"}) is Decision.ASK
    move = {"source_path": "docs/a.md", "destination_path": "docs/link/a.md"}
    assert allow.decide("move_file", False, move) is Decision.ASK
    deny = Policy("yolo", deny=["Read(secret/**)", "Edit(secret/**)"], workspace=ws)
    assert deny.decide("read_file", True, {"path": "docs/peek/key"}) is Decision.DENY
    assert deny.decide("write_file", False, {"path": "docs/peek/key"}) is Decision.DENY
    assert deny.decide("read_file", True, {"path": "docs/a.md"}) is Decision.ALLOW


def test_path_rules_with_a_symlinked_workspace(tmp_path: Path) -> None:
    """The workspace itself reached through a symlink still matches relative rules."""
    real = tmp_path / "real"
    (real / "docs").mkdir(parents=True)
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    policy = Policy("ask", allow=["Edit(docs/**)"], workspace=alias)
    assert policy.decide("write_file", False, {"path": "docs/a.md"}) is Decision.ALLOW
    assert policy.decide("write_file", False, {"path": "docs/../src/a.md"}) is Decision.ASK


_QA_PIECES = [
    *"ab $`'\"\\;&|()<>{}*?#~=\n\t-!0",
    "$(",
    "<<",
    "<<<",
    "${",
    "${IFS}",
    "$'\\x",
    "env -S ",
    "bash -c -- ",
    "git -C . ",
    "git -c alias.x=!",
    "su -c ",
    "timeout 1 ",
    "find . -exec ",
    "rm ",
    "case ",
    "function ",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_QA_PIECES), max_size=30).map("".join))
def test_policy_never_raises_and_deny_wins_in_yolo(command: str) -> None:
    """The new deny paths (crude runs, git options, $IFS, env -S …) never raise."""
    policy = Policy("yolo", deny=["Bash(rm:*)", "Bash(git push:*)"])
    verdict = policy.evaluate("bash", False, {"command": command})
    assert verdict.decision in (Decision.ALLOW, Decision.DENY)
    analysis = analyze(command)
    if any(seg.name == "rm" for seg in analysis.segments):
        assert verdict.decision is Decision.DENY
