"""``reasonix replay`` on the built .pyz: a recorded read → edit → test task replays
cleanly, and a new deny rule shows up as a divergence at the test step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn


def _rx(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(pyz), *args], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.e2e
def test_replay_reports_no_divergence_then_the_new_deny_rule(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    edit = json.dumps({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    test = json.dumps({"command": "python3 test_calc.py"})
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]),
        Turn.tools([ToolSpec("edit_file", edit)]),
        Turn.tools([ToolSpec("bash", test)]),
        Turn.text_only("Fixed add(); the test passes."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (ws / "test_calc.py").write_text(
            "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('ok in 0.01s')\n"
        )
        done = _rx(pyz, ws, env, "run", "--yolo", "--json", "fix add")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout)["session_id"]
        requests = len(srv.requests)
    assert (ws / "calc.py").read_text().endswith("a + b\n")

    clean = _rx(pyz, ws, env, "replay", session, "--json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    report = json.loads(clean.stdout)
    assert report["divergences"] == [] and report["tool_calls"] == 3
    assert len(srv.requests) == requests  # no network: every reply came from the recording
    assert (ws / "calc.py").read_text().endswith("a + b\n")  # the real workspace is untouched

    toml = (ws / "reasonix.toml").read_text()
    (ws / "reasonix.toml").write_text(toml + '\n[permissions]\ndeny = ["Bash(python3:*)"]\n')
    changed = _rx(pyz, ws, env, "replay", session)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "bash: denied" in changed.stdout and "python3" in changed.stdout
    assert "1 divergence(s)" in changed.stdout
