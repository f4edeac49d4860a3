"""Command files' shell lines, ``allowed-tools`` and ``disable-model-invocation`` (issue 35).

The files are written here in the shapes Claude Code's slash-command docs and
Anthropic's plugins use: ``allowed-tools`` as a comma list (``commit-commands``'
``commit.md``), as a JSON-style flow list (``ralph-wiggum``'s ``cancel-ralph.md``)
and as a YAML block list; inline ``!`cmd``` after a list item's colon and a
```` ```! ```` block.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.command.custom import CommandDir, as_command, load, tool_rules
from reasonix.config.command_trust import command_items, find_shell_lines


@pytest.mark.parametrize(
    ("text", "commands"),
    [
        ("- Current git status: !`git status`\n", ["git status"]),
        ("!`git branch --show-current` at the start\n", ["git branch --show-current"]),
        ("two: !`a` and\t!`b`\n", ["a", "b"]),
        ("KEY=!`not run` and x!`neither`\n", []),  # the bang must follow whitespace
        ("run `!`this`` is code\n", []),  # after a backtick: literal
        ("empty !`  ` skipped\n", []),
        ("```!\nbash -c 'setup.sh $ARGUMENTS'\n```\nafter\n", ["bash -c 'setup.sh $ARGUMENTS'"]),
        ("  ```!  \r\necho 1\necho 2\n  ```\n", ["echo 1\necho 2"]),
        ("```bash\n!`inside a plain fence` runs too\n```\n", ["inside a plain fence"]),
        ("```!\nnever closed\n", []),
        ("no lines at all\n", []),
    ],
)
def test_shell_lines_are_found_as_claude_code_reads_them(text: str, commands: list[str]) -> None:
    assert [s.command for s in find_shell_lines(text)] == commands


def test_a_shell_lines_span_covers_exactly_its_text() -> None:
    text = "a: !`git status`\n```!\necho x\n```\nend"
    spans = [text[s.start : s.end] for s in find_shell_lines(text)]
    assert spans == ["!`git status`", "```!\necho x\n```"]


@pytest.mark.parametrize(
    ("value", "rules", "bad"),
    [
        ("Bash(git add:*), Bash(git status:*), Bash(git commit:*)",
         ["Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"], []),
        ('["Bash(ls .claude/x.*.local.md:*)", "Read(.claude/*)"]',
         ["Bash(ls .claude/x.*.local.md:*)", "Read(.claude/*)"], []),
        ("Read Grep Glob", ["Read", "Grep", "Glob"], []),
        ('Bash(git commit -m "a b":*)', ['Bash(git commit -m "a b":*)'], []),
        ("Bash(x:*), Bash(x:*)", ["Bash(x:*)"], []),
        ("Read, Bash(unclosed", ["Read"], ["Bash(unclosed"]),
        ("", [], []),
    ],
)  # fmt: skip
def test_allowed_tools_become_rules(value: str, rules: list[str], bad: list[str]) -> None:
    assert tool_rules(value) == (rules, bad)


def test_frontmatter_keys_reach_the_command_and_its_turn(tmp_path: Path) -> None:
    d = tmp_path / "commands"
    d.mkdir()
    (d / "commit.md").write_text(
        "---\nallowed-tools:\n  - Bash(git add:*)\n  - 'Bash(git commit:*)'\n"
        "description: Create a git commit\nmodel: haiku\n"
        "disable-model-invocation: true\n---\n- Status: !`git status`\nCommit $ARGUMENTS\n"
    )
    (d / "odd.md").write_text('---\nallowed-tools: ["Read", "Bash(oops"]\n---\nBody\n')
    loaded = load(CommandDir(d, "user"))
    commit = next(c for c in loaded.commands if c.name == "commit")
    assert commit.allowed_tools == ("Bash(git add:*)", "Bash(git commit:*)")
    assert commit.model == "haiku" and not commit.model_invocable
    odd = next(c for c in loaded.commands if c.name == "odd")
    assert odd.allowed_tools == ("Read",) and odd.model_invocable
    assert any("odd.md: allowed-tools: not a permission rule" in n for n in loaded.notices)
    result = as_command(commit).run("it all")
    assert result.prompt == "- Status: !`git status`\nCommit it all\n"
    assert result.turn is not None
    assert (result.turn.command, result.turn.scope, result.turn.model) == (
        "/commit", "user", "haiku",
    )  # fmt: skip
    assert result.turn.allow == commit.allowed_tools and result.turn.prompt == result.prompt


def test_trust_items_name_the_workspace_commands_that_run_code(tmp_path: Path) -> None:
    claude = tmp_path / ".claude" / "commands" / "git"
    claude.mkdir(parents=True)
    (claude / "pr.md").write_text(
        "---\nallowed-tools: Bash(gh pr create:*)\n---\n"
        "- a: !`git status`\n- b: !`git diff HEAD`\n- c: !`git log -3`\n- d: !`git branch`\n"
    )
    (claude / "plain.md").write_text("---\ndescription: inert\n---\nJust words, `code`.\n")
    ours = tmp_path / ".reasonix" / "commands"
    ours.mkdir(parents=True)
    (ours / "loop.md").write_text("```!\nbash -c 'setup.sh'\n```\n")
    items = command_items(tmp_path)
    assert {i.file for i in items} == {str(claude / "pr.md"), str(ours / "loop.md")}
    pr = next(i for i in items if i.file.endswith("pr.md"))
    assert pr.kind == "command" and pr.text == (
        "command /pr runs `git status`, `git diff HEAD`, `git log -3` and 1 more before its "
        "turn; pre-approves Bash(gh pr create:*) for its turn"
    )
    loop = next(i for i in items if i.file.endswith("loop.md"))
    assert loop.text == "command /loop runs `bash -c 'setup.sh'` before its turn"
