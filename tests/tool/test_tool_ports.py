"""ToolPorts: the file tools and bash through a frontend's I/O, with the same checks.

The ports here are small real implementations (an in-memory buffer store, a
terminal that runs the command with subprocess); nothing of the tool layer
is replaced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.cancel import Cancel
from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin import bash, edit_file, multi_edit, read_file, write_file
from reasonix.tool.builtin._preview import file_text, proposed_change
from reasonix.tool.ports import FileChange, TerminalRun, ToolPorts


class Buffers:
    """An editor's view of files: unsaved text wins over the disk."""

    def __init__(self) -> None:
        self.text: dict[Path, str] = {}
        self.reads: list[Path] = []
        self.writes: list[Path] = []

    def read_text(self, path: Path) -> str:
        self.reads.append(path)
        if path in self.text:
            return self.text[path]
        try:
            return path.read_text()
        except FileNotFoundError:
            raise ToolError(f"no such file {path}") from None

    def write_text(self, path: Path, text: str) -> None:
        self.writes.append(path)
        self.text[path] = text


class LocalTerminal:
    """A TerminalPort that runs the command here and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[list[str], dict[str, str], float | None, str]] = []

    def run(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        timeout: float | None,
        cancel: Cancel,
        call_id: str,
    ) -> TerminalRun:
        self.asked.append((argv, env, timeout, call_id))
        try:
            done = subprocess.run(
                argv,
                cwd=cwd,
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as err:
            return TerminalRun(output=str(err.stdout or ""), exit_code=None, timed_out=True)
        return TerminalRun(output=done.stdout + done.stderr, exit_code=done.returncode)


def call(tool: object, ctx: ToolContext, **args: object) -> ToolResult:
    return tool.execute(json.dumps(args), ctx)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[ToolContext, Buffers, list[tuple[str, FileChange]]]:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    buffers = Buffers()
    changes: list[tuple[str, FileChange]] = []
    ports = ToolPorts(file_io=buffers, on_change=lambda cid, ch: changes.append((cid, ch)))
    ctx = ToolContext(
        workspace=ws, write_roots=[ws], forbid_read=[ws / "secret"], ports=ports, call_id="call_7"
    )
    return ctx, buffers, changes


def test_reads_and_edits_see_the_unsaved_buffer(setup: tuple[ToolContext, Buffers, list]) -> None:
    ctx, buffers, changes = setup
    ws = Path(ctx.workspace)
    (ws / "a.py").write_text("x = 1\n")
    buffers.text[ws / "a.py"] = "x = 1  # unsaved\ny = 2\n"
    read = call(read_file.TOOL, ctx, path="a.py")
    assert "unsaved" in read.content and "y = 2" in read.content
    edited = call(edit_file.TOOL, ctx, path="a.py", old_string="y = 2", new_string="y = 3")
    assert not edited.is_error, edited.content
    assert buffers.text[ws / "a.py"] == "x = 1  # unsaved\ny = 3\n"
    assert (ws / "a.py").read_text() == "x = 1\n"  # the disk is the editor's to save
    assert changes == [
        (
            "call_7",
            FileChange(ws / "a.py", "x = 1  # unsaved\ny = 2\n", "x = 1  # unsaved\ny = 3\n"),
        )
    ]
    multi = call(
        multi_edit.TOOL, ctx, path="a.py", edits=[{"old_string": "x = 1", "new_string": "x = 0"}]
    )
    assert not multi.is_error and buffers.text[ws / "a.py"].startswith("x = 0")


def test_write_file_creates_through_the_port_and_reports_old_text(setup: tuple) -> None:
    ctx, buffers, changes = setup
    ws = Path(ctx.workspace)
    res = call(write_file.TOOL, ctx, path="new.txt", content="hello\n")
    assert not res.is_error and buffers.text[ws / "new.txt"] == "hello\n"
    assert not (ws / "new.txt").exists()
    (ws / "old.txt").write_text("before\n")
    call(write_file.TOOL, ctx, path="old.txt", content="after\n")
    assert changes[-1][1] == FileChange(ws / "old.txt", "before\n", "after\n")
    assert changes[0][1].old_text is None


def test_confinement_and_forbid_read_hold_before_the_port(setup: tuple, tmp_path: Path) -> None:
    ctx, buffers, _ = setup
    ws = Path(ctx.workspace)
    (ws / "secret").mkdir()
    (ws / "secret" / "k").write_text("key")
    refused = call(write_file.TOOL, ctx, path=str(tmp_path / "out.txt"), content="x")
    assert refused.is_error and "not allowed" in refused.content
    hidden = call(read_file.TOOL, ctx, path="secret/k")
    assert hidden.is_error and "forbid_read" in hidden.content
    assert buffers.writes == [] and buffers.reads == []
    os.mkfifo(ws / "pipe")
    fifo = call(read_file.TOOL, ctx, path="pipe")
    assert fifo.is_error and "not a regular file" in fifo.content and buffers.reads == []
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 10)
    assert "binary" in call(read_file.TOOL, ctx, path="img.png").content


def test_local_edits_report_changes_too(tmp_path: Path) -> None:
    changes: list[tuple[str, FileChange]] = []
    ctx = ToolContext(
        workspace=tmp_path,
        write_roots=[tmp_path],
        call_id="c1",
        ports=ToolPorts(on_change=lambda cid, ch: changes.append((cid, ch))),
    )
    (tmp_path / "f.txt").write_text("one\n")
    call(edit_file.TOOL, ctx, path="f.txt", old_string="one", new_string="two")
    assert (tmp_path / "f.txt").read_text() == "two\n"
    assert changes == [("c1", FileChange(tmp_path / "f.txt", "one\n", "two\n"))]


def test_proposed_change_previews_without_writing(setup: tuple) -> None:
    ctx, buffers, changes = setup
    ws = Path(ctx.workspace)
    buffers.text[ws / "a.py"] = "v = 1\n"
    edit = proposed_change("edit_file", {"path": "a.py", "old_string": "1", "new_string": "2"}, ctx)
    assert edit == FileChange(ws / "a.py", "v = 1\n", "v = 2\n")
    multi = proposed_change(
        "multi_edit",
        {
            "path": "a.py",
            "edits": [
                {"old_string": "v", "new_string": "w"},
                {"old_string": "1", "new_string": "3"},
            ],
        },
        ctx,
    )
    assert multi is not None and multi.new_text == "w = 3\n"
    new = proposed_change("write_file", {"path": "b.txt", "content": "hi"}, ctx)
    assert new == FileChange(ws / "b.txt", None, "hi")
    assert (
        proposed_change("edit_file", {"path": "a.py", "old_string": "zz", "new_string": "y"}, ctx)
        is None
    )
    assert proposed_change("bash", {"command": "ls"}, ctx) is None
    (ws / "secret").mkdir()
    (ws / "secret" / "k").write_text("key")
    assert proposed_change("write_file", {"path": "secret/k", "content": "x"}, ctx) is None
    assert buffers.writes == [] and changes == []
    assert file_text("a.py", ctx) == "v = 1\n"


def test_bash_runs_through_the_terminal_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_PROVIDER_KEY", "sk-secret")
    terminal = LocalTerminal()
    ctx = ToolContext(
        workspace=tmp_path,
        bash_timeout=5,
        call_id="c9",
        ports=ToolPorts(terminal=terminal),
        extra={"secret_env": ["SOME_PROVIDER_KEY"]},
    )
    res = call(
        bash.TOOL, ctx, command='echo "key=${SOME_PROVIDER_KEY:-unset} pager=$PAGER"; exit 4'
    )
    assert res.content == "key=unset pager=cat\n[exit code 4]" and res.is_error
    argv, env, timeout, call_id = terminal.asked[0]
    assert argv[:3] == ["env", "-u", "SOME_PROVIDER_KEY"] and call_id == "c9" and timeout == 5
    assert env["PAGER"] == "cat" and "SOME_PROVIDER_KEY" not in env
    slow = call(
        bash.TOOL,
        ctx.__class__(workspace=tmp_path, bash_timeout=0.5, ports=ToolPorts(terminal=terminal)),
        command=f"{sys.executable} -c 'import time; time.sleep(5)'",
    )
    assert slow.is_error and "timed out after 0.5 s" in slow.content
    background = call(bash.TOOL, ctx, command="true", run_in_background=True)
    assert "background job" in background.content and len(terminal.asked) == 2  # stays local
