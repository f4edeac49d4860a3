"""`reasonix.pyz run` with hooks in Claude Code's shapes (issue 35, Deliver 7).

A project's ``.claude/settings.json`` runs a bash command validator (PreToolUse,
exit 2 with reasons) and a ralph-style Stop hook that parses ``transcript_path``
(the last ``"role":"assistant"`` line, its text blocks) and loops until the model
writes the completion promise; a recorder hook reads ``tool_use_id`` and
``permission_mode``. The hook scripts are the ones of tests/agent/claude_hooks
(written for these tests in the shapes of Anthropic's examples), copied into the
project and named through ``$CLAUDE_PROJECT_DIR`` as Claude's docs show.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

HOOKS = Path(__file__).resolve().parents[1] / "agent" / "claude_hooks"


def _py(code: str) -> str:
    return f"{sys.executable} -c {json.dumps(code)}"


@pytest.mark.e2e
def test_claude_shaped_hooks_validate_bash_and_loop_on_the_transcript(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    (ws / ".claude" / "hooks").mkdir(parents=True)
    env = clean_env(tmp_path, source_tree=False)
    env["FAKE_PROVIDER_KEY"] = "sk-e2e-claude-hooks"
    for name in ("validate_bash.py", "loop_stop.sh"):
        shutil.copy(HOOKS / name, ws / ".claude" / "hooks" / name)
    seen = ws / "pre-tool.jsonl"  # inside the workspace: hooks run in the bash sandbox
    record = f"import sys; open({str(seen)!r}, 'a').write(sys.stdin.read().strip() + '\\n')"
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": _py(record)},
            {"type": "command",
             "command": f'{sys.executable} "$CLAUDE_PROJECT_DIR"/.claude/hooks/validate_bash.py'},
        ]}],
        "Stop": [{"hooks": [
            {"type": "command", "command": 'sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/loop_stop.sh'},
        ]}],
    }  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (ws / ".claude" / "loop.local.md").write_text(
        "---\niteration: 1\nmax_iterations: 0\ncompletion_promise: SHIPPED\n---\n"
        "Finish the release notes.\n"
    )
    script = [
        Turn.tools([ToolSpec("bash", '{"command": "grep -rn TODO ."}', id="toolu_e2e_01")]),
        Turn.text_only("the notes are half done"),
        Turn.text_only("all written <promise>SHIPPED</promise>"),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        done = subprocess.run(
            [sys.executable, str(pyz), "run", "--output-format", "json", "write release notes"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert len(srv.requests) == 3
        blocked = [m["content"] for m in srv.requests[1].json["messages"] if m["role"] == "tool"]
        again = [m["content"] for m in srv.requests[2].json["messages"] if m["role"] == "user"]
    assert blocked[0].startswith("blocked: bash was not run (PreToolUse hook:")
    assert "Use 'rg' (ripgrep) instead of 'grep'" in blocked[0]
    assert again[-1] == "[Stop hook] Finish the release notes."
    assert "all written" in result["result"]
    assert result["warnings"] == ["Stop hook: loop iteration 2"]  # its systemMessage, only
    assert not (ws / ".claude" / "loop.local.md").exists()  # the promise ended the loop
    (payload,) = [json.loads(line) for line in seen.read_text().splitlines()]
    assert payload["tool_use_id"] == "toolu_e2e_01" and payload["tool_name"] == "Bash"
    assert payload["permission_mode"] == "default"
    assert Path(payload["transcript_path"]).name.endswith(".jsonl")
