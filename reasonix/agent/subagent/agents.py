"""Claude Code agent files (``.claude/agents/*.md``) as sub-agent profiles.

Claude Code keeps one sub-agent per Markdown file: a ``---`` frontmatter with
``name``, ``description``, ``tools``, ``model`` (and display keys such as
``color``), then the system prompt as the body — the shape of Anthropic's
``plugins/feature-dev/agents/code-reviewer.md`` and the "sub-agents" page of
the Claude Code docs. Reasonix reads them from three folders, first name wins:

1. ``<workspace>/.claude/agents`` (scope ``claude-agent``)
2. ``<home>/agents`` (``global-agent``; ``~/.reasonix/agents``)
3. ``~/.claude/agents`` (``claude-user-agent``)

Each file becomes a :class:`~.skills.Skill` with ``runAs: subagent``, so it
goes through the same narrowing point (:func:`~.profile.profile_from_skill`),
index, ``task(profile=…)``, ``run_skill`` and ``/<name> TASK`` as every other
profile; :func:`load_agents` translates Claude's frontmatter here and nowhere
else:

* ``tools`` (a comma string or a YAML list of Claude names) → the profile's
  ``allowed-tools`` ceiling in our names; ``disallowedTools`` is taken off it
  (from every tool, when ``tools`` is absent) — an author's "not this" is
  never widened. An agent whose tools are all read-only (Read, Grep, Glob,
  LS, WebFetch …) runs as a read-only sub-agent.
* ``model``: Claude's aliases (``sonnet``, ``opus``, ``haiku``, ``inherit``)
  and ``claude-…`` ids mean the delegating agent's model (``[agent]
  subagent_models.<name>`` picks another); any other value is a model
  reference of ours, as in a profile.
* ``color``, ``permissionMode``, ``hooks``, ``mcpServers``, ``skills``,
  ``memory``, ``maxTurns`` … are read by nobody: a workspace file cannot widen
  a child's permissions or run code through them.

A file that cannot be an agent is skipped with a notice naming it.
"""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.command.frontmatter import FrontmatterError, parse

from .profile import split_tools
from .skills import MAX_SKILL_BYTES, Skill, valid_name

__all__ = ["AGENT_SCOPES", "AgentSkill", "agent_roots", "load_agents", "parse_agent"]

AGENT_SCOPES = ("claude-agent", "global-agent", "claude-user-agent")
MAX_AGENT_FILES = 500  # per folder; a catalogue bigger than this is a mistake
_MAX_DEPTH = 3  # collections group agents in sub-folders (engineering/, design/ …)
_DESC_WIDTH = 400
# Claude's model aliases: a Claude model, or the caller's; ours runs the delegating agent's.
_CLAUDE_MODELS = frozenset(("inherit", "default", "sonnet", "opus", "haiku", "opusplan"))
# Tools that make a child a writer; anything else in a ceiling reads (or is not ours).
_WRITERS = frozenset(
    ("bash", "edit_file", "write_file", "multi_edit", "notebook_edit", "move_file",
     "delete_range", "delete_symbol", "task", "fleet", "run_skill")
)  # fmt: skip


class AgentSkill(Skill):
    """A skill made from one agent file: it has no folder of its own (the agents folder
    holds other agents, not files of this one), so it lists and reads no files."""

    __slots__ = ()  # a record like its base: no per-instance ``__dict__``

    @property
    def directory(self) -> Path | None:
        """None: an agent file is the whole agent."""
        return None


def agent_roots(workspace: Path, home: Path, user_home: Path) -> list[tuple[Path, str]]:
    """The agent folders and their scopes, in precedence order (the project first)."""
    return [
        (workspace / ".claude" / "agents", AGENT_SCOPES[0]),
        (home / "agents", AGENT_SCOPES[1]),
        (user_home / ".claude" / "agents", AGENT_SCOPES[2]),
    ]


def _every_tool() -> tuple[str, ...]:
    """All our tool names a child can hold (for ``disallowedTools`` without ``tools``)."""
    from reasonix.tool.builtin._catalog import CATALOG  # only for such a file

    from .tool_schemas import DELEGATION_TOOLS

    return (*CATALOG, *DELEGATION_TOOLS)


def _ceiling(meta: dict[str, str]) -> tuple[tuple[str, ...] | None, bool]:
    """``(allowed tools or None for all, read-only)`` from ``tools`` / ``disallowedTools``."""
    raw = meta.get("tools", "").strip()
    allowed: tuple[str, ...] | None = None
    if raw and raw != "*":
        allowed = split_tools(raw)
    denied = split_tools(meta.get("disallowedtools", ""))
    if denied:
        pool = allowed if allowed is not None else _every_tool()
        allowed = tuple(t for t in pool if t not in denied)
    if allowed is None:
        return None, False
    writes = any(t in _WRITERS or t.startswith("mcp__") for t in allowed)
    return allowed, not writes


def _model(value: str) -> str:
    text = value.strip()
    low = text.lower().split("[", 1)[0]  # sonnet[1m]
    if low in _CLAUDE_MODELS or low.startswith("claude-"):
        return ""  # the delegating agent's model (config may name one per agent)
    return text


def _description(meta: dict[str, str], body: str) -> str:
    """The one-line description: Claude's often carry ``\\n`` escapes and ``<example>`` blocks
    for the model that picks agents; the index needs the sentence before them."""
    text = meta.get("description", "")
    for cut in ("\\n", "<example>"):
        text = text.split(cut, 1)[0]
    text = " ".join(text.split())
    if not text:
        from .skills import first_line

        text = first_line(body)
    return text if len(text) <= _DESC_WIDTH else text[: _DESC_WIDTH - 1] + "…"


def parse_agent(text: str, *, stem: str, scope: str, path: str = "") -> Skill:
    """One agent file → a ``runAs: subagent`` skill (FrontmatterError when it cannot be one)."""
    meta, body = parse(text)
    if not meta:
        raise FrontmatterError("no --- frontmatter, so it is not an agent definition")
    name = meta.get("name", "").strip()
    if not valid_name(name):  # Claude's names are lower-case and hyphens; a label otherwise
        name = stem
    if not valid_name(name):
        raise FrontmatterError(f"name {name!r}: use letters, digits, '_', '-' and '.'")
    if not body.strip():
        raise FrontmatterError("the body (the agent's system prompt) is empty")
    allowed, read_only = _ceiling(meta)
    out = {k: v for k, v in meta.items() if k not in ("allowed-tools", "read-only", "readonly")}
    out.update(runas="subagent", model=_model(meta.get("model", "")), invocation="auto")
    if allowed is not None:
        out["allowed-tools"] = ", ".join(allowed) if allowed else "[]"
    if read_only:
        out["read-only"] = "true"
    return AgentSkill(
        name=name,
        description=_description(meta, body),
        body=body.strip("\n") + "\n",
        scope=scope,
        path=path,
        meta=out,
    )


def _files(root: Path, notices: list[str]) -> list[Path]:
    """The ``*.md`` files under ``root`` (sub-folders too, a few levels), sorted."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=None, followlinks=True):
        depth = len(Path(dirpath).relative_to(root).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and depth < _MAX_DEPTH)
        for name in sorted(filenames):
            if name.endswith(".md") and not name.startswith("."):
                if name.lower() == "readme.md":
                    continue  # a catalogue's own description, not an agent
                if len(out) >= MAX_AGENT_FILES:
                    notices.append(
                        f"{root}: more than {MAX_AGENT_FILES} agent files; the rest skipped"
                    )
                    return out
                out.append(Path(dirpath) / name)
    return out


def load_agents(workspace: Path, home: Path, user_home: Path) -> tuple[list[Skill], list[str]]:
    """Every agent file as a profile skill (precedence applied) and the skip notices."""
    from reasonix.config.safe_read import read_text
    from reasonix.errors import ReasonixError

    found: list[Skill] = []
    notices: list[str] = []
    seen: set[str] = set()
    for root, scope in agent_roots(workspace, home, user_home):
        if not root.is_dir():
            continue
        for path in _files(root, notices):
            try:
                text = read_text(path, MAX_SKILL_BYTES)
                if "\x00" in text:
                    raise FrontmatterError("a binary file, not text")
                agent = parse_agent(text, stem=path.stem, scope=scope, path=str(path))
            except UnicodeDecodeError as err:
                notices.append(f"{path}: agent skipped (not UTF-8 text, byte {err.start})")
                continue
            except (FrontmatterError, ReasonixError, OSError) as err:
                notices.append(f"{path}: agent skipped ({err})")
                continue
            if agent.name not in seen:
                seen.add(agent.name)
                found.append(agent)
    return found, notices
