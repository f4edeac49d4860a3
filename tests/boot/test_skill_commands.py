"""Issue 35, item 5: skills as Claude Code users have them — typed as ``/name``, listed in
``/help`` and completion, their folder named and reachable, Claude's invocation keys.

Real parts: loopback fakes, runtimes from ``build_runtime``, the command registry. The
skill folders are written here in the shape of Anthropic's skills repository
(``anthropics/skills``: SKILL.md with name/description frontmatter, ``forms.md`` /
``reference.md`` and ``scripts/*.py`` at the top of the folder) and of its plugin-dev
plugin (``name: Hook Development``, a label with spaces, plus ``version``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from subagent_kit import call, calls, first_user, project, run
from subagent_kit import tool_results as results

from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _skill(ws: Path, folder: str, text: str) -> Path:
    d = ws / ".claude" / "skills" / folder
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    return d


def _forms_skill(ws: Path) -> Path:
    d = _skill(
        ws,
        "pdf-forms",
        "---\nname: pdf-forms\ndescription: Fill PDF forms. Use when the user has a PDF form."
        "\nargument-hint: <file.pdf>\n---\n# Filling forms\n\nFirst read "
        "${CLAUDE_SKILL_DIR}/forms.md.\nThen run `python ${CLAUDE_SKILL_DIR}/scripts/fields.py "
        "$ARGUMENTS`.\n",
    )
    (d / "forms.md").write_text("Map each field to a value.\n")
    (d / "scripts").mkdir()
    (d / "scripts" / "fields.py").write_text("print('fields')\n")
    return d


def test_a_skill_typed_as_a_command_becomes_the_turn(ws: Path) -> None:
    d = _forms_skill(ws)
    _skill(ws, "hook-development", "---\nname: Hook Development\ndescription: This skill "
           "should be used when the user asks to \"create a hook\".\nversion: 0.1.0\n---\n"
           "Hooks run on events.\n")  # fmt: skip
    _skill(ws, "lore", "---\ndescription: background only\nuser-invocable: false\n---\nx\n")
    script = [
        calls(call("run_skill", name="pdf-forms", file="forms.md")),
        Turn.text_only("filled"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            reg = build_commands(rt)  # type: ignore[arg-type]
            names = dict(reg.names())
            assert names["/pdf-forms"].startswith("skill: Fill PDF forms")
            assert names["/hook-development"].startswith("skill: Hook Development: This skill")
            assert "/lore" not in names  # user-invocable: false stays off the menu
            listing = reg.run("/help").text
            assert "skills:" in listing and "/pdf-forms" in listing
            assert "<file.pdf> — skill: Fill PDF forms" in listing
            done = [c.text for c in reg.complete("/pdf")]
            assert done == ["/pdf-forms"]
            result = reg.run("/pdf-forms tax.pdf")
            assert not result.error and result.prompt is not None
            run(rt, result.prompt)
        finally:
            rt.close()
    turn = srv.requests[0].json["messages"][-1]["content"]
    assert f"First read {d}/forms.md." in turn
    assert f"`python {d}/scripts/fields.py tax.pdf`" in turn
    assert f"This skill's folder is {d}" in turn and "- scripts/fields.py" in turn
    assert "- pdf-forms — Fill PDF forms" in first_user(srv.requests[0])  # the index too
    assert results(srv.requests[1])[-1] == "Map each field to a value.\n"


def test_the_model_cannot_run_a_user_only_skill(ws: Path) -> None:
    _skill(ws, "deploy", "---\ndescription: Ship to production\n"
           "disable-model-invocation: true\n---\nRun the deploy.\n")  # fmt: skip
    script = [calls(call("run_skill", name="deploy")), Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            reg = build_commands(rt)  # type: ignore[arg-type]
            assert "/deploy" in dict(reg.names())  # the user still types it
            run(rt, "ship it")
        finally:
            rt.close()
    assert "Ship to production" not in first_user(srv.requests[0])  # out of the index
    refused = results(srv.requests[1])[-1]
    assert "run only by the user (/deploy)" in refused and "Run the deploy." not in refused
