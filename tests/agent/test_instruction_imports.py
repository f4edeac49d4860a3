"""Issue 35, item 6: Claude Code's memory files work unchanged — ``@path`` imports,
``.claude/CLAUDE.md``, ``.claude/rules/*.md`` with ``paths:``, ``~/.claude/CLAUDE.md``,
and Gemini CLI's GEMINI.md.

The files are written here in the shapes Claude Code's memory documentation shows
(code.claude.com/docs/en/memory: "See @README.md for project overview", a
"@docs/git-instructions.md" line, "@~/.claude/my-project-instructions.md", rules with a
YAML ``paths:`` list); none is a copy of a real project's file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.agent.instructions import instruction_block, load_instructions
from reasonix.config.paths import home_dir
from reasonix.errors import ConfigError


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    rx, user = tmp_path / "rxhome", tmp_path / "user"
    ws = user / "code" / "app"  # a workspace inside the user's home, as usual
    for d in (rx, ws):
        d.mkdir(parents=True)
    return rx, user, ws


def _w(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_imports_expand_relative_to_the_importing_file(dirs: tuple[Path, Path, Path]) -> None:
    rx, user, ws = dirs
    _w(ws / "CLAUDE.md", "# App\nSee @README.md for the overview and @package.json for "
       "scripts.\n\n## Git\n- workflow: @docs/git-instructions.md\n"
       "Ask @alice about releases; mail ops@example.com.\n"
       "Literal: `@docs/not-this.md` and\n```\n@docs/nor-this.md\n```\n")  # fmt: skip
    _w(ws / "README.md", "README-TEXT")
    _w(ws / "package.json", '{"scripts": {"test": "pytest"}}')
    _w(ws / "docs" / "git-instructions.md", "GIT-TEXT\nAlso @../shared/commits.md.")
    _w(ws / "shared" / "commits.md", "COMMITS-TEXT")  # relative to docs/, not the root
    _w(ws / "docs" / "not-this.md", "NOT-THIS")
    _w(ws / "docs" / "nor-this.md", "NOR-THIS")
    notes: list[str] = []
    files = load_instructions(rx, ws, user_home=user, notices=notes)
    assert [(f.label, f.imported_by) for f in files] == [
        ("CLAUDE.md", ""),
        ("README.md", "CLAUDE.md"),
        ("package.json", "CLAUDE.md"),
        ("docs/git-instructions.md", "CLAUDE.md"),
        ("shared/commits.md", "docs/git-instructions.md"),
    ]
    block = instruction_block(files)
    assert '<file name="shared/commits.md" imported-by="docs/git-instructions.md">' in block
    assert "NOT-THIS" not in block and "NOR-THIS" not in block  # code is not an import
    assert notes == []  # @alice and an e-mail address are not paths


def test_missing_cycles_depth_and_each_file_once(dirs: tuple[Path, Path, Path]) -> None:
    rx, _user, ws = dirs
    _w(ws / "AGENTS.md", "AGENTS-TEXT @a.md")
    _w(ws / "CLAUDE.md", "@AGENTS.md\n@gone.md\n@a.md")  # the common one-line CLAUDE.md
    _w(ws / "a.md", "A @b.md")
    _w(ws / "b.md", "B @a.md @c.md")  # back to a.md: a cycle
    for n, nxt in zip("cdefg", "defgh", strict=True):
        _w(ws / f"{n}.md", f"{n.upper()}-LEVEL @{nxt}.md")
    _w(ws / "h.md", "TOO-DEEP")
    notes: list[str] = []
    files = load_instructions(rx, ws, notices=notes)
    labels = [f.label for f in files]
    assert labels.count("a.md") == 1 and labels.count("AGENTS.md") == 1
    assert labels[:3] == ["AGENTS.md", "a.md", "b.md"]
    # AGENTS.md (0) → a (1) → b (2) → c (3) → d (4) → e (5); f would be a sixth level
    assert "e.md" in labels and "f.md" not in labels
    assert "TOO-DEEP" not in instruction_block(files)
    assert "CLAUDE.md: @gone.md not imported (no such file)" in notes
    assert "b.md: @a.md not imported (an import cycle)" in notes
    assert any(n.startswith("e.md: @f.md not imported (imports nest at most 5") for n in notes)


def test_a_workspace_file_imports_from_home_only_when_trusted(
    dirs: tuple[Path, Path, Path],
) -> None:
    rx, user, ws = dirs
    _w(user / ".claude" / "my-project-instructions.md", "MY-PREFS")
    _w(user / ".aws" / "credentials", "AWS-SECRET")
    _w(ws.parent / "sibling" / "notes.md", "SIBLING")
    _w(ws / "CLAUDE.md", "@~/.claude/my-project-instructions.md\n@~/.aws/credentials\n"
       "@../sibling/notes.md\n@/etc/hostname\n")  # fmt: skip
    notes: list[str] = []
    block = instruction_block(load_instructions(rx, ws, user_home=user, notices=notes))
    assert "MY-PREFS" not in block and "AWS-SECRET" not in block and "SIBLING" not in block
    why = "(it is outside the workspace, which is not trusted)"
    assert f"CLAUDE.md: @~/.claude/my-project-instructions.md not imported {why}" in notes
    assert f"CLAUDE.md: @../sibling/notes.md not imported {why}" in notes
    notes.clear()
    files = load_instructions(rx, ws, user_home=user, trusted=True, notices=notes)
    block = instruction_block(files)
    assert "MY-PREFS" in block and "SIBLING" in block
    assert '<file name="~/.claude/my-project-instructions.md" imported-by="CLAUDE.md">' in block
    assert (
        "CLAUDE.md: @/etc/hostname not imported (it is outside the workspace and your home)"
        in notes
    )


def test_reasonix_secrets_are_never_imported(dirs: tuple[Path, Path, Path]) -> None:
    _rx, user, ws = dirs
    secret = home_dir() / ".env"  # the run's own home (tests isolate it)
    _w(secret, "DEEPSEEK_API_KEY=sk-real")
    _w(user / ".claude" / "CLAUDE.md", f"mine\n@{secret}\n")  # even from the user's own file
    notes: list[str] = []
    block = instruction_block(
        load_instructions(home_dir(), ws, user_home=user, trusted=True, notices=notes)
    )
    assert "sk-real" not in block and "mine" in block
    assert f"~/.claude/CLAUDE.md: @{secret} not imported (it is a secret Reasonix keeps)" in notes


def test_claude_and_gemini_locations_and_rules_with_paths(dirs: tuple[Path, Path, Path]) -> None:
    rx, user, ws = dirs
    _w(user / ".claude" / "CLAUDE.md", "USER-CLAUDE")
    _w(user / ".claude" / "rules" / "style.md", "USER-RULE")
    _w(user / ".gemini" / "GEMINI.md", "USER-GEMINI")
    _w(rx / "REASONIX.md", "RX-HOME")
    _w(ws / "GEMINI.md", "PROJECT-GEMINI")
    _w(ws / ".claude" / "CLAUDE.md", "DOT-CLAUDE @rules-extra.md")
    _w(ws / ".claude" / "rules-extra.md", "EXTRA")
    _w(ws / ".claude" / "rules" / "api.md", '---\npaths:\n  - "src/api/**/*.ts"\n'
       '  - "lib/**/*.ts"\n---\n# API rules\n- validate every input\n')  # fmt: skip
    _w(ws / ".claude" / "rules" / "testing.md", "# Testing\n- run pytest -q\n")
    _w(ws / ".claude" / "rules" / "frontend" / "react.md", "---\npaths: src/ui/**\n---\nHOOKS")
    files = load_instructions(rx, ws, user_home=user)
    assert [f.label for f in files] == [
        "~/.claude/CLAUDE.md",
        "~/.claude/rules/style.md",
        "~/.gemini/GEMINI.md",
        "<reasonix home>/REASONIX.md",
        "GEMINI.md",
        ".claude/CLAUDE.md",
        ".claude/rules-extra.md",
        ".claude/rules/api.md",
        ".claude/rules/frontend/react.md",
        ".claude/rules/testing.md",
    ]
    api = files[7]
    assert api.paths == "src/api/**/*.ts lib/**/*.ts"
    assert api.text == "# API rules\n- validate every input"  # frontmatter left out
    block = instruction_block(files)
    assert '<file name=".claude/rules/api.md" paths="src/api/**/*.ts lib/**/*.ts">' in block
    assert 'A file with paths="…" applies only when you work on files matching' in block
    assert '<file name=".claude/rules/testing.md">' in block  # no paths: always applies
    # no ~/.claude reading unless the caller names the user's home (tests, children)
    assert "USER-CLAUDE" not in instruction_block(load_instructions(rx, ws))


def test_an_import_of_a_fifo_is_a_notice_and_never_read(dirs: tuple[Path, Path, Path]) -> None:
    import os

    rx, _user, ws = dirs
    os.mkfifo(ws / "pipe.md")
    _w(ws / "CLAUDE.md", "@pipe.md")
    notes: list[str] = []
    files = load_instructions(rx, ws, notices=notes)
    assert [f.label for f in files] == ["CLAUDE.md"]
    assert notes == ["CLAUDE.md: @pipe.md not imported (not a regular file)"]
    _w(ws / "CLAUDE.md", "x")
    (ws / "CLAUDE.md").unlink()
    os.mkfifo(ws / "CLAUDE.md")
    with pytest.raises(ConfigError):  # a top-level one stays an error, as before
        load_instructions(rx, ws)
