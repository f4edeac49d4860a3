"""The scripted status line in a real terminal (tmux), from the built .pyz (issue 36, item 4).

The user's ``~/.claude/settings.json`` names a ``statusLine`` command, as Claude
Code documents it; the command reads the JSON payload on stdin and its first line
shows in the footer, and again with new figures after a turn. A workspace's
``[ui] status_command`` needs trust; a slow one shows as timed out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, Turn
from tmux_term import Tmux, need_tmux

pytestmark = [pytest.mark.e2e, pytest.mark.interop, pytest.mark.slow]

SCRIPT = (
    "import json, sys\n"
    "p = json.load(sys.stdin)\n"
    "used = 'used' if p['context_window']['total_input_tokens'] else 'fresh'\n"
    "print(f\"SL {p['model']['display_name']} {p['permission_mode']} {used} "
    "{p['session_id'][:4]}\")\n"
)


@pytest.fixture(autouse=True)
def _tmux() -> None:
    need_tmux()


def _footer(term: Tmux) -> str:
    """The screen's last row (the footer): the capture ends with a newline."""
    return [row for row in term.rows() if row.strip()][-1]


def _start(pyz: Path, ws: Path, tmp_path: Path, env_extra: dict[str, str] | None = None) -> Tmux:
    env = {**clean_env(tmp_path, source_tree=False), "LANG": "C.UTF-8", **(env_extra or {})}
    return Tmux([sys.executable, str(pyz)], ws, env, tmp_path, 120, 24)


def test_the_users_claude_status_line_shows_in_the_footer_and_follows_the_turn(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    script = tmp_path / "statusline.py"
    script.write_text(SCRIPT)
    claude = tmp_path / ".claude"  # HOME is tmp_path (clean_env)
    claude.mkdir()
    command = f"{sys.executable} {script}"
    (claude / "settings.json").write_text(
        json.dumps({"statusLine": {"type": "command", "command": command}})
    )
    with FakeServer("openai", [Turn.text_only("hello from the fake")]) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            screen = term.wait_for("SL fake-model ask fresh")
            footer = _footer(term)
            assert "SL fake-model ask fresh" in footer
            term.type("hi")
            term.keys("Enter")
            term.wait_for("hello from the fake")
            term.wait_for("SL fake-model ask used")
            assert "SL fake-model ask used" in _footer(term)
            term.keys("BTab")  # the mode cycle: the command hears of it
            term.wait_for("SL fake-model auto used")
            assert screen  # the first frame came before
        finally:
            term.close()


def test_a_slow_workspace_command_shows_as_timed_out(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", [Turn.text_only("x")]) as srv:
        write_project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as f:
            f.write('\n[ui]\nstatus_command = "sleep 10"\n')
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")  # the view is up and answers while the command sleeps
            term.wait_for("status: timed out", timeout=15)
        finally:
            term.close()
