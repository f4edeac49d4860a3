"""``reasonix permission check|bash`` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.cli.main import main


def test_check_prints_decision_and_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["permission", "check", "bash", '{"command":"rm -rf x"}', "--headless"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0] == "ask: bash segment 'rm -rf x' matches no allow rule; needs approval (mode ask)"
    assert out[1] == "suggested rule: Bash(rm -rf x)"
    assert out[2].startswith("headless: denied: needs approval; rerun with --auto")


def test_check_with_rules_and_mode(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["permission", "check", "bash", '{"command":"git status -s"}']
    assert main([*argv, "--allow", "Bash(git status:*)"]) == 0
    assert capsys.readouterr().out.startswith("allow: bash segment 'git status -s' matches")
    assert main([*argv, "--deny", "Bash(git:*)", "--mode", "yolo"]) == 0
    assert capsys.readouterr().out == "deny: matches deny rule 'Bash(git:*)'\n"
    assert main(["permission", "check", "read_file", '{"path":"x"}', "--read-only"]) == 0
    assert capsys.readouterr().out == "allow: read-only tool\n"


def test_check_reads_project_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path
    (ws / "reasonix.toml").write_text('[permissions]\nmode = "auto"\ndeny = ["Bash(curl:*)"]\n')
    args = ["permission", "check", "bash", '{"command":"curl x"}', "--config"]
    assert main([*args, "--workspace", str(ws)]) == 0
    assert capsys.readouterr().out.startswith("deny: matches deny rule 'Bash(curl:*)'")


def test_bad_input_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["permission", "check", "bash", "not json"]) == 2
    assert "ARGS_JSON" in capsys.readouterr().err
    assert main(["permission", "check", "edit_file", "{}", "--allow", "Edit()"]) == 2
    assert "Edit()" in capsys.readouterr().err


def test_bash_explains_segments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["permission", "bash", "timeout 5 make | tee log"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "class: nested"
    assert out[2] == "  static: 'make' (via timeout)"
    assert out[3] == "  static: 'tee log'"


def test_list_shows_every_rule_with_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: ``permission list`` names where each rule came from, deny first, and marks
    what is left out. The settings file is in Claude Code's documented shape
    (code.claude.com/docs/en/settings, ``permissions``)."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    claude = ws / ".claude" / "settings.json"
    claude.write_text(
        '{\n  "permissions": {\n    "allow": [\n      "Edit(/src/**)",\n'
        '      "mcp__github__get_*"\n    ],\n    "deny": ["WebFetch"],\n'
        '    "defaultMode": "acceptEdits"\n  }\n}\n'
    )
    (ws / "reasonix.toml").write_text('[permissions]\nask = ["Bash(git push:*)"]\n')
    assert main(["permission", "list", "--dir", str(ws)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"mode: acceptEdits (from {claude})"
    assert out[1] == f"deny  WebFetch  {claude}:7"
    assert out[2] == f"ask   Bash(git push:*)  {ws / 'reasonix.toml'}:2"
    assert out[3] == f"allow Edit({ws}/src/**)  (written Edit(/src/**))  {claude}:4"
    assert out[4].startswith(f"allow mcp__github__get_*  {claude}:5  [left out: not a rule")
    assert main(["permission", "list", "--dir", str(ws), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mode"] == {"value": "acceptEdits", "source": str(claude)}
    assert [(r["kind"], r["line"], r["in_force"]) for r in doc["rules"]] == [
        ("deny", 7, True), ("ask", 2, True), ("allow", 4, True), ("allow", 5, False),
    ]  # fmt: skip


def test_list_marks_what_an_untrusted_workspace_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    untrusted: None,
) -> None:  # fmt: skip
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.local.json").write_text(
        '{"permissions": {"allow": ["Bash(uv run pytest:*)"], "deny": ["Read(./.env)"]}}'
    )
    assert main(["permission", "list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "deny  Read(./.env)" in out and "deny  Read(./.env)  " + str(tmp_path) in out
    line = next(x for x in out.splitlines() if "uv run pytest" in x)
    assert line.endswith("[left out: untrusted workspace]")
