"""Issue 35 item 1: Claude Code agent files (``.claude/agents/*.md``) become profiles."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_files import EXPLORER, IMPLEMENTER, NO_SHELL, REVIEWER

from reasonix.agent.subagent.agents import load_agents, parse_agent
from reasonix.agent.subagent.profile import profile_from_skill
from reasonix.agent.subagent.skills import read_resource, skill_index

READ_ONLY_CEILING = ("glob", "grep", "ls", "read_file", "web_fetch", "todo_write", "web_search",
                     "kill_shell", "bash_output")  # fmt: skip


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for d in (ws, home, user):
        d.mkdir()
    return ws, home, user


def _agent(root: Path, file: str, text: str | bytes) -> Path:
    path = root / file
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_feature_dev_shaped_agents_become_read_only_profiles(
    roots: tuple[Path, Path, Path],
) -> None:
    ws, home, user = roots
    agents = ws / ".claude" / "agents"
    _agent(agents, "code-reviewer.md", REVIEWER)
    _agent(agents, "code-explorer.md", EXPLORER)
    found, notices = load_agents(ws, home, user)
    assert notices == []
    by_name = {a.name: profile_from_skill(a) for a in found}
    reviewer, explorer = by_name["code-reviewer"], by_name["code-explorer"]
    # the comma string and the YAML list give the same ceiling, in our tool names
    assert reviewer.allowed_tools == explorer.allowed_tools == READ_ONLY_CEILING
    assert reviewer.read_only and explorer.read_only  # no writer among them
    assert reviewer.model == "" and reviewer.effort == ""  # sonnet: the delegating model
    assert reviewer.body.startswith("You are REVIEWER-PROMPT") and "---" not in reviewer.body
    assert reviewer.description.startswith("Looks over changed code for real defects")
    assert "<example>" not in reviewer.description and "\\n" not in reviewer.description
    assert reviewer.scope == "claude-agent" and reviewer.path == str(agents / "code-reviewer.md")
    assert reviewer.invocation == "auto"
    index = skill_index(found)
    assert "- code-reviewer [subagent] — Looks over changed code" in index
    assert "- code-explorer [subagent] — Traces how" in index
    # an agent file has no folder of its own: the other agents are not its files
    assert found[0].resources() == []
    with pytest.raises(ValueError):
        read_resource(found[0], "code-explorer.md")


def test_writers_models_and_deny_lists() -> None:
    implementer = profile_from_skill(parse_agent(IMPLEMENTER, stem="implementer", scope="x"))
    assert implementer.allowed_tools == ("read_file", "edit_file", "multi_edit", "write_file",
                                         "bash", "grep", "glob")  # fmt: skip
    assert not implementer.read_only and implementer.model == ""
    no_shell = profile_from_skill(parse_agent(NO_SHELL, stem="no-shell", scope="x"))
    assert no_shell.allowed_tools is not None and not no_shell.read_only
    assert "bash" not in no_shell.allowed_tools and "write_file" not in no_shell.allowed_tools
    assert {"edit_file", "read_file", "task"} <= set(no_shell.allowed_tools)
    assert no_shell.model == ""  # a claude-… id: the delegating agent's model
    every = profile_from_skill(
        parse_agent("---\nname: all\ndescription: d\nmodel: p/m\n---\nX\n", stem="a", scope="x")
    )
    assert every.allowed_tools is None and not every.read_only and every.model == "p/m"
    nothing = profile_from_skill(
        parse_agent("---\ndescription: none\ntools: []\n---\nX\n", stem="bare", scope="x")
    )
    assert nothing.name == "bare" and nothing.allowed_tools == () and nothing.read_only
    still = parse_agent("---\ntools: []\ndisallowedTools: Bash\n---\nX\n", stem="s", scope="x")
    assert profile_from_skill(still).allowed_tools == ()  # a deny list never adds tools
    spaced = parse_agent("---\nname: Code Reviewer\ndescription: d\n---\nX\n", stem="cr", scope="x")
    assert spaced.name == "cr"  # a name that is a label: the file names the agent


def test_folders_precedence_and_builtin_replacement(
    roots: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix.boot.subagents import load_skills

    ws, home, user = roots
    one = "---\nname: {n}\ndescription: {d}\n---\n{d} prompt\n"
    _agent(ws / ".claude" / "agents", "dup.md", one.format(n="dup", d="project agent"))
    _agent(home / "agents", "dup.md", one.format(n="dup", d="home agent"))
    _agent(home / "agents", "mine.md", one.format(n="mine", d="home only"))
    _agent(user / ".claude" / "agents", "dup.md", one.format(n="dup", d="claude user agent"))
    _agent(user / ".claude" / "agents", "cu.md", one.format(n="cu", d="claude user only"))
    _agent(ws / ".claude" / "agents", "team/nested.md", one.format(n="nested", d="in a folder"))
    found, _ = load_agents(ws, home, user)
    scopes = {a.name: (a.scope, a.description) for a in found}
    assert scopes == {
        "dup": ("claude-agent", "project agent"),
        "nested": ("claude-agent", "in a folder"),
        "mine": ("global-agent", "home only"),
        "cu": ("claude-user-agent", "claude user only"),
    }
    # through boot: beside the skills, an agent named like a built-in replaces it,
    # and a skill of an agent's name keeps it (with a notice naming the agent file)
    _agent(ws / ".claude" / "agents", "review.md", one.format(n="review", d="our reviewer"))
    skill = ws / ".claude" / "skills" / "mine"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: a skill\n---\nS\n")
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("REASONIX_HOME", str(home))
    skills = load_skills(ws)
    review, mine = skills.get("review"), skills.get("mine")
    assert review is not None and review.scope == "claude-agent"
    assert mine is not None and mine.scope == "claude-project"
    assert any("mine.md" in n and "skipped" in n for n in skills.notices)
    assert {p.name for p in skills.profiles()} >= {"dup", "nested", "cu", "review", "explore"}


@pytest.mark.parametrize(
    ("file", "text", "why"),
    [
        ("open.md", "---\nname: open\ndescription: the fence never closes\nbody\n", "closing"),
        ("badkey.md", "---\nname: k\n: no key here\n---\nX\n", "expected `key: value`"),
        ("empty.md", "---\nname: empty\ndescription: nothing below\n---\n\n", "empty"),
        ("plain.md", "# Notes\nJust some text, no frontmatter.\n", "frontmatter"),
        ("binary.md", b"---\nname: b\n---\n\x00\x01", "binary"),
        ("latin.md", b"---\nname: l\ndescription: caf\xe9\n---\nX\n", "UTF-8"),
        ("@@@.md", "---\nname: '***'\ndescription: d\n---\nX\n", "name"),  # nor its stem
    ],
)
def test_a_broken_file_is_skipped_with_a_notice_naming_it(
    roots: tuple[Path, Path, Path], file: str, text: str | bytes, why: str
) -> None:
    ws, home, user = roots
    agents = ws / ".claude" / "agents"
    bad = _agent(agents, file, text)
    _agent(agents, "good.md", "---\nname: good\ndescription: fine\n---\nok\n")
    _agent(agents, "README.md", "# The agents of this project\n")  # a catalogue's readme
    found, notices = load_agents(ws, home, user)
    assert [a.name for a in found] == ["good"]
    assert len(notices) == 1, notices
    assert str(bad) in notices[0] and "skipped" in notices[0] and why in notices[0]
