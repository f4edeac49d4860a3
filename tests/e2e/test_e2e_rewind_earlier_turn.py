"""`reasonix.pyz rewind --to 1` after two editing turns: both are undone (one file was
edited in each), and the files the agent created are removed (issue 34, item 7)."""

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


def _edit(path: str, old: str, new: str) -> ToolSpec:
    return ToolSpec("edit_file", json.dumps({"path": path, "old_string": old, "new_string": new}))


def _write(path: str, content: str) -> ToolSpec:
    return ToolSpec("write_file", json.dumps({"path": path, "content": content}))


@pytest.mark.e2e
def test_rewind_to_the_first_turn_undoes_both_and_removes_created_files(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    script = [
        Turn.tools([_edit("a.txt", "version 0", "version 1"), _write("made-1.txt", "one\n")]),
        Turn.text_only("first"),
        Turn.tools(
            [
                _edit("a.txt", "version 1", "version 2"),
                _edit("b.txt", "b 0", "b 1"),
                _write("deep/made-2.txt", "two\n"),
            ]
        ),
        Turn.text_only("second"),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "a.txt").write_text("version 0\n")
        (ws / "b.txt").write_text("b 0\n")
        first = _rx(pyz, ws, env, "run", "--yolo", "first change")
        assert first.returncode == 0, first.stderr
        second = _rx(pyz, ws, env, "run", "-c", "--yolo", "second change")
        assert second.returncode == 0, second.stderr
    assert (ws / "a.txt").read_text() == "version 2\n" and (ws / "b.txt").read_text() == "b 1\n"

    back = _rx(pyz, ws, env, "rewind", "--to", "1", "--code-only", "--json")
    assert back.returncode == 0, back.stderr
    report = json.loads(back.stdout)
    assert sorted(report["restored"]) == ["a.txt", "b.txt"]
    assert sorted(report["removed"]) == ["deep/made-2.txt", "made-1.txt"]
    assert (ws / "a.txt").read_text() == "version 0\n"  # before turn 1, not before turn 2
    assert (ws / "b.txt").read_text() == "b 0\n"
    assert not (ws / "made-1.txt").exists() and not (ws / "deep" / "made-2.txt").exists()
