"""Issue 35 items 5 and 6 through the built .pyz: a Claude Code (or Gemini CLI) user's
skills, memory files and command files work unchanged.

The files are ours, in the shapes those tools document: a skill folder as in
Anthropic's skills repository (``anthropics/skills``: SKILL.md plus ``forms.md`` and
``scripts/*.py`` at the top of the folder), a plugin skill whose ``name`` is a label
with spaces (Anthropic's plugin-dev ``Hook Development``), CLAUDE.md with ``@path``
imports and ``.claude/rules/*.md`` with ``paths:`` (code.claude.com/docs/en/memory),
GEMINI.md and a ``.gemini/commands`` TOML file (geminicli.com/docs/cli/custom-commands).
The archive runs in a subprocess with a clean environment (HOME is the test's folder)
against a scripted loopback model; what reached the model is read from the fake.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

pytestmark = pytest.mark.e2e

FORMS_SKILL = """\
---
name: pdf-forms
description: Fill in PDF forms. Use when the user hands over a PDF form to complete.
---
# PDF forms

Read ${CLAUDE_SKILL_DIR}/forms.md before filling anything, then list the fields with
`python ${CLAUDE_SKILL_DIR}/scripts/list_fields.py $ARGUMENTS`.
"""

HOOK_SKILL = """\
---
name: Hook Development
description: This skill should be used when the user asks to "create a hook" or mentions
  PreToolUse or Stop hooks.
version: 0.1.0
---
# Hook development

Hooks are commands that run on events; see examples/block.sh.
"""

PLAN_TOML = '''\
description = "Plan a change without writing code"
prompt = """
Act as a planning partner; write no code.
The change: {{args}}
"""
'''


def _project(tmp_path: Path, url: str) -> Path:
    ws = tmp_path / "repo"
    write_project(ws, url)
    skills = ws / ".claude" / "skills"
    forms = skills / "pdf-forms"
    (forms / "scripts").mkdir(parents=True)
    (forms / "SKILL.md").write_text(FORMS_SKILL, encoding="utf-8")
    (forms / "forms.md").write_text("FORMS-GUIDE: one value per field\n", encoding="utf-8")
    (forms / "scripts" / "list_fields.py").write_text("print('fields')\n", encoding="utf-8")
    hooks = skills / "hook-development"
    (hooks / "examples").mkdir(parents=True)
    (hooks / "SKILL.md").write_text(HOOK_SKILL, encoding="utf-8")
    (hooks / "examples" / "block.sh").write_text("exit 2\n", encoding="utf-8")
    (ws / "CLAUDE.md").write_text(
        "# Repo\nSee @README.md for the overview.\n- git workflow: @docs/git.md\n"
        "- personal: @~/.claude/repo-prefs.md\n- old notes: @docs/gone.md\n",
        encoding="utf-8",
    )
    (ws / "README.md").write_text("README-OVERVIEW\n", encoding="utf-8")
    (ws / "docs").mkdir()
    (ws / "docs" / "git.md").write_text("GIT-RULES: rebase, never merge\n", encoding="utf-8")
    rules = ws / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "api.md").write_text(
        '---\npaths:\n  - "src/api/**/*.py"\n---\nAPI-RULE: validate every input\n', "utf-8"
    )
    (ws / "GEMINI.md").write_text("GEMINI-CONTEXT: tabs are banned\n", encoding="utf-8")
    user_claude = tmp_path / ".claude"  # HOME is tmp_path
    user_claude.mkdir(exist_ok=True)
    (user_claude / "CLAUDE.md").write_text("USER-CLAUDE: answer briefly\n", encoding="utf-8")
    (user_claude / "repo-prefs.md").write_text("REPO-PREFS: mine only\n", encoding="utf-8")
    gemini = ws / ".gemini" / "commands"
    gemini.mkdir(parents=True)
    (gemini / "design.toml").write_text(PLAN_TOML, encoding="utf-8")
    return ws


def _user(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.json["messages"] if m["role"] == "user"]


def _tools(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.json["messages"] if m["role"] == "tool"]


def _run(pyz: Path, ws: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", "-y", *extra, "fill the form"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_run_reads_claude_memory_and_reaches_every_skill_file(pyz: Path, tmp_path: Path) -> None:
    script = [
        Turn.tools(
            [ToolSpec("run_skill", json.dumps({"name": "pdf-forms", "arguments": "a.pdf"}))]
        ),
        Turn.tools([ToolSpec("run_skill", json.dumps({"name": "pdf-forms", "file": "forms.md"}))]),
        Turn.text_only("filled"),
    ]
    with FakeServer("openai", script) as srv:
        ws = _project(tmp_path, srv.url)
        out = _run(pyz, ws, clean_env(tmp_path, source_tree=False))
        requests = list(srv.requests)
    assert out["result"] == "filled"
    first = _user(requests[0])[0]
    for marker in ("USER-CLAUDE", "README-OVERVIEW", "GIT-RULES", "REPO-PREFS", "GEMINI-CONTEXT"):
        assert marker in first, marker
    assert '<file name="docs/git.md" imported-by="CLAUDE.md">' in first
    assert '<file name=".claude/rules/api.md" paths="src/api/**/*.py">' in first
    assert "API-RULE: validate every input" in first
    assert first.index("<instructions>") < first.index("<skills>")  # the prefix, not a later turn
    assert "- hook-development — This skill should be used" in first  # the label's skill loads
    assert any("@docs/gone.md not imported (no such file)" in w for w in out["warnings"])
    skill_dir = ws / ".claude" / "skills" / "pdf-forms"
    loaded = _tools(requests[1])[-1]
    assert f"Read {skill_dir}/forms.md before filling anything" in loaded
    assert f"`python {skill_dir}/scripts/list_fields.py a.pdf`" in loaded
    assert f"This skill's folder is {skill_dir}" in loaded and "- forms.md" in loaded
    assert _tools(requests[2])[-1] == "FORMS-GUIDE: one value per field\n"


def test_an_untrusted_workspace_imports_nothing_from_home(pyz: Path, tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("ok"), Turn.text_only("ok")]) as srv:
        ws = _project(tmp_path, srv.url)
        env = clean_env(tmp_path, source_tree=False)
        env.pop("REASONIX_TRUST_WORKSPACE")
        # an untrusted workspace's own provider is skipped: the user's config names it
        (tmp_path / "rx").mkdir(exist_ok=True)
        (ws / "reasonix.toml").replace(tmp_path / "rx" / "config.toml")
        untrusted = _run(pyz, ws, env)
        trusted = _run(pyz, ws, env, "--trust")
        requests = list(srv.requests)
    first = _user(requests[0])[0]
    assert "REPO-PREFS" not in first and "GIT-RULES" in first and "USER-CLAUDE" in first
    assert any(
        "@~/.claude/repo-prefs.md not imported (it is outside the workspace, which is not "
        "trusted)" in w
        for w in untrusted["warnings"]
    ), untrusted["warnings"]
    assert "REPO-PREFS" in _user(requests[1])[0]
    assert not any("repo-prefs" in w for w in trusted["warnings"])


def test_chat_types_skills_and_gemini_commands(pyz: Path, tmp_path: Path) -> None:
    script = [Turn.text_only("hook made"), Turn.text_only("planned")]
    with FakeServer("openai", script) as srv:
        ws = _project(tmp_path, srv.url)
        lines = ["/help", "/hook-development block rm -rf", "/design add a cache", "/exit"]
        out = subprocess.run(
            [sys.executable, str(pyz), "--plain"],
            cwd=ws, env=clean_env(tmp_path, source_tree=False),
            input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    screen = out.stdout
    assert "skills:" in screen and "/hook-development" in screen and "/pdf-forms" in screen
    assert "Hook Development: This skill should be used" in screen
    assert "/design" in screen and "Plan a change without writing code" in screen
    assert len(requests) == 2
    hook_turn = _user(requests[0])[-1]
    hook_dir = ws / ".claude" / "skills" / "hook-development"
    assert f'<skill name="hook-development" label="Hook Development" dir="{hook_dir}">' in hook_turn
    assert "Hooks are commands that run on events" in hook_turn
    assert hook_turn.endswith("- examples/block.sh") and "ARGUMENTS: block rm -rf" in hook_turn
    assert _user(requests[1])[-1].startswith("Act as a planning partner; write no code.\n"
                                             "The change: add a cache")  # fmt: skip
