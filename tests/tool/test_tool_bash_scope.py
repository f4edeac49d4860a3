"""bash under real bubblewrap: ``additional_write_dirs`` + ``justification`` (CFG-13/14) and
the escape retry (§3.7, §9) — what runs where, what is asked, and what is refused."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reasonix.permission import (
    ApprovalChoice,
    ApprovalRequest,
    EscapeGate,
    ScopeChoice,
    ScopeGate,
    ScopeRequest,
)
from reasonix.permission.sandbox import SandboxSettings
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.bash import TOOL

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="MISSING bubblewrap (bwrap); CI installs it (apt-get install bubblewrap)",
)


class Answers:
    """An approver answering from a list; records every question."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.asked.append(request)
        return self.answers.pop(0)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A writable directory outside the workspace and outside /tmp (so the jail shows EROFS)."""
    path = Path(tempfile.mkdtemp(prefix="rx-scope-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def make_ctx(
    ws: Path,
    scope: Answers | None = None,
    escape: Answers | None = None,
    *,
    protected: list[str] | None = None,
    mode: str = "enforce",
    home: str | None = None,
) -> ToolContext:
    roots: list[Path] = [ws]  # one list, shared by the tools and the sandbox (as boot does)
    sandbox = SandboxSettings(mode=mode, workspace=ws, write_roots=roots, cache_roots=[])
    gate = ScopeGate(roots=[str(ws)], protected=protected or [], approver=scope)
    if home is not None:
        gate.home = home
    return ToolContext(
        workspace=ws,
        cwd=ws,
        write_roots=roots,
        sandbox=sandbox,
        extra={"write_scope": gate, "sandbox_escape": EscapeGate(approver=escape)},
    )


def bash(ctx: ToolContext, command: str, **args: Any) -> ToolResult:
    return TOOL.execute(json.dumps({"command": command, **args}), ctx)


def test_headless_refuses_a_declared_dir_and_names_add_dir(tmp_path: Path, outside: Path) -> None:
    ctx = make_ctx(tmp_path)  # no approver: headless
    res = bash(ctx, f"touch {outside}/x", additional_write_dirs=[str(outside)], justification="j")
    assert res.is_error and "--add-dir" in res.content and "NOT run" in res.content
    assert not (outside / "x").exists()


def test_a_declared_dir_needs_a_justification(tmp_path: Path, outside: Path) -> None:
    scope = Answers()
    res = bash(
        make_ctx(tmp_path, scope), f"touch {outside}/x", additional_write_dirs=[str(outside)]
    )
    assert res.is_error and "justification" in res.content and scope.asked == []
    assert not (outside / "x").exists()


def test_once_binds_the_dir_for_this_command_only(tmp_path: Path, outside: Path) -> None:
    scope = Answers(ScopeChoice.ONCE, ScopeChoice.DENY)
    ctx = make_ctx(tmp_path, scope)
    other = Path(tempfile.mkdtemp(prefix="rx-other-", dir="/var/tmp"))
    try:
        script = f"touch {outside}/a; touch {other}/b; true"
        res = bash(ctx, script, additional_write_dirs=[str(outside)], justification="build output")
        assert not res.is_error, res.content
        assert (outside / "a").exists()  # the approved directory was writable…
        assert not (other / "b").exists()  # …and nothing else outside the roots
    finally:
        shutil.rmtree(other, ignore_errors=True)
    (request,) = scope.asked[:1]
    assert isinstance(request, ScopeRequest) and request.path == str(outside)
    assert "build output" in request.justification and "touch" in request.justification
    blocked = bash(ctx, f"touch {outside}/c")  # not declared again: the jail refuses it
    assert blocked.is_error and not (outside / "c").exists()
    denied = bash(
        ctx, f"touch {outside}/d", additional_write_dirs=[str(outside)], justification="j"
    )
    assert denied.is_error and "declined" in denied.content and not (outside / "d").exists()


def test_a_session_grant_covers_later_commands(tmp_path: Path, outside: Path) -> None:
    scope = Answers(ScopeChoice.SESSION)
    ctx = make_ctx(tmp_path, scope)
    first = bash(ctx, f"touch {outside}/a", additional_write_dirs=[str(outside)], justification="j")
    assert not first.is_error, first.content
    later = bash(ctx, f"touch {outside}/b")  # no declaration, no question: the session grant
    assert not later.is_error, later.content
    assert (outside / "b").exists() and len(scope.asked) == 1
    assert outside in ctx.write_roots  # shared with the file tools


def test_project_persists_through_the_gate(tmp_path: Path, outside: Path) -> None:
    scope = Answers(ScopeChoice.PROJECT)
    ctx = make_ctx(tmp_path, scope)
    saved: list[str] = []
    ctx.extra["write_scope"].persist = saved.append
    res = bash(ctx, f"touch {outside}/a", additional_write_dirs=[str(outside)], justification="j")
    assert not res.is_error and saved == [str(outside)]


def test_a_missing_dir_asks_for_its_nearest_existing_parent(tmp_path: Path, outside: Path) -> None:
    scope = Answers(ScopeChoice.ONCE)
    ctx = make_ctx(tmp_path, scope)
    deep = outside / "build" / "out"
    res = bash(ctx, f"mkdir -p {deep} && touch {deep}/x", additional_write_dirs=[str(deep)],
               justification="artifacts")  # fmt: skip
    assert not res.is_error, res.content
    assert scope.asked[0].path == str(outside) and (deep / "x").exists()


def test_the_protected_set_matches_the_file_tools(tmp_path: Path, outside: Path) -> None:
    state = outside / "state"
    state.mkdir()
    scope = Answers(ScopeChoice.SESSION, ScopeChoice.SESSION)
    ctx = make_ctx(tmp_path, scope, protected=[str(state)], home=str(outside / "home"))
    root = bash(ctx, "true", additional_write_dirs=["/"], justification="j")
    assert root.is_error and "root" in root.content
    guarded = bash(ctx, f"touch {state}/x", additional_write_dirs=[str(state)], justification="j")
    assert guarded.is_error and "never" in guarded.content and not (state / "x").exists()
    assert scope.asked == []  # neither was even asked
    (outside / "home").mkdir()
    warned = bash(ctx, "true", additional_write_dirs=[str(outside)], justification="j")
    assert not warned.is_error and "WARNING" in scope.asked[0].warning  # contains the home dir


def test_a_sandbox_block_offers_the_escape_and_the_retry_runs_unsandboxed(
    tmp_path: Path, outside: Path
) -> None:
    human = Answers(ApprovalChoice.ONCE)
    ctx = make_ctx(tmp_path, escape=human)
    cmd = f"touch {outside}/x"
    blocked = bash(ctx, cmd)
    assert blocked.is_error and "Read-only file system" in blocked.content
    assert "escape_sandbox" in blocked.content and "additional_write_dirs" in blocked.content
    retry = bash(ctx, cmd, escape_sandbox=True, justification="the installer needs it")
    assert not retry.is_error, retry.content
    assert (outside / "x").exists()
    record = retry.metadata["sandbox_escape"]
    assert record == {"command": cmd, "justification": "the installer needs it",
                      "granted": True, "detail": "approved"}  # fmt: skip
    (asked,) = human.asked
    assert isinstance(asked, ApprovalRequest) and asked.fresh
    assert asked.choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    second = bash(ctx, cmd, escape_sandbox=True, justification="again")  # one retry only
    assert second.is_error and second.metadata["sandbox_escape"]["granted"] is False


def test_headless_escape_is_refused_and_recorded(tmp_path: Path, outside: Path) -> None:
    ctx = make_ctx(tmp_path)  # no approver at all
    cmd = f"touch {outside}/x"
    blocked = bash(ctx, cmd)
    assert "headless" in blocked.content
    retry = bash(ctx, cmd, escape_sandbox=True, justification="please")
    assert retry.is_error and "headless" in retry.content and not (outside / "x").exists()
    assert retry.metadata["sandbox_escape"]["granted"] is False
    assert retry.metadata["sandbox_escape"]["detail"] == "headless"


def test_an_escape_for_a_command_that_was_never_blocked_is_refused(tmp_path: Path) -> None:
    human = Answers()
    res = bash(make_ctx(tmp_path, escape=human), "echo hi", escape_sandbox=True, justification="x")
    assert res.is_error and "just blocked" in res.content and human.asked == []


def test_enforce_without_bubblewrap_offers_the_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    real_bash = shutil.which("bash")
    assert real_bash is not None
    (bindir / "bash").symlink_to(real_bash)
    (bindir / "touch").symlink_to(shutil.which("touch") or "/usr/bin/touch")
    monkeypatch.setenv("PATH", str(bindir))  # no bwrap on PATH: enforcement cannot be had
    human = Answers(ApprovalChoice.DENY, ApprovalChoice.ONCE)
    ctx = make_ctx(tmp_path, escape=human)
    cmd = f"touch {tmp_path}/made"
    refused = bash(ctx, cmd)
    assert refused.is_error and "NOT run" in refused.content and "escape_sandbox" in refused.content
    declined = bash(ctx, cmd, escape_sandbox=True, justification="no sandbox on this box")
    assert declined.is_error and "declined" in declined.content and not (tmp_path / "made").exists()
    bash(ctx, cmd)  # blocked again: a new offer
    granted = bash(ctx, cmd, escape_sandbox=True, justification="no sandbox on this box")
    assert not granted.is_error and (tmp_path / "made").exists()


def test_a_deny_matched_command_gets_no_offer(tmp_path: Path, outside: Path) -> None:
    human = Answers()
    ctx = make_ctx(tmp_path, escape=human)
    ctx.extra["sandbox_escape"].denied = lambda command: (
        "matches deny rule" if "touch" in command else ""
    )
    blocked = bash(ctx, f"touch {outside}/x")
    assert blocked.is_error and "escape_sandbox" not in blocked.content
    retry = bash(ctx, f"touch {outside}/x", escape_sandbox=True, justification="j")
    assert retry.is_error and human.asked == [] and not (outside / "x").exists()


def test_ordinary_failures_get_no_offer(tmp_path: Path) -> None:
    res = bash(make_ctx(tmp_path, escape=Answers()), "echo boom >&2; exit 2")
    assert res.is_error and "sandbox" not in res.content
    assert os.path.isdir(tmp_path)
