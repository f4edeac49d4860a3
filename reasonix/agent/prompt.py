"""The stable system prompt: base instructions plus an environment summary.

Everything here is computed once per session and stored in the transcript's
meta record, so every request of a session — and of a resumed one — starts
with byte-identical text and the provider's prefix cache keeps hitting. Hence
nothing that changes per turn (dates, times, git status) belongs here.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "BASE_PROMPT",
    "environment_summary",
    "find_git_root",
    "mcp_update",
    "skills_update",
    "system_prompt",
    "typed_text",
    "valid_text",
]

BASE_PROMPT = """\
You are Reasonix, a coding agent working in the user's terminal. You help with \
software engineering tasks by reading, searching and editing files and by running \
commands through the tools you are given.

How to work:
- Understand before you change: read the relevant code first; never guess file contents.
- Make the smallest change that solves the task, in the existing style of the code.
- Verify your work when you can (run the tests or the program) and report what you ran.
- Independent read-only tool calls may be issued together in one response; they run in \
parallel.
- A tool result that reports an error or a refusal is information: adapt, do not repeat \
the same call.
- Stay inside the workspace unless the user asks otherwise.
- When the task is done, answer with a short summary of what changed and what you \
verified; do not call a tool in that final answer.

Instructions from REASONIX.md / AGENTS.md / CLAUDE.md files, when present, arrive in \
the first user message and apply to the whole session."""


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git``, or None."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _shell() -> str:
    if os.name == "nt":
        return Path(os.environ.get("COMSPEC", "cmd.exe")).name
    return Path(os.environ.get("SHELL", "/bin/sh")).name


def _os_name() -> str:
    # os.uname instead of the platform module: it is cheap and startup time matters.
    if hasattr(os, "uname"):
        u = os.uname()
        return f"{u.sysname} {u.machine}"
    return {"win32": "Windows"}.get(sys.platform, sys.platform)


def environment_summary(workspace: Path, extra_dirs: Sequence[Path] = ()) -> str:
    """OS, shell, workspace root, git yes/no and extra writable directories."""
    lines = [
        "<environment>",
        f"os: {_os_name()}",
        f"shell: {_shell()}",
        f"workspace root: {workspace}",
        f"git repository: {'yes' if find_git_root(workspace) else 'no'}",
    ]
    if extra_dirs:
        lines.append("additional directories: " + ", ".join(str(d) for d in extra_dirs))
    lines.append("</environment>")
    return "\n".join(lines)


def system_prompt(workspace: Path, extra_dirs: Sequence[Path] = (), base: str = "") -> str:
    """The full system prompt for a new session."""
    return valid_text((base or BASE_PROMPT) + "\n\n" + environment_summary(workspace, extra_dirs))


def skills_update(index: str, sent: Iterable[str]) -> str:
    """The skill index for the next user turn of a continued session, or "".

    The first user turn carries the index the session started with and is never
    rewritten (the provider's prompt cache holds it). When the skills found now
    differ (a skill added, removed or described anew before ``run -c``), the
    model learns it from a new index at the head of the next user message;
    ``sent`` is the text of the user messages already sent (none: a fresh
    session, whose first turn carries the index anyway), read only until one
    holds the index (a long session's are not all read).
    """
    texts = iter(sent)
    first = next(texts, None) if index else None
    if first is None:
        return ""
    head = "<skills>\n"
    note = "The skills changed since this session started; this list replaces the earlier one.\n"
    update = index.replace(head, head + note, 1) if index.startswith(head) else index
    if any(index in text or update in text for text in itertools.chain((first,), texts)):
        return ""  # the model has this list (first turn, or an update sent before)
    return update


def mcp_update(disabled: Sequence[str], enabled: Sequence[str]) -> str:
    """The note for the head of the next user message after ``/mcp disable|enable``, or "".

    The tool list and the system prompt stay as sent (the provider's prompt cache
    holds them), so the model learns of the change here, once, in a new message.
    """
    if not disabled and not enabled:
        return ""
    lines = ["<mcp-servers>"]
    for name in disabled:
        lines.append(
            f"The user disabled MCP server {name}: its tools (mcp__{name}__*) refuse every "
            "call until the user enables it again; do not call them."
        )
    for name in enabled:
        lines.append(f"The user enabled MCP server {name} again: its tools can be called.")
    return "\n".join([*lines, _MCP_CLOSE.rstrip()])


def valid_text(text: str) -> str:
    """``text`` with undecodable bytes as U+FFFD, so it always encodes as UTF-8.

    Python decodes undecodable bytes in argv, stdin and file names as lone
    surrogates (``surrogateescape``); sent as they are, they would break the
    transcript line and the provider's JSON body.
    """
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        return text.encode("utf-8", "replace").decode("utf-8")


_INSTRUCTIONS_CLOSE = "</instructions>\n\n"  # the instruction files (agent/instructions.py)
_SKILLS_CLOSE = "</skills>\n\n"  # the skill index (agent/subagent/skills.py)
_MCP_CLOSE = "</mcp-servers>\n\n"  # /mcp disable|enable (mcp_update)
_RECALL_OPEN, _RECALL_CLOSE = "\n\n<memory-recall>\n", "</memory-recall>"  # auto-recall


def typed_text(content: str) -> str:
    """A stored user message as the person typed it, for display: the host's additions
    for the model (instruction files, skill index, recalled memory) removed."""
    if content.startswith("<instructions>") and _INSTRUCTIONS_CLOSE in content:
        content = content.split(_INSTRUCTIONS_CLOSE, 1)[1]
    if content.startswith("<skills>") and _SKILLS_CLOSE in content:
        content = content.split(_SKILLS_CLOSE, 1)[1]
    if content.startswith("<mcp-servers>") and _MCP_CLOSE in content:
        content = content.split(_MCP_CLOSE, 1)[1]
    if content.endswith(_RECALL_CLOSE) and _RECALL_OPEN in content:
        content = content[: content.rindex(_RECALL_OPEN)]
    return content
