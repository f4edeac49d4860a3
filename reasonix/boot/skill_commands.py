"""``/<skill> ARGS``: the user runs an inline skill (issue 35).

As in Claude Code, typing a skill's name runs it: its body (with
``${CLAUDE_SKILL_DIR}`` and ``$ARGUMENTS`` filled in, see
:func:`~reasonix.agent.subagent.skills.render_skill`) becomes the turn the model
answers, with its folder and files named. Sub-agent profiles have their own
source (:func:`.subagents.profile_commands`); a skill with Claude's
``user-invocable: false`` is left off the menu. A custom command file of the
same name keeps the name (the registry notes the shadowed skill).
"""

from __future__ import annotations

from collections.abc import Callable

from reasonix.agent.subagent.skills import Skill, SkillSet, render_skill
from reasonix.command.api import CommandResult
from reasonix.command.registry import Command, CommandSource

__all__ = ["skill_commands"]


def _command(skill: Skill) -> Command:
    def run(args: str, skill: Skill = skill) -> CommandResult:
        return CommandResult(prompt=render_skill(skill, args))

    label = f"{skill.label}: " if skill.label != skill.name else ""
    desc = f"skill: {label}{skill.description}".rstrip(": ")
    hint = skill.meta.get("argument-hint", "").strip()
    return Command(skill.name, desc, "skill", run, hint, skill.path)


def skill_commands(skills: Callable[[], SkillSet | None]) -> CommandSource:
    """The command source of every user-invocable inline skill of ``skills()``."""

    def source(notices: list[str]) -> list[Command]:
        found = skills()
        if found is None:
            return []
        return [_command(s) for s in found.skills if s.run_as == "inline" and s.user_invocable]

    return source
