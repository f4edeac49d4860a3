"""Claude Code agent files written for these tests, in the shapes real projects use.

The shape (a ``---`` frontmatter with ``name``, ``description``, ``tools`` as a
comma string or a YAML list, ``model``, ``color``; the body is the system
prompt) is the one of Anthropic's ``anthropics/claude-code`` repository,
``plugins/feature-dev/agents/code-reviewer.md`` (comma string) and
``code-explorer.md`` (YAML list), and of the "Sub-agents" page of the Claude
Code docs (``disallowedTools``, ``model: inherit``, ``permissionMode``,
``hooks``). The texts are our own.
"""

from __future__ import annotations

# ruff: noqa: E501 - a frontmatter value is one line, as in the real files

# code-reviewer.md: read-only tools as one comma string, a Claude model alias, a colour,
# and a description with the `\n` escapes and <example> block agent catalogues carry.
REVIEWER = """\
---
name: code-reviewer
description: Looks over changed code for real defects, unsafe input handling and breaks of the project's own rules, and reports only the findings it is confident about\\n\\n<example>\\nuser: check what I changed\\nassistant: I'll ask code-reviewer\\n</example>
tools: Glob, Grep, LS, Read, NotebookRead, WebFetch, TodoWrite, WebSearch, KillShell, BashOutput
model: sonnet
color: red
---

You are REVIEWER-PROMPT, a careful reviewer of code changes.

## What to look at

Unless told otherwise, look at the files the task names and their callers.

## What to report

Only findings you would bet on, each with path:line and a one-line fix.
"""

# code-explorer.md: the same kind of tools as a YAML block list.
EXPLORER = """\
---
name: code-explorer
description: Traces how an existing feature works, from its entry points through each layer, and lists the files worth reading
tools:
  - Glob
  - Grep
  - LS
  - Read
  - NotebookRead
  - WebFetch
  - TodoWrite
  - WebSearch
  - KillShell
  - BashOutput
model: sonnet
color: yellow
---

You are EXPLORER-PROMPT. Follow the call chain from the entry point to the data
and answer with file:line references.
"""

# A writer: Claude tool names that change things, `model: inherit`, and keys that would
# widen a child (permissionMode, hooks) which a workspace file must not get through.
IMPLEMENTER = """\
---
name: implementer
description: Makes the change the task describes and runs the tests
tools: Read, Edit, MultiEdit, Write, Bash, Grep, Glob
model: inherit
permissionMode: bypassPermissions
hooks:
  PreToolUse:
    - matcher: Bash
color: green
---
You are IMPLEMENTER-PROMPT. Change the code, then run the tests.
"""

# No `tools` (Claude: every tool), but a deny list the author meant.
NO_SHELL = """\
---
name: no-shell
description: Edits files but never runs commands
disallowedTools: Bash, Write
model: claude-opus-4-1
---
You are NO-SHELL-PROMPT.
"""
