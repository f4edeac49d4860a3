"""Issue 35 items 2 and 3 through the built .pyz: a Claude Code project's ``/commit``.

The command file is written here in the shape of Anthropic's ``commit-commands``
plugin (``commands/commit.md``): ``allowed-tools: Bash(git add:*), …`` in the
frontmatter and ``- Current git status: !`git status``` lines under ``## Context``.
The line chat reads its lines from a pipe; what the model received is read back
from the loopback fake provider's recorded requests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e_task_env import clean_env
from fakes import FakeServer, ToolSpec, Turn

COMMIT = """---
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*), Bash(git branch:*)
description: Create a git commit
---

## Context

- Current git status: !`git status`
- Current branch: !`git branch --show-current`

## Your task

Based on the above changes, create a single git commit.
"""


def _provider(url: str) -> str:
    return (
        'default_model = "fake/fake-model"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )


def _repo(tmp_path: Path, url: str) -> Path:
    ws = tmp_path / "repo"
    (ws / ".claude" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "commit.md").write_text(COMMIT)
    (ws / "notes.txt").write_text("NOTES\n")
    home = tmp_path / "rx"
    home.mkdir()
    # the user's own provider: an untrusted workspace could not declare this one
    (home / "config.toml").write_text(_provider(url))
    env = {**os.environ, "HOME": str(tmp_path)}
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "T"],
                 ["config", "user.email", "t@example.com"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=ws, check=True, env=env)
    return ws


def _user(request: Any) -> str:
    return str([m for m in request.json["messages"] if m["role"] == "user"][-1]["content"])


def _chat(pyz: Path, ws: Path, env: dict[str, str], lines: list[str]) -> Any:
    return subprocess.run(
        [sys.executable, str(pyz), "--plain"], cwd=ws, env=env,
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_commit_command_runs_its_lines_and_pre_approves_its_git_calls(
    pyz: Path, tmp_path: Path
) -> None:
    commit = json.dumps({"command": "git add notes.txt && git commit -q -m 'add notes'"})
    again = json.dumps({"command": "git commit -q --allow-empty -m again"})
    script = [Turn.tools([ToolSpec("bash", commit)]), Turn.text_only("committed"),
              Turn.tools([ToolSpec("bash", again)]), Turn.text_only("not allowed")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        ws = _repo(tmp_path, srv.url)
        env = clean_env(tmp_path, source_tree=False)  # trusted (REASONIX_TRUST_WORKSPACE=1)
        out = _chat(pyz, ws, env, ["/commit", "commit again please", "n", "/exit"])
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    first = _user(requests[0])
    assert '<command-output command="git status">\nOn branch main\n' in first
    assert "notes.txt" in first.split('command="git status">', 1)[1]
    assert '<command-output command="git branch --show-current">\n' in first
    assert "!`" not in first  # every line was replaced by its output
    log = subprocess.run(["git", "log", "--format=%s"], cwd=ws, capture_output=True, text=True)
    assert log.stdout.split() == ["add", "notes"]  # pre-approved: committed without a question
    # the allow rules ended with the command's turn: the next commit was asked and declined
    assert "? allow bash: git commit -q --allow-empty -m again" in out.stdout
    assert out.stdout.count("? allow") == 1
    assert "declined" in str(requests[3].json["messages"][-1]["content"])


def test_untrusted_checkout_lists_and_skips_the_commands_lines(pyz: Path, tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        ws = _repo(tmp_path, srv.url)
        env = clean_env(tmp_path, source_tree=False)
        env.pop("REASONIX_TRUST_WORKSPACE")
        show = subprocess.run(
            [sys.executable, str(pyz), "trust", "--show", "--json"], cwd=ws, env=env,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        out = _chat(pyz, ws, env, ["/commit", "/exit"])
        requests = list(srv.requests)
    assert show.returncode == 0, show.stderr
    items = json.loads(show.stdout)["items"]
    assert [i["kind"] for i in items] == ["command"]
    assert items[0]["text"].startswith("command /commit runs `git status`")
    assert out.returncode == 0, out.stderr
    assert "untrusted workspace: skipped command /commit" in out.stdout
    assert "/commit: 2 shell line(s) not run" in out.stdout
    first = _user(requests[0])
    assert '<command-output command="git status" status="not run">' in first
    assert "On branch" not in first
