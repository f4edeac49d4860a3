"""CFG-13/14: a write outside the roots asks the run's ScopeGate (once/session/project/deny)."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix.permission import ScopeChoice, ScopeGate, ScopeRequest
from reasonix.tool import Registry, ToolContext
from reasonix.tool.builtin import load_all

load_all()
WRITE = Registry.from_builtins(["write_file"]).get("write_file")


def _ctx(ws: Path, gate: ScopeGate) -> ToolContext:
    return ToolContext(workspace=ws, write_roots=[], extra={"write_scope": gate})


def _write(ctx: ToolContext, path: Path) -> str:
    assert WRITE is not None
    result = WRITE.execute(json.dumps({"path": str(path), "content": "x\n"}), ctx)
    return ("ERR " if result.is_error else "OK ") + result.content


def test_headless_refuses_and_names_add_dir(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    text = _write(_ctx(ws, ScopeGate(roots=[str(ws)])), outside / "a.txt")
    assert text.startswith("ERR") and "--add-dir" in text
    assert not (outside / "a.txt").exists()


def test_session_grant_asks_once_and_widens_the_roots(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    asked: list[ScopeRequest] = []

    def approver(request: ScopeRequest) -> ScopeChoice:
        asked.append(request)
        return ScopeChoice.SESSION

    ctx = _ctx(ws, ScopeGate(roots=[str(ws)], approver=approver))
    assert _write(ctx, outside / "a.txt").startswith("OK")
    assert _write(ctx, outside / "sub" / "b.txt").startswith("OK")
    assert [r.path for r in asked] == [str(outside.resolve())]
    assert outside.resolve() in ctx.write_roots  # the bash sandbox shares this list


def test_once_asks_every_time_and_project_persists(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    answers = [ScopeChoice.ONCE, ScopeChoice.PROJECT]
    saved: list[str] = []
    gate = ScopeGate(roots=[str(ws)], approver=lambda r: answers.pop(0), persist=saved.append)
    ctx = _ctx(ws, gate)
    assert _write(ctx, outside / "a.txt").startswith("OK")
    assert _write(ctx, outside / "b.txt").startswith("OK")
    assert answers == [] and saved == [str(outside.resolve())]


def test_deny_and_protected_state_are_refused(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    state.mkdir()
    deny = ScopeGate(roots=[str(ws)], approver=lambda r: ScopeChoice.DENY)
    assert "declined" in _write(_ctx(ws, deny), tmp_path / "x.txt")
    guarded = ScopeGate(
        roots=[str(ws)], protected=[str(state)], approver=lambda r: ScopeChoice.SESSION
    )
    assert "never" in _write(_ctx(ws, guarded), state / "x.txt")
    assert not (state / "x.txt").exists()
