"""SUB-7, SUB-8, SUB-22, SUB-5, SUB-6: the five concepts and their boundaries.

The field-set snapshots below are the boundary tests: they fail whenever the
profile or the compiled spec gains a field, so a per-run value or a fleet
dependency cannot slip into them unnoticed.
"""

from __future__ import annotations

import dataclasses

import pytest

from reasonix.agent.subagent.profile import (
    Profile,
    builtin_skills,
    profile_from_skill,
    split_tools,
)
from reasonix.agent.subagent.skills import parse_skill
from reasonix.agent.subagent.spawn import ModelChoice
from reasonix.agent.subagent.spec import (
    CapabilityGrant,
    ContextRequest,
    ProfileExecSpec,
    SchedulerPolicy,
    TaskSpec,
)
from reasonix.errors import ConfigError

RICH = """\
---
name: reviewer
description: Reviews things
runAs: subagent
invocation: manual
model: deepseek/deepseek-reasoner
effort: high
read-only: true
allowed-tools: [read_file, Grep, Bash(git diff:*)]
triggers: review, audit
auto-use: true
cost: high
freshness: daily
color: orange
max_turns: 9
write_paths: [src/]
---
You are a reviewer.

Be terse.
"""


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_profile_field_set_is_frozen() -> None:
    """SUB-8: widening Profile must be a deliberate edit of this snapshot."""
    assert _fields(Profile) == {
        "name", "description", "body", "allowed_tools", "read_only", "model", "effort",
        "invocation", "scope", "path",
    }  # fmt: skip


def test_profile_carries_no_per_run_values() -> None:
    """SUB-7: ceilings yes, per-run values (turns, claims, retry, verification) never."""
    per_run = {"max_turns", "max_steps", "write_paths", "retry", "retries", "verification",
               "depends_on", "triggers", "auto_use", "cost", "freshness"}  # fmt: skip
    assert not _fields(Profile) & per_run


def test_the_spec_has_no_dependency_field() -> None:
    """SUB-22: dependencies live in the fleet plan only."""
    assert _fields(ProfileExecSpec) == {"profile", "task", "grant", "context", "entry"}
    assert _fields(TaskSpec) == {"prompt", "model", "effort", "max_steps", "label", "allowance"}
    assert _fields(CapabilityGrant) == {"read_only", "write_paths"}
    assert _fields(ContextRequest) == {"ephemeral", "continue_from", "fork_from"}
    for cls in (ProfileExecSpec, TaskSpec, CapabilityGrant, ContextRequest):
        assert not {"depends_on", "dependencies", "after"} & _fields(cls)


def test_profile_from_skill_is_the_narrowing_point() -> None:
    skill = parse_skill(RICH, name="reviewer", scope="project", path="/p/SKILL.md")
    p = profile_from_skill(skill)
    assert p.body == "You are a reviewer.\n\nBe terse.\n"  # the whole child system prompt
    assert p.allowed_tools == ("read_file", "grep", "bash")  # Claude names map to ours
    assert p.read_only and p.invocation == "manual" and p.effort == "high"
    assert p.model == "deepseek/deepseek-reasoner" and p.scope == "project"
    # routing and per-run metadata stop at the narrowing point
    assert "triggers" in skill.meta and "max_turns" in skill.meta
    assert not hasattr(p, "triggers") and not hasattr(p, "max_turns")


def test_tool_lists_in_every_spelling() -> None:
    assert split_tools("Read, Grep, Glob") == ("read_file", "grep", "glob")
    assert split_tools("[edit_file, Write]") == ("edit_file", "write_file")
    yaml_list = "---\nrunAs: subagent\nallowed-tools:\n  - read_file\n  - LS\n---\nbody\n"
    skill = parse_skill(yaml_list, name="x", scope="project")
    assert profile_from_skill(skill).allowed_tools == ("read_file", "ls")


def test_builtin_profiles_are_read_only_skills() -> None:
    names = {s.name: profile_from_skill(s) for s in builtin_skills()}
    assert set(names) >= {"explore", "review"}
    assert all(p.read_only and p.scope == "builtin" and p.body.strip() for p in names.values())
    assert all(p.invocation == "auto" for p in names.values())


@pytest.mark.parametrize(
    ("total", "writers", "key"),
    [(0, 0, "agent.max_subagent_concurrency"), (33, 3, "agent.max_subagent_concurrency"),
     (6, 0, "agent.max_parallel_writers"), (4, 5, "agent.max_parallel_writers")],
)  # fmt: skip
def test_scheduler_limits_are_checked(total: int, writers: int, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        SchedulerPolicy(total, writers)
    assert info.value.key == key
    assert SchedulerPolicy().max_concurrency == 6 and SchedulerPolicy().max_writers == 3


def _spec(call_model: str = "", profile_model: str = "") -> ProfileExecSpec:
    skill = parse_skill(
        f"---\nrunAs: subagent\nmodel: {profile_model}\neffort: low\n---\nbody\n",
        name="rev",
        scope="project",
    )
    return ProfileExecSpec(
        profile_from_skill(skill), TaskSpec("t", model=call_model, effort="medium"),
        CapabilityGrant(), ContextRequest(), "task",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("choice", "call", "own", "want"),
    [
        (ModelChoice("cfg-default", "", {"rev": "per-profile"}), "call", "own", "per-profile"),
        (ModelChoice("cfg-default"), "call", "own", "call"),
        (ModelChoice("cfg-default"), "", "own", "own"),
        (ModelChoice("cfg-default"), "", "", "cfg-default"),
        (ModelChoice(), "", "", "executor"),
    ],
)
def test_model_precedence(choice: ModelChoice, call: str, own: str, want: str) -> None:
    """SUB-6: per-profile config > call > frontmatter > config default > executor."""
    model, _ = choice.pick(_spec(call, own), "executor", "exec-effort")
    assert model == want


def test_effort_precedence() -> None:
    spec = _spec()
    assert ModelChoice(subagent_efforts={"rev": "max"}).pick(spec, "m", "e")[1] == "max"
    assert ModelChoice().pick(spec, "m", "e")[1] == "medium"  # the call's effort
