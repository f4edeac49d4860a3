"""Write-scope expansion: once/session/project/deny, headless --add-dir, never / or state."""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.permission.scope import ScopeChoice, ScopeGate, ScopeRequest


class Answer:
    def __init__(self, choice: ScopeChoice) -> None:
        self.choice = choice
        self.seen: list[ScopeRequest] = []

    def __call__(self, request: ScopeRequest) -> ScopeChoice:
        self.seen.append(request)
        return self.choice


def _dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws, other, state = tmp_path / "ws", tmp_path / "other", tmp_path / "state"
    for d in (ws, other, state):
        d.mkdir()
    return ws, other, state


def test_headless_fails_closed_naming_add_dir(tmp_path: Path) -> None:
    ws, other, _ = _dirs(tmp_path)
    gate = ScopeGate([str(ws)])
    assert gate.request(str(ws / "sub"), "x").allowed
    out = gate.request(str(other), "build output")
    assert not out.allowed
    assert f"--add-dir {os.path.realpath(other)}" in out.message
    assert "[sandbox].allow_write" in out.message


def test_root_and_state_dirs_can_never_be_granted(tmp_path: Path) -> None:
    ws, _, state = _dirs(tmp_path)
    answer = Answer(ScopeChoice.SESSION)
    gate = ScopeGate([str(ws)], protected=[str(state)], approver=answer)
    assert not gate.request("/", "everything").allowed
    assert not gate.request(str(state / "sessions"), "x").allowed
    assert answer.seen == []


def test_justification_is_required(tmp_path: Path) -> None:
    ws, other, _ = _dirs(tmp_path)
    gate = ScopeGate([str(ws)], approver=Answer(ScopeChoice.ONCE))
    out = gate.request(str(other), "  ")
    assert not out.allowed and "justification" in out.message


def test_choices_once_session_project_deny(tmp_path: Path) -> None:
    ws, other, _ = _dirs(tmp_path)
    saved: list[str] = []
    real_other = os.path.realpath(other)
    once = ScopeGate([str(ws)], approver=Answer(ScopeChoice.ONCE), persist=saved.append)
    assert once.request(str(other), "x").allowed and not once.within(str(other))
    session = ScopeGate([str(ws)], approver=Answer(ScopeChoice.SESSION), persist=saved.append)
    assert session.request(str(other), "x").allowed and session.within(str(other / "f"))
    assert saved == []
    project = ScopeGate([str(ws)], approver=Answer(ScopeChoice.PROJECT), persist=saved.append)
    assert project.request(str(other), "x").path == real_other
    assert saved == [real_other]
    deny = ScopeGate([str(ws)], approver=Answer(ScopeChoice.DENY))
    assert not deny.request(str(other), "x").allowed


def test_home_needs_a_strong_warning(tmp_path: Path) -> None:
    ws, _, _ = _dirs(tmp_path)
    answer = Answer(ScopeChoice.ONCE)
    gate = ScopeGate([str(ws)], approver=answer, home=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert gate.request(str(tmp_path / "home"), "dotfiles").allowed
    assert answer.seen[0].warning.startswith("WARNING")
    assert gate.request(str(tmp_path), "parent of home").allowed
    assert answer.seen[1].warning


def test_symlink_is_compared_by_its_target(tmp_path: Path) -> None:
    ws, other, _ = _dirs(tmp_path)
    (ws / "link").symlink_to(other)
    gate = ScopeGate([str(ws)])
    assert not gate.within(str(ws / "link" / "f"))
    assert not gate.request(str(ws / "link"), "x").allowed


def test_qa_nul_byte_in_a_requested_dir_is_refused_not_raised(tmp_path: Path) -> None:
    gate = ScopeGate(roots=[str(tmp_path)], approver=lambda req: ScopeChoice.SESSION)
    outcome = gate.request(str(tmp_path) + "/x\x00y", "build output")
    assert not outcome.allowed and "not a valid path" in outcome.message
    assert not gate.within("/tmp/\x00")
