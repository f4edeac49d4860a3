"""``/rewind`` over a real runtime: the picker of turns, the mode picker, the restore, undo."""

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


def test_rewind_picker_restore_and_undo(ws: Path) -> None:
    write = json.dumps({"path": "notes.txt", "content": "changed by the agent\n"})
    script = [Turn.text_only("hi"), Turn.tools([ToolSpec("write_file", write)]),
              Turn.text_only("written")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/fake-model"\n'
            f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{srv.url}"\n'
            'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        )
        (ws / "notes.txt").write_text("original\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, yolo=True, interactive=True))
        try:
            list(rt.runner.run("say hi", Cancel()))
            list(rt.runner.run("change the notes", Cancel()))
            assert (ws / "notes.txt").read_text() == "changed by the agent\n"
            reg = build_commands(rt)
            picked = reg.run("/rewind")
            labels = [p.label for p in picked.picker]
            assert labels[0].startswith("before turn 2: change the notes")
            assert "1 file(s) changed" in picked.picker[0].description
            assert picked.picker_command == "/rewind"
            modes = reg.run(f"/rewind {picked.picker[0].value}")
            assert [m.value for m in modes.picker] == ["2 both", "2 code", "2 conversation",
                                                       "2 fork"]  # fmt: skip
            original = rt.session.id
            text = reg.run("/rewind 2 both").text
            assert "restored 1 file(s)" in text
            assert (ws / "notes.txt").read_text() == "original\n"
            assert rt.session.id != original  # the conversation continues before turn 2
            assert not any("change the notes" in m.content for m in rt.session.messages())
            assert len(srv.requests) == 3  # /rewind itself never reached the model
            assert "undo the last rewind" in [p.label for p in reg.run("/rewind").picker]
            back = reg.run("/rewind undo").text
            assert "restored 1 file(s)" in back and rt.session.id == original
            assert (ws / "notes.txt").read_text() == "changed by the agent\n"
            assert reg.run("/rewind 9 both").error
        finally:
            rt.close()
