"""`reasonix.pyz run` with allow rules, a hook that allows everything, and deny and
ask rules: the deny and the explicit ask still win; the hooks run (SessionStart too)
and never see the provider key (issue 34, item 7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn


def _edit(path: str) -> ToolSpec:
    return ToolSpec(
        "edit_file", json.dumps({"path": path, "old_string": "old", "new_string": "new"})
    )


def _py(code: str) -> str:
    return f"{sys.executable} -c {json.dumps(code)}"


@pytest.mark.e2e
def test_deny_and_ask_rules_beat_allow_rules_and_a_hook_allow(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    env["FAKE_PROVIDER_KEY"] = "sk-e2e-never-in-a-hook-5d1"
    # inside the workspace: hooks run in the bash sandbox, which writes nowhere else
    dump, started = ws / "hook-env.json", ws / "session-start.json"
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    hooks = {
        "PreToolUse": [{"matcher": "", "hooks": [{"command": f"echo '{allow}'"}]}],
        "UserPromptSubmit": [{"hooks": [{"command": _py(
            f"import json, os; json.dump(dict(os.environ), open({str(dump)!r}, 'w'))")}]}],
        "SessionStart": [{"hooks": [{"command": _py(
            f"import sys; open({str(started)!r}, 'w').write(sys.stdin.read())")}]}],
    }  # fmt: skip
    for name in ("secret.txt", "asked.txt", "free.txt"):
        ws.mkdir(exist_ok=True)
        (ws / name).write_text("old\n")
    script = [
        Turn.tools([_edit("secret.txt"), _edit("asked.txt"), _edit("free.txt")]),
        Turn.text_only("tried all three"),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write('\n[permissions]\ndeny = ["Edit(secret.txt)"]\nask = ["Edit(asked.txt)"]\n')
        (ws / ".claude").mkdir()
        (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
        done = subprocess.run(
            [sys.executable, str(pyz), "run", "--allowed-tools", "Edit", "--output-format",
             "json", "edit the three files"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["warnings"] == []  # no hook failed
        results = [m["content"] for m in srv.requests[1].json["messages"] if m["role"] == "tool"]
    assert (ws / "free.txt").read_text() == "new\n"  # the allow rule and the hook let it pass
    assert (ws / "secret.txt").read_text() == "old\n"  # the deny rule wins
    assert (ws / "asked.txt").read_text() == "old\n"  # the explicit ask: no human, refused
    assert "deny rule" in results[0] and results[1].startswith("blocked: edit_file")
    payload = json.loads(started.read_text())
    assert payload["hook_event_name"] == "SessionStart" and payload["source"] == "startup"
    hook_env = json.loads(dump.read_text())
    assert hook_env.get("HOME") == env["HOME"]  # the hook got an environment ...
    assert "FAKE_PROVIDER_KEY" not in hook_env  # ... without the provider key
    assert env["FAKE_PROVIDER_KEY"] not in json.dumps(hook_env)
