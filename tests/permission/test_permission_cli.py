"""``reasonix permission check|bash`` through the real CLI entry point."""

from __future__ import annotations

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
