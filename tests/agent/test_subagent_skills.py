"""SUB-1, SUB-30: skill discovery in the four roots, the compact index, skill files."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.agent.subagent.profile import builtin_skills
from reasonix.agent.subagent.skills import discover, read_resource, skill_index


def _skill(root: Path, name: str, text: str) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    return d


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for d in (ws, home, user):
        d.mkdir()
    return ws, home, user


def test_four_roots_in_precedence_order(roots: tuple[Path, Path, Path]) -> None:
    ws, home, user = roots
    _skill(ws / ".reasonix" / "skills", "dup", "---\ndescription: project wins\n---\nP\n")
    _skill(ws / ".claude" / "skills", "dup", "---\ndescription: claude project\n---\nC\n")
    _skill(ws / ".claude" / "skills", "cp", "---\ndescription: from .claude\n---\nC\n")
    _skill(home / "skills", "glob", "---\ndescription: global one\n---\nG\n")
    _skill(user / ".claude" / "skills", "cu", "# Heading line\nbody\n")  # no frontmatter
    _skill(ws / ".reasonix" / "skills", "explore", "---\nrunAs: subagent\n---\nmine\n")
    found = discover(ws, home, user, builtin_skills())
    scopes = {s.name: s.scope for s in found.skills}
    assert scopes["dup"] == "project" and found.get("dup").description == "project wins"
    assert scopes["cp"] == "claude-project" and scopes["glob"] == "global"
    assert scopes["cu"] == "claude-user" and found.get("cu").description == "Heading line"
    assert scopes["explore"] == "project"  # a user file replaces a built-in of that name
    assert scopes["review"] == "builtin"


def test_a_broken_file_is_a_notice(roots: tuple[Path, Path, Path]) -> None:
    ws, home, user = roots
    _skill(ws / ".reasonix" / "skills", "bad", "---\ndescription: no closing fence\nbody\n")
    _skill(ws / ".reasonix" / "skills", "good", "---\ndescription: fine\n---\nok\n")
    found = discover(ws, home, user)
    assert found.names() == ["good"]
    assert any("bad" in n and "skipped" in n for n in found.notices)


def test_index_lists_names_tags_and_descriptions_but_not_manual(
    roots: tuple[Path, Path, Path],
) -> None:
    ws, home, user = roots
    root = ws / ".reasonix" / "skills"
    _skill(root, "inline", "---\ndescription: an inline playbook\n---\nSECRET BODY\n")
    _skill(root, "hidden", "---\nrunAs: subagent\ninvocation: manual\ndescription: h\n---\nx\n")
    found = discover(ws, home, user, builtin_skills())
    index = skill_index(found.skills)
    assert index.startswith("<skills>") and index.endswith("</skills>")
    assert "- inline — an inline playbook" in index
    assert "- explore [subagent] — " in index and "- review [subagent] — " in index
    assert "hidden" not in index  # SUB-30: manual stays out of the model-visible index
    assert "SECRET BODY" not in index  # bodies load on demand only
    assert found.get("hidden") is not None  # still there for /hidden and explicit names


def test_skill_files_are_readable_only_under_references_and_scripts(
    roots: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ws, home, user = roots
    d = _skill(ws / ".reasonix" / "skills", "rich", "---\ndescription: r\n---\nbody\n")
    (d / "references").mkdir()
    (d / "references" / "guide.md").write_text("the guide\n")
    (d / "scripts").mkdir()
    (d / "scripts" / "run.sh").write_text("echo hi\n")
    (tmp_path / "secret.txt").write_text("no")
    (d / "references" / "out").symlink_to(tmp_path / "secret.txt")
    skill = discover(ws, home, user).get("rich")
    assert skill is not None and skill.has_resource_dirs()
    assert skill.resources() == ["references/guide.md", "references/out", "scripts/run.sh"]
    assert read_resource(skill, "references/guide.md") == "the guide\n"
    assert read_resource(skill, "scripts/run.sh") == "echo hi\n"
    for bad in ("SKILL.md", "references/../SKILL.md", "/etc/passwd", "references/out"):
        with pytest.raises(ValueError):
            read_resource(skill, bad)
