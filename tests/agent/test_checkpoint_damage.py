"""A damaged checkpoint store is found at the turn it fails in: one notice, checkpoints off
for the rest of the session; `rewind --list` lists every turn it still can."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_scripted import ScriptedProvider, calls, text

from reasonix.agent.checkpoints import CheckpointStore
from reasonix.agent.events import Notice
from reasonix.agent.loop import Agent
from reasonix.agent.rewind import rewind
from reasonix.agent.session import Session
from reasonix.agent.turnrecorder import TurnRecorder
from reasonix.cancel import Cancel
from reasonix.cli.main import main
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool


def _writing_turn(rec: TurnRecorder, ws: Path, number: int) -> None:
    rec.begin("s", 0, f"turn {number}")
    rec.tools_starting()
    rec.before_write()
    (ws / "a.txt").write_text(f"turn {number}\n")
    rec.tools_done()
    rec.end()
    rec.store.settle()


def _garbage(path: Path) -> None:
    path.write_text("not what git wrote\n")


def _into_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _objects_into_file(git_dir: Path) -> None:
    shutil.rmtree(git_dir / "objects")
    (git_dir / "objects").write_text("")


DAMAGE: dict[str, Callable[[CheckpointStore], None]] = {
    "HEAD": lambda store: _garbage(store.git_dir / "HEAD"),  # no write of ours reads it
    "config": lambda store: _garbage(store.git_dir / "config"),
    "objects": lambda store: _objects_into_file(store.git_dir),
    "log": lambda store: _into_directory(store.log_path),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_store_is_one_notice_and_checkpoints_go_off(tmp_path: Path, damage: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("start\n")
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    _writing_turn(rec, ws, 1)
    assert rec.notices == [] and store.turns("s")[0].after
    DAMAGE[damage](store)

    _writing_turn(rec, ws, 2)  # the turn it breaks in: noticed by its end at the latest
    assert len(rec.notices) == 1, rec.notices
    assert rec.notices[0].startswith("checkpoints are off for the rest of this session")
    assert str(store.root) in rec.notices[0]
    rec.notices.clear()

    for number in (3, 4):  # off: no snapshot is tried again, nothing more is said
        _writing_turn(rec, ws, number)
        assert rec.notices == []
    if damage != "log":
        assert [t.number for t in store.turns("s")] == [1, 2]  # nothing logged once off


def test_the_notice_reaches_the_user_as_an_event(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    obj: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}

    def write(args: dict[str, Any], ctx: ToolContext) -> str:
        (ws / "a.txt").write_text(args.get("x", ""))
        return "written"

    registry = Registry()
    registry.add(FunctionTool("write", "write a.txt", obj, write, read_only=False))
    steps = [calls(("write", '{"x":"one"}')), text("ok"), calls(("write", '{"x":"two"}')),
             text("ok"), text("hello"), calls(("write", '{"x":"three"}')), text("ok")]  # fmt: skip
    provider = ScriptedProvider({"steps": steps})
    session = Session.create(ws)
    store = CheckpointStore(ws)
    ctx = ToolContext(workspace=ws)
    ctx.extra["checkpoints"] = TurnRecorder(store)
    agent = Agent(provider, registry, session, model="m", system="sys", tool_ctx=ctx)

    def notices(prompt: str) -> list[str]:
        events = list(agent.run(prompt, Cancel()))
        return [e.text for e in events if isinstance(e, Notice) and e.kind == "checkpoint"]

    try:
        assert notices("write one") == []
        store.settle()  # its end is recorded on a thread: damaged after that
        _garbage(store.git_dir / "HEAD")
        assert notices("write two") == []  # its end is recorded after the answer ...
        said = notices("just talk")  # ... so the next turn starts with the notice
        assert len(said) == 1 and "checkpoints are off" in said[0]
        assert notices("write three") == []
        assert (ws / "a.txt").read_text() == "three"
    finally:
        session.close()
    assert [t.number for t in store.turns(session.id) if t.before] == [1, 2]


def test_rewind_list_marks_an_unreadable_turn_and_lists_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("start\n")
    session = Session.create(ws)
    store = CheckpointStore(ws)
    rec = TurnRecorder(store)
    for number in (1, 2):
        rec.begin(session.id, 0, f"turn {number}")
        rec.before_write()
        (ws / "a.txt").write_text(f"turn {number}\n")
        (ws / f"new{number}.txt").write_text("new\n")
        rec.end()
    store.settle()
    session.close()
    first = store.turns(session.id)[0]
    obj = store.git("rev-parse", f"{first.before}^{{tree}}", work_tree=False).decode().strip()
    (store.git_dir / "objects" / obj[:2] / obj[2:]).unlink()  # turn 1's "before" tree is gone

    args = ["rewind", "--list", "--dir", str(ws), "--session", session.id]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["turns"]
    assert [(r["turn"], r["available"]) for r in rows] == [(1, False), (2, True)]
    assert rows[0]["error"] and rows[0]["files"] == []
    assert rows[1]["files"] == ["a.txt", "new2.txt"]
    assert main(args) == 0
    out = capsys.readouterr()
    assert "checkpoint unavailable" in out.out and "1 file(s)" not in out.out
    assert "2 file(s) changed" in out.out and "turn 1:" in out.err
    # turn 2's checkpoints are whole: rewinding it still works
    result = rewind(store, session.path, 2, "code")
    assert (ws / "a.txt").read_text() == "turn 1\n" and result.removed == ["new2.txt"]
