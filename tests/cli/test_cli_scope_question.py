"""The chat's write-scope question maps the four approval answers onto scope choices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reasonix.boot.permissions import scope_gate as _scope_gate
from reasonix.permission import ApprovalChoice, ApprovalRequest


@pytest.mark.parametrize(
    ("answer", "allowed", "kept", "saved"),
    [
        (ApprovalChoice.ONCE, True, False, False),
        (ApprovalChoice.SESSION, True, True, False),
        (ApprovalChoice.ALWAYS, True, True, True),
        (ApprovalChoice.DENY, False, False, False),
        (None, False, False, False),  # nobody answered
    ],
)
def test_answers_map_to_scope_choices(
    tmp_path: Path, answer: Any, allowed: bool, kept: bool, saved: bool
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Any:
        asked.append(request)
        return answer

    gate = _scope_gate([ws], ws, approver)  # type: ignore[arg-type]
    outcome = gate.request(str(outside), "a file tool needs to write out/x")
    assert outcome.allowed is allowed
    assert gate.within(str(outside)) is kept
    toml = ws / "reasonix.toml"
    assert (toml.is_file() and str(outside.resolve()) in toml.read_text()) is saved
    assert asked[0].suggested_rule.endswith(str(outside.resolve()))


def test_headless_gate_never_asks(tmp_path: Path) -> None:
    gate = _scope_gate([tmp_path], tmp_path, None)
    outcome = gate.request(str(tmp_path.parent / "elsewhere"), "why")
    assert not outcome.allowed and "--add-dir" in outcome.message
