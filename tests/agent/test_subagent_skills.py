"""SUB-1, SUB-30: skill discovery in the four roots, the compact index, skill files."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.agent.subagent.profile import builtin_skills
from reasonix.agent.subagent.skills import discover, read_resource, render_skill, skill_index


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


def test_every_file_of_the_skill_folder_is_readable_and_nothing_outside(
    roots: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    # The shape of Anthropic's skills repository (anthropics/skills, skills/pdf): extra
    # Markdown files at the top of the folder next to SKILL.md, and scripts/*.py.
    ws, home, user = roots
    d = _skill(ws / ".claude" / "skills", "pdfkit", "---\nname: pdfkit\ndescription: r\n---\nb\n")
    (d / "forms.md").write_text("fill the form\n")
    (d / "reference.md").write_text("the reference\n")
    (d / "scripts").mkdir()
    (d / "scripts" / "fill.py").write_text("print('hi')\n")
    (d / "references").mkdir()
    (d / "references" / "guide.md").write_text("the guide\n")
    (d / ".hidden").write_text("editor state\n")
    (tmp_path / "secret.txt").write_text("no")
    (d / "out").symlink_to(tmp_path / "secret.txt")
    (d / "linked").symlink_to(tmp_path, target_is_directory=True)
    skill = discover(ws, home, user).get("pdfkit")
    assert skill is not None
    assert skill.resources() == [
        "forms.md",
        "reference.md",
        "references/guide.md",
        "scripts/fill.py",
    ]  # fmt: skip: a symlink out of the folder and hidden files are not listed
    assert read_resource(skill, "forms.md") == "fill the form\n"
    assert read_resource(skill, "reference.md") == "the reference\n"
    assert read_resource(skill, "scripts/fill.py") == "print('hi')\n"
    assert read_resource(skill, "references/guide.md") == "the guide\n"
    # the body names files through ${CLAUDE_SKILL_DIR} or the folder's own path
    assert read_resource(skill, "${CLAUDE_SKILL_DIR}/forms.md") == "fill the form\n"
    assert read_resource(skill, f"{d}/reference.md") == "the reference\n"
    for bad in ("../pdfkit/../../secret.txt", "/etc/passwd", "out", "linked/secret.txt", ""):
        with pytest.raises(ValueError):
            read_resource(skill, bad)


def test_a_name_with_spaces_is_a_label_and_the_folder_names_the_skill(
    roots: tuple[Path, Path, Path],
) -> None:
    # Anthropic's plugin-dev plugin: skills/hook-development/SKILL.md says
    # `name: Hook Development` (Claude Code uses `name` as a display label).
    ws, home, user = roots
    root = ws / ".claude" / "skills"
    _skill(root, "hook-development", "---\nname: Hook Development\ndescription: This skill "
           "should be used when the user asks to \"create a hook\".\nversion: 0.1.0\n---\n"
           "# Hooks\nbody\n")  # fmt: skip
    _skill(root, "My Tool Kit", "---\nname: My Tool Kit\ndescription: d\n---\nx\n")
    found = discover(ws, home, user)
    assert found.notices == []
    skill = found.get("hook-development")
    assert skill is not None and skill.label == "Hook Development"
    assert found.get("my-tool-kit") is not None  # a folder name with spaces: its slug
    index = skill_index(found.skills)
    assert '- hook-development — This skill should be used when the user asks to "create' in index


def test_render_fills_the_folder_and_arguments_and_names_the_files(
    roots: tuple[Path, Path, Path],
) -> None:
    ws, home, user = roots
    body = (
        "---\nname: forms\ndescription: d\n---\nRead ${CLAUDE_SKILL_DIR}/forms.md, then run "
        "`python ${CLAUDE_SKILL_DIR}/scripts/check.py $ARGUMENTS[0]` for $ARGUMENTS.\n"
        "Shell examples keep their `$1`.\n"
    )
    d = _skill(ws / ".claude" / "skills", "forms", body)
    (d / "forms.md").write_text("f\n")
    (d / "scripts").mkdir()
    (d / "scripts" / "check.py").write_text("pass\n")
    skill = discover(ws, home, user).get("forms")
    assert skill is not None
    text = render_skill(skill, "a.pdf b.pdf")
    assert (
        f"Read {d}/forms.md, then run `python {d}/scripts/check.py a.pdf` for a.pdf b.pdf." in text
    )
    assert "keep their `$1`" in text and "${CLAUDE_SKILL_DIR}" not in text
    assert f'dir="{d}"' in text and f"folder is {d}" in text
    assert "- forms.md" in text and "- scripts/check.py" in text
    assert "ARGUMENTS:" not in text  # the body used them
    plain = _skill(ws / ".claude" / "skills", "plain", "---\ndescription: d\n---\nDo it.\n")
    other = discover(ws, home, user).get("plain")
    assert other is not None and plain.is_dir()
    assert render_skill(other, "now please").endswith("ARGUMENTS: now please\n"
                                                      f"This skill's folder is {plain} (its "
                                                      "scripts run from there); it has no other "
                                                      "files.")  # fmt: skip


def test_claude_invocation_keys(roots: tuple[Path, Path, Path]) -> None:
    ws, home, user = roots
    root = ws / ".claude" / "skills"
    _skill(root, "deploy", "---\ndescription: ship it\ndisable-model-invocation: true\n---\nx\n")
    _skill(root, "lore", "---\ndescription: background\nuser-invocable: false\n---\nx\n")
    found = discover(ws, home, user)
    deploy, lore = found.get("deploy"), found.get("lore")
    assert deploy is not None and lore is not None
    assert deploy.model_disabled and deploy.invocation == "manual" and deploy.user_invocable
    assert not lore.user_invocable and not lore.model_disabled
    index = skill_index(found.skills)
    assert "deploy" not in index and "- lore — background" in index
