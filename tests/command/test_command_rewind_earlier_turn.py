"""``/rewind`` to an earlier turn undoes that turn and every later one, and removes the
files the agent created in them (issue 34, item 7: both survived a deliberate break).

Real parts: the loopback fake provider, the real runtime with its checkpoint store
(git), the real command layer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.cancel import Cancel


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _edit(path: str, old: str, new: str) -> ToolSpec:
    return ToolSpec("edit_file", json.dumps({"path": path, "old_string": old, "new_string": new}))


def _write(path: str, content: str) -> ToolSpec:
    return ToolSpec("write_file", json.dumps({"path": path, "content": content}))


def test_rewind_to_the_first_of_two_editing_turns_undoes_both(ws: Path) -> None:
    script = [
        Turn.tools([_edit("a.txt", "version 0", "version 1"), _write("made-1.txt", "one\n")]),
        Turn.text_only("first edit done"),
        Turn.tools([_edit("a.txt", "version 1", "version 2"), _edit("b.txt", "b 0", "b 1")]),
        Turn.tools([_write("deep/made-2.txt", "two\n")]),
        Turn.text_only("second edit done"),
    ]
    with FakeServer("openai", script) as srv:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/fake-model"\n'
            f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{srv.url}"\n'
            'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        )
        (ws / "a.txt").write_text("version 0\n")
        (ws / "b.txt").write_text("b 0\n")
        (ws / "kept.txt").write_text("never touched\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, yolo=True, interactive=True))
        try:
            list(rt.runner.run("first change", Cancel()))
            list(rt.runner.run("second change", Cancel()))
            assert (ws / "a.txt").read_text() == "version 2\n"  # both turns edited a.txt
            assert (ws / "b.txt").read_text() == "b 1\n"  # only the later turn edited b.txt
            assert (ws / "made-1.txt").exists() and (ws / "deep" / "made-2.txt").exists()

            text = build_commands(rt).run("/rewind 1 code").text
        finally:
            rt.close()
    # back to before turn 1: the state the first turn started from, not the second's
    assert (ws / "a.txt").read_text() == "version 0\n"
    assert (ws / "b.txt").read_text() == "b 0\n"
    # files the agent created in the undone turns are gone again
    assert not (ws / "made-1.txt").exists()
    assert not (ws / "deep" / "made-2.txt").exists()
    assert (ws / "kept.txt").read_text() == "never touched\n"
    assert "restored 2 file(s), removed 2" in text, text
    left = sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file())
    assert left == ["a.txt", "b.txt", "kept.txt", "reasonix.toml"]
