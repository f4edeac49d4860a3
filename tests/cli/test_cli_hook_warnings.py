"""``reasonix run``: a failing hook reaches the user in text mode and in JSON ``warnings``.

Real parts: the CLI in a subprocess, the loopback fake provider, real hook
commands from the user's own config (always trusted), run by /bin/sh.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakes import FakeServer, Turn

ROOT = Path(__file__).resolve().parents[2]

USER_HOOKS = """
[[hooks.UserPromptSubmit]]
hooks = [{ type = "command", command = "echo 'formatter crashed' >&2; exit 3" }]

[[hooks.PreToolUse]]
matcher = "Bash(rm"
hooks = [{ type = "command", command = "./guard.sh" }]
"""


def _setup(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws, home = tmp_path / "repo", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(USER_HOOKS)
    (ws / "reasonix.toml").write_text(
        'default_model = "local/m"\n[sandbox]\nbash = "off"\n'
        f'[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "{url}/v1"\nmodels = ["m"]\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), REASONIX_HOME=str(home))
    return ws, env


def _run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix", "run", *args], cwd=ws, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _check(note: str) -> None:
    assert "UserPromptSubmit hook" in note and "exit 3: formatter crashed" in note
    assert "config.toml" in note


def test_json_warnings_name_the_failing_hook_and_the_bad_matcher(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("fine")]) as srv:
        ws, env = _setup(tmp_path, srv.url)
        out = _run(ws, env, "--json", "hello")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["result"] == "fine"
    failed = [w for w in result["warnings"] if "failed" in w]
    assert len(failed) == 1
    _check(failed[0])
    bad = [w for w in result["warnings"] if "not a valid regular expression" in w]
    assert len(bad) == 1 and "'Bash(rm'" in bad[0] and "'./guard.sh'" in bad[0]


def test_text_mode_writes_the_hook_failure_to_stderr(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("fine")]) as srv:
        ws, env = _setup(tmp_path, srv.url)
        out = _run(ws, env, "hello")
    assert out.returncode == 0, out.stderr
    assert "fine" in out.stdout
    lines = [ln for ln in out.stderr.splitlines() if "formatter crashed" in ln]
    assert len(lines) == 1 and lines[0].startswith("reasonix: warning: ")
    _check(lines[0])
    assert "not a valid regular expression" in out.stderr
