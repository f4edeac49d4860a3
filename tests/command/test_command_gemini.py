"""Issue 35, item 6: Gemini CLI's ``.gemini/commands/**/*.toml`` load as commands.

The files are written here in the shape Gemini CLI's custom-commands documentation
shows (geminicli.com/docs/cli/custom-commands: ``description`` + multi-line
``prompt``, ``{{args}}``, ``git/commit.toml`` → ``/git:commit``); none is a copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonix.command.custom import CommandDir
from reasonix.command.gemini import gemini_commands, gemini_dirs, load_gemini, render
from reasonix.command.registry import CommandRegistry


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class _Host:
    workspace = Path(".")

    def mcp_prompts(self) -> list[dict[str, Any]]:
        return []


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    ws, user = tmp_path / "ws", tmp_path / "user"
    cmds = ws / ".gemini" / "commands"
    _w(cmds / "plan.toml", 'description = "Plan a change, no code"\nprompt = """\n'
       "You are a careful engineer. Plan, do not write code.\n"
       'The task: {{args}}\n"""\n')  # fmt: skip
    _w(cmds / "git" / "commit.toml", 'prompt = """Write a commit message for the staged '
       'change.\nRead @{CHANGELOG.md} first; the diff: !{git diff --staged}"""\n')  # fmt: skip
    _w(cmds / "broken.toml", 'prompt = "unclosed\n')
    _w(cmds / "empty.toml", 'description = "no prompt"\n')
    _w(cmds / "Bad Name.toml", 'prompt = "x"\n')
    _w(cmds / ".hidden.toml", 'prompt = "x"\n')
    _w(user / ".gemini" / "commands" / "plan.toml", 'prompt = "the user\'s plan"\n')
    _w(user / ".gemini" / "commands" / "standup.toml", 'prompt = "Summarise yesterday."\n')
    return ws, user


def test_the_files_load_with_gemini_names_and_precedence(tmp_path: Path) -> None:
    ws, user = _setup(tmp_path)
    notes: list[str] = []
    found = {c.name: c for c in load_gemini(gemini_dirs(ws, user), notes)}
    assert sorted(found) == ["git:commit", "plan", "standup"]
    assert found["plan"].scope == "project" and found["plan"].description.startswith("Plan a")
    assert found["standup"].scope == "user"
    assert found["git:commit"].description == "Write a commit message for the staged change."
    assert len(notes) == 3 and all(n.endswith("; skipped") for n in notes)
    assert any("broken.toml" in n for n in notes)
    assert any("empty.toml" in n and "no `prompt`" in n for n in notes)
    assert any("Bad Name.toml" in n for n in notes)


def test_args_and_file_references_render_as_gemini_does(tmp_path: Path) -> None:
    ws, user = _setup(tmp_path)
    found = {c.name: c for c in load_gemini(gemini_dirs(ws, user), [])}
    plan = render(found["plan"], "add a cache")
    assert plan.endswith("The task: add a cache\n") and "{{args}}" not in plan
    commit = render(found["git:commit"], "")
    assert "Read @CHANGELOG.md first" in commit  # our @ reference, resolved by the frontend
    assert "!{git diff --staged}" in commit  # shell injection is not run
    # no {{args}}: the typed command is appended after a blank line
    typed = render(found["git:commit"], "mention the fix")
    assert typed.endswith("!{git diff --staged}\n\n/git:commit mention the fix")


def test_the_registry_lists_and_runs_them_and_markdown_wins(tmp_path: Path) -> None:
    ws, user = _setup(tmp_path)
    _w(ws / ".claude" / "commands" / "standup.md", "The Markdown standup.\n")
    reg = CommandRegistry(
        _Host(),  # type: ignore[arg-type]
        builtins=[],
        custom_dirs=[CommandDir(ws / ".claude" / "commands", "project")],
        sources=[gemini_commands(ws, user)],
    )
    names = dict(reg.names())
    assert names["/plan"] == "Plan a change, no code" and "/git:commit" in names
    assert [c.text for c in reg.complete("/git")] == ["/git:commit"]
    result = reg.run("/plan speed up start")
    assert result.prompt is not None and "The task: speed up start" in result.prompt
    assert reg.run("/standup").prompt == "The Markdown standup.\n"
    assert any("/standup (user) is shadowed" in n for n in reg.notices)
