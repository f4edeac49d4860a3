"""Sub-agent profiles: how a worker thinks (spec §3.10, SUB-1, SUB-7, SUB-8, SUB-30).

A profile is a skill with ``runAs: subagent``. :func:`profile_from_skill` is
the single narrowing point from skill frontmatter (which may keep growing) to
:class:`Profile`: routing metadata (triggers, auto-use, cost, freshness …)
stops here, because it decides *when* a worker is picked, not how it thinks.
A profile may carry capability *ceilings* (``allowed-tools``, ``read-only``)
and a model/effort preference, never per-run values (``max_turns``,
``write_paths``, retry or verification policy): those belong to the call
(:mod:`.spec`). ``tests/agent/test_subagent_profile.py`` fails whenever the
field set of :class:`Profile` changes.

The profile body is the complete child system prompt — no default is stacked
on top (SUB-30). Calls without a profile use :data:`DEFAULT_TASK_PROMPT` or,
for read-only children, :data:`DEFAULT_READ_ONLY_TASK_PROMPT`.
"""

from __future__ import annotations

from reasonix.lazy import dataclass

from .skills import Skill, parse_skill

__all__ = [
    "BUILTIN_SKILLS",
    "CLAUDE_TOOL_ALIASES",
    "DEFAULT_READ_ONLY_TASK_PROMPT",
    "DEFAULT_TASK_PROMPT",
    "Profile",
    "builtin_skills",
    "profile_from_skill",
    "split_tools",
]

DEFAULT_TASK_PROMPT = """\
You are a sub-agent of Reasonix, a coding agent. Another agent delegated one task to you; \
you see only that task, not its conversation. Work in the workspace named in \
<workspace-context> with the tools you are given.

- Read before you change; make the smallest change that does the task.
- Stay inside the paths the task lets you write; a refused write means the path is not yours.
- Verify what you can (run the tests or the program) and say exactly what you ran.
- Finish as the completion contract at the end of the task says."""

DEFAULT_READ_ONLY_TASK_PROMPT = """\
You are a read-only sub-agent of Reasonix, a coding agent. Another agent delegated one \
question to you; you see only that question, not its conversation. Investigate the \
workspace named in <workspace-context> with the read-only tools you are given; you cannot \
change anything.

Answer with the findings the question asks for, citing files as path:line, and say what \
you could not determine. Keep the answer short: the other agent reads all of it."""

# Claude Code tool names in `allowed-tools`, so its skill folders work unchanged.
CLAUDE_TOOL_ALIASES = {
    "bash": "bash", "edit": "edit_file", "multiedit": "multi_edit", "write": "write_file",
    "read": "read_file", "grep": "grep", "glob": "glob", "ls": "ls", "webfetch": "web_fetch",
    "todowrite": "todo_write", "notebookedit": "notebook_edit", "task": "task",
    "bashoutput": "bash_output", "killshell": "kill_shell", "killbash": "kill_shell",
    "notebookread": "read_file", "websearch": "web_search", "agent": "task", "skill": "run_skill",
}  # fmt: skip


@dataclass(frozen=True)
class Profile:
    """How one worker thinks: its prompt, its ceilings and its model preference."""

    name: str
    description: str
    body: str  # the complete child system prompt
    allowed_tools: tuple[str, ...] | None  # ceiling; None = no allowlist
    read_only: bool  # ceiling: the strictly read-only registry
    model: str  # preference ("" = none); config and the call may override (SUB-6)
    effort: str
    invocation: str  # "auto" | "manual" (manual: not in the model-visible index)
    scope: str  # where the skill came from (builtin, project, global, claude-…)
    path: str  # its SKILL.md ("" for a built-in)


def split_tools(value: str) -> tuple[str, ...]:
    """``[read_file, grep]`` / ``Read, Grep`` / ``Bash(git diff:*)`` → our tool names."""
    text = value.strip().removeprefix("[").removesuffix("]")
    words, depth, cur = [], 0, ""
    for ch in text:  # split on commas and blanks outside parentheses: Bash(git diff:*)
        depth += (ch == "(") - (ch == ")")
        if depth <= 0 and (ch == "," or ch.isspace()):
            words.append(cur)
            cur = ""
        else:
            cur += ch
    words.append(cur)
    out: list[str] = []
    for raw in words:
        item = raw.strip().strip("'\"")
        if not item:
            continue
        base = item.split("(", 1)[0]  # Claude's Bash(pattern) narrows bash; the tool is bash
        name = CLAUDE_TOOL_ALIASES.get(base.lower(), base)
        if name not in out:
            out.append(name)
    return tuple(out)


def _flag(value: str) -> bool:
    return value.strip().lower() in ("true", "yes", "1", "on")


def profile_from_skill(skill: Skill) -> Profile:
    """The one narrowing point: a ``runAs: subagent`` skill → :class:`Profile`.

    Every other frontmatter key (triggers, auto-use, cost, freshness, colours …)
    is routing or display metadata and does not pass.
    """
    meta = skill.meta
    tools = meta.get("allowed-tools", meta.get("tools", ""))
    return Profile(
        name=skill.name,
        description=skill.description,
        body=skill.body,
        allowed_tools=split_tools(tools) if tools.strip() else None,
        read_only=_flag(meta.get("read-only", meta.get("readonly", ""))),
        model=meta.get("model", "").strip(),
        effort=meta.get("effort", "").strip(),
        invocation=skill.invocation,
        scope=skill.scope,
        path=skill.path,
    )


_EXPLORE = """\
---
name: explore
description: Read-only search and summary of the codebase in an isolated sub-agent; returns \
one distilled answer with path:line citations. For broad questions across many files.
runAs: subagent
read-only: true
---
You are a read-only exploration sub-agent. You get one question about a codebase and answer \
it from the code itself.

How to work:
- Search first (grep, glob, code_index), then read only the parts that matter.
- Issue independent reads together in one response; they run in parallel.
- Do not guess: every claim cites the file and line it comes from (path:line).
- You cannot change files or run commands; do not try.

Answer with a short summary first, then the evidence as a list of path:line entries with one \
line each, then what you could not find out. The agent that asked reads all of it, so leave \
out everything the question does not need.
"""

_REVIEW = """\
---
name: review
description: Read-only review of the pending changes (git diff) in an isolated sub-agent; \
reports correctness, security and missing-test findings by path:line, most severe first.
runAs: subagent
read-only: true
---
You are a read-only code review sub-agent. Review the changes the task names (by default the \
working tree's pending changes) and report what is wrong with them.

How to work:
- Find the changed files and hunks: the task may name them; otherwise list what changed with \
read-only tools (git is not available to you) and read the changed code with its context.
- Check correctness first, then security (input handling, paths, secrets, injection), then \
missing or weak tests, then behaviour changes the author may not intend.
- Report only actionable findings. Each: severity (high, medium, low), path:line, what is \
wrong, and a one-line fix suggestion. Most severe first.

If you find nothing worth fixing, say so in one line. Do not restate the diff.
"""

BUILTIN_SKILLS: tuple[tuple[str, str], ...] = (("explore", _EXPLORE), ("review", _REVIEW))


def builtin_skills() -> list[Skill]:
    """The built-in profiles as skills (they go through :func:`profile_from_skill` too)."""
    return [parse_skill(text, name=name, scope="builtin") for name, text in BUILTIN_SKILLS]
