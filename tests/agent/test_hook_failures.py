"""A hook that fails is never silent: the warning names the hook (issue 32, Deliver 4).

Real parts: real hook commands run by /bin/sh through the real HookRunner,
real settings files read by the real config loader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.agent.hooks import HookRunner
from reasonix.config import load
from reasonix.config.hooks import HookSpec


def _spec(event: str, command: str, *, matcher: str = "", timeout: float = 10.0) -> HookSpec:
    return HookSpec(event, matcher, command, timeout, "/cfg/settings.json")


def _runner(specs: list[HookSpec], workspace: Path) -> HookRunner:
    return HookRunner(specs, workspace=str(workspace), base=dict, wrap=None)


@pytest.mark.parametrize(
    ("command", "timeout", "needle"),
    [
        ("sleep 5", 0.3, "timed out after 0.3 s"),
        ("echo 'lint config missing' >&2; exit 3", 10.0, "exit 3: lint config missing"),
        ("kill -KILL $$", 10.0, "killed by signal SIGKILL"),
        ("no-such-hook-program-xyz", 10.0, "exit 127"),
    ],
)
def test_a_failing_hook_names_event_matcher_command_and_source(
    tmp_path: Path, command: str, timeout: float, needle: str
) -> None:
    runner = _runner([_spec("PreToolUse", command, matcher="Bash", timeout=timeout)], tmp_path)
    got = runner.run("PreToolUse", {"tool_input": {}}, "bash")
    assert not got.blocked  # a non-blocking error: the action goes ahead
    assert len(got.notices) == 1 and got.notices == runner.problems
    note = got.notices[0]
    assert needle in note
    assert "PreToolUse hook" in note and "matcher 'Bash'" in note
    assert repr(command) in note and "/cfg/settings.json" in note


def test_a_hook_that_cannot_start_is_reported(tmp_path: Path) -> None:
    runner = _runner([_spec("Stop", "true")], tmp_path / "gone")  # no such working directory
    got = runner.run("Stop", {})
    assert len(got.notices) == 1 and "could not start" in got.notices[0]
    assert "Stop hook" in got.notices[0] and "'true'" in got.notices[0]


def test_failures_of_events_without_a_turn_are_kept_for_the_result(tmp_path: Path) -> None:
    runner = _runner([_spec("Notification", "exit 1"), _spec("PreCompact", "exit 4")], tmp_path)
    runner.run("Notification", {"message": "hi"})  # callers drop the outcome
    runner.run("PreCompact", {"trigger": "auto"})
    assert [p.split(" hook")[0] for p in runner.problems] == ["Notification", "PreCompact"]
    assert "exit 4" in runner.problems[1]


def test_exit_0_and_exit_2_are_no_problems(tmp_path: Path) -> None:
    runner = _runner([_spec("Stop", "exit 0"), _spec("Stop", "echo no >&2; exit 2")], tmp_path)
    got = runner.run("Stop", {})
    assert got.blocked and got.reason == "no"
    assert runner.problems == []


def test_an_invalid_matcher_is_a_load_warning_naming_the_hook(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    hooks = {"PreToolUse": [{"matcher": "Bash(rm", "hooks": [
        {"type": "command", "command": "./guard.sh"}]}]}  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    cfg = load(ws)
    warned = [w for w in cfg.warnings if "not a valid regular expression" in w]
    assert len(warned) == 1
    assert "PreToolUse hook" in warned[0] and "'Bash(rm'" in warned[0]
    assert "'./guard.sh'" in warned[0] and "settings.json" in warned[0]
    assert cfg.hooks[0].matches(("Bash(rm",)) and not cfg.hooks[0].matches(("bash", "Bash"))


def test_a_valid_matcher_gives_no_warning(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    hooks = {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"command": "true"}]}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    assert not [w for w in load(ws).warnings if "regular expression" in w]
