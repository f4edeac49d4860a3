"""Checkpoints and ``reasonix rewind`` on the built .pyz.

A scripted turn edits two files with the edit tools and a third with
``sed -i`` through bash; rewinding to before it restores all three byte for
byte, leaves an untouched file (and its mtime) alone and cuts the
conversation; undoing the rewind brings the changes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

CRLF = b"line one\r\nline two\r\n"


def _rx(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(pyz), *args], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.e2e
def test_rewind_restores_three_files_and_undo_brings_them_back(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    edit = json.dumps({"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"})
    write = json.dumps({"path": "b.bin.txt", "content": "replaced\n"})
    sed = json.dumps({"command": "sed -i 's/two/2/' c.txt"})
    script = [
        Turn.text_only("Hello."),
        Turn.tools([ToolSpec("edit_file", edit), ToolSpec("write_file", write)]),
        Turn.tools([ToolSpec("bash", sed)]),
        Turn.text_only("Edited three files."),
        Turn.text_only("Back before the edits."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "reasonix.toml").write_text((ws / "reasonix.toml").read_text()
                                          + '[sandbox]\nbash = "off"\n')  # fmt: skip
        (ws / "a.txt").write_bytes(b"alpha\nbeta\n")
        (ws / "b.bin.txt").write_bytes(b"\x00\x01 not text \xff\n")
        (ws / "c.txt").write_bytes(CRLF)
        (ws / "untouched.txt").write_text("same\n")
        os.utime(ws / "untouched.txt", (1_000_000_000, 1_000_000_000))
        before = {n: (ws / n).read_bytes() for n in ("a.txt", "b.bin.txt", "c.txt")}
        assert _rx(pyz, ws, env, "run", "say hello").returncode == 0
        done = _rx(pyz, ws, env, "run", "-c", "--yolo", "edit the three files")
        assert done.returncode == 0, done.stderr
        after = {n: (ws / n).read_bytes() for n in before}
        assert after["a.txt"] == b"ALPHA\nbeta\n" and after["c.txt"] == b"line one\r\nline 2\r\n"

        listed = json.loads(_rx(pyz, ws, env, "rewind", "--list", "--json").stdout)
        assert [t["turn"] for t in listed["turns"]] == [1, 2]
        assert sorted(listed["turns"][1]["files"]) == ["a.txt", "b.bin.txt", "c.txt"]
        assert listed["turns"][0]["files"] == []

        back = _rx(pyz, ws, env, "rewind", "--to", "2", "--json")
        assert back.returncode == 0, back.stderr
        report = json.loads(back.stdout)
        assert sorted(report["restored"]) == ["a.txt", "b.bin.txt", "c.txt"]
        assert {n: (ws / n).read_bytes() for n in before} == before  # byte for byte
        assert (ws / "untouched.txt").stat().st_mtime == 1_000_000_000
        assert report["warnings"] == []

        # the conversation is cut: `-c` continues without the edit turn
        assert _rx(pyz, ws, env, "run", "-c", "where are we?").returncode == 0
        users = [m["content"] for m in srv.requests[-1].json["messages"] if m["role"] == "user"]
        assert any("say hello" in u for u in users)
        assert not any("edit the three files" in u for u in users)

        undone = _rx(pyz, ws, env, "rewind", "--undo", "--json")
        assert undone.returncode == 0, undone.stderr
        assert {n: (ws / n).read_bytes() for n in after} == after
        assert json.loads(undone.stdout)["session"] == listed["session"]


@pytest.mark.e2e
def test_rewind_warns_about_outside_changes_and_refuses_unknown_turns(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    write = json.dumps({"path": "x.txt", "content": "by the agent\n"})
    with FakeServer("openai", [Turn.tools([ToolSpec("write_file", write)]),
                               Turn.text_only("ok")]) as srv:  # fmt: skip
        write_project(ws, srv.url)
        (ws / "x.txt").write_text("original\n")
        assert _rx(pyz, ws, env, "run", "--yolo", "write x").returncode == 0
    (ws / "x.txt").write_text("edited by hand afterwards\n")
    out = _rx(pyz, ws, env, "rewind", "--to", "1", "--code-only")
    assert out.returncode == 0 and "changed outside the agent" in out.stdout
    assert (ws / "x.txt").read_text() == "original\n"
    bad = _rx(pyz, ws, env, "rewind", "--to", "9")
    assert bad.returncode == 2 and "no turn 9" in bad.stderr


@pytest.mark.e2e
def test_rewind_puts_back_symlinks_and_changed_types(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    change = "rm link && printf 'now a file\\n' > link && rm -r d && ln -s real d"
    bash = json.dumps({"command": change})
    with FakeServer("openai", [Turn.tools([ToolSpec("bash", bash)]),
                               Turn.text_only("done")]) as srv:  # fmt: skip
        write_project(ws, srv.url)
        (ws / "reasonix.toml").write_text((ws / "reasonix.toml").read_text()
                                          + '[sandbox]\nbash = "off"\n')  # fmt: skip
        (ws / "real").mkdir()
        (ws / "real" / "inner.txt").write_text("inner\n")
        (ws / "target.txt").write_text("target\n")
        os.symlink("target.txt", ws / "link")
        (ws / "d").mkdir()
        (ws / "d" / "x.txt").write_text("x\n")
        done = _rx(pyz, ws, env, "run", "--yolo", "change the types")
        assert done.returncode == 0, done.stderr
    assert (ws / "d").is_symlink() and not (ws / "link").is_symlink()
    back = _rx(pyz, ws, env, "rewind", "--to", "1", "--code-only", "--json")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout)["warnings"] == []
    assert os.readlink(ws / "link") == "target.txt"
    assert not (ws / "d").is_symlink() and (ws / "d" / "x.txt").read_text() == "x\n"
    assert sorted(os.listdir(ws / "real")) == ["inner.txt"]  # nothing written through d
    assert not [p for p in ws.rglob("*") if ".rewind-" in p.name]
    undone = _rx(pyz, ws, env, "rewind", "--undo", "--json")
    assert undone.returncode == 0, undone.stderr
    assert os.readlink(ws / "d") == "real" and (ws / "link").read_text() == "now a file\n"
