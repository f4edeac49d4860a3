"""Files that steer the agent (its config, git hooks) always need a human to edit them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix.permission import Decision, Gate, Policy


@pytest.mark.parametrize("mode", ["auto", "acceptEdits", "ask", "dontAsk"])
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": "reasonix.toml", "content": "[permissions]\nmode='yolo'\n"}),
        ("edit_file", {"path": "./.mcp.json"}),
        ("edit_file", {"path": "sub/../reasonix.toml"}),
        ("write_file", {"path": ".git/hooks/pre-commit"}),
        ("multi_edit", {"path": ".git/config"}),
        ("move_file", {"source_path": "x.toml", "destination_path": "reasonix.toml"}),
    ],
)
def test_protected_files_are_never_auto_allowed(
    tmp_path: Path, mode: str, tool: str, args: dict[str, str]
) -> None:
    policy = Policy(mode, allow=["Edit(**)"], workspace=tmp_path)
    verdict = policy.evaluate(tool, False, args)
    assert verdict.decision is not Decision.ALLOW
    assert not Gate(policy).check(tool, False, args).allowed  # headless: fails closed


def test_a_symlink_to_a_protected_file_is_seen_through(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text("")
    os.symlink(tmp_path / "reasonix.toml", tmp_path / "innocent.txt")
    policy = Policy("auto", workspace=tmp_path)
    assert policy.decide("edit_file", False, {"path": "innocent.txt"}) is Decision.ASK


def test_extra_protected_paths_and_ordinary_files(tmp_path: Path) -> None:
    home_config = tmp_path / "home" / "config.toml"
    policy = Policy("auto", workspace=tmp_path / "ws", protected=[home_config])
    assert policy.decide("write_file", False, {"path": str(home_config)}) is Decision.ASK
    assert policy.decide("write_file", False, {"path": "src/app.py"}) is Decision.ALLOW
    assert policy.decide("read_file", True, {"path": "reasonix.toml"}) is Decision.ALLOW


def test_not_even_yolo_passes_and_deny_rules_keep_their_meaning(tmp_path: Path) -> None:
    """Spec §3.7: YOLO skips ordinary Ask, never a managed-config write."""
    args = {"path": "reasonix.toml"}
    yolo = Policy("bypassPermissions", workspace=tmp_path)
    assert yolo.decide("edit_file", False, args) is Decision.ASK
    assert not Gate(yolo).check("edit_file", False, args).allowed
    denied = Policy("bypassPermissions", deny=["Edit(reasonix.toml)"], workspace=tmp_path)
    assert denied.decide("edit_file", False, args) is Decision.DENY
