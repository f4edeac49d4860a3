"""bash tool (foreground): output, exit codes, timeouts, cancel, caps, sandbox refusal."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from reasonix.cancel import Cancel
from reasonix.permission.sandbox import SandboxSettings
from reasonix.tool import CONTENT_LIMIT_BYTES, ToolContext, ToolResult
from reasonix.tool.builtin._proc import alive
from reasonix.tool.builtin.bash import TOOL


def run(ctx: ToolContext, command: str) -> ToolResult:
    return TOOL.execute(json.dumps({"command": command}), ctx)


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


def test_exit_code_and_merged_streams(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    res = run(ctx, "echo hi; echo err >&2; exit 3")
    assert res.content == "hi\nerr\n[exit code 3]"
    assert res.is_error and res.metadata["exit_code"] == 3
    ok = run(ctx, "pwd; [[ -n bash-only ]] && echo bash")
    assert ok.content == f"{os.path.realpath(tmp_path)}\nbash\n[exit code 0]" or ok.content == (
        f"{tmp_path}\nbash\n[exit code 0]"
    )
    assert not ok.is_error and not TOOL.read_only
    assert run(ctx, "true").content == "(no output)\n[exit code 0]"
    assert run(ctx, "cat").content == "(no output)\n[exit code 0]"  # stdin is /dev/null
    assert run(ctx, "printf 'no newline'").content == "no newline\n[exit code 0]"


def test_secret_env_is_not_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RX_TEST_KEY", "sk-secret")
    monkeypatch.setenv("RX_TEST_OTHER", "visible")
    ctx = ToolContext(workspace=tmp_path, extra={"secret_env": ["RX_TEST_KEY"]})
    res = run(ctx, 'echo "[$RX_TEST_KEY][$RX_TEST_OTHER][$PAGER]"')
    assert res.content == "[][visible][cat]\n[exit code 0]"


def test_cwd_and_argument_errors(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    ctx = ToolContext(workspace=tmp_path, cwd=sub)
    assert run(ctx, "basename $PWD").content == "sub\n[exit code 0]"
    assert run(ctx, "  ").is_error
    assert TOOL.execute("{}", ctx).is_error
    assert TOOL.execute("{bad", ctx).is_error


def test_timeout_kills_grandchildren(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, bash_timeout=1)
    t0 = time.monotonic()
    res = run(ctx, "bash -c 'sleep 100 & echo $!; sleep 100' & echo $!; wait")
    assert time.monotonic() - t0 < 10
    assert res.is_error and res.metadata["timed_out"]
    assert "[timed out after 1 s; the command and its children were killed]" in res.content
    pids = [int(x) for x in res.content.split("\n")[:2]]
    assert all(wait_dead(pid) for pid in [*pids, res.metadata["pid"]]), pids


def test_timeout_reaches_children_that_left_the_group(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, bash_timeout=1)
    res = run(ctx, "setsid sleep 100 & echo $!; sleep 100")
    assert res.metadata["timed_out"]
    assert wait_dead(int(res.content.split("\n")[0]))


def test_stragglers_reaped_after_normal_exit(tmp_path: Path) -> None:
    res = run(ToolContext(workspace=tmp_path), "sleep 100 & echo $!")
    assert res.content.endswith("[exit code 0]")
    assert wait_dead(int(res.content.split("\n")[0]))


def test_cancel_kills_group(tmp_path: Path) -> None:
    cancel = Cancel()
    seen: list[str] = []
    ready = threading.Event()

    def progress(chunk: str) -> None:
        seen.append(chunk)
        ready.set()

    ctx = ToolContext(workspace=tmp_path, cancel=cancel, progress=progress, bash_timeout=0)
    box: list[ToolResult] = []
    thread = threading.Thread(target=lambda: box.append(run(ctx, "sleep 100 & echo $!; sleep 100")))
    thread.start()
    assert ready.wait(5)
    cancel.cancel("user pressed ctrl-c")
    thread.join(10)
    assert not thread.is_alive()
    res = box[0]
    assert res.is_error and "[cancelled; the command and its children were killed]" in res.content
    assert wait_dead(int("".join(seen).split("\n")[0]))


def test_huge_output_keeps_head_and_tail(tmp_path: Path) -> None:
    res = run(ToolContext(workspace=tmp_path), "seq 1 200000")
    assert len(res.content.encode()) <= CONTENT_LIMIT_BYTES
    assert res.content.startswith("1\n2\n3\n")
    assert res.content.endswith("199999\n200000\n[exit code 0]")
    assert "bytes omitted" in res.content
    expected = "".join(f"{i}\n" for i in range(1, 200001))
    assert res.raw_content == expected + "[exit code 0]"


def test_progress_streams_whole_characters(tmp_path: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(workspace=tmp_path, progress=chunks.append)
    res = run(ctx, "printf '\\xe4\\xb8'; sleep 0.2; printf '\\xad\\xe6\\x96\\x87\\n'")
    assert res.content == "中文\n[exit code 0]"
    assert "".join(chunks) == "中文\n" and "\ufffd" not in "".join(chunks)


def test_no_timeout_when_zero(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, bash_timeout=0)
    assert run(ctx, "sleep 0.2; echo done").content == "done\n[exit code 0]"


def test_enforced_sandbox_without_backend_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PATH holds bash only: no bubblewrap, so enforcement cannot be provided.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    bash_path = next(
        p
        for d in os.environ["PATH"].split(os.pathsep)
        if os.path.exists(p := os.path.join(d, "bash"))
    )
    (bindir / "bash").symlink_to(bash_path)
    monkeypatch.setenv("PATH", str(bindir))
    marker = tmp_path / "ran"
    ctx = ToolContext(
        workspace=tmp_path, sandbox=SandboxSettings(mode="enforce", workspace=tmp_path)
    )
    res = run(ctx, f"touch {marker}")
    assert res.is_error and "NOT run" in res.content and "enforce" in res.content
    assert not marker.exists()


@pytest.mark.parametrize(
    "command",
    [
        # the subshell exits at once: the daemon has neither our group nor our parent links
        "(setsid sleep 100 & echo $! > pid.txt); sleep 100",
        "setsid -f bash -c 'echo $$ > pid.txt; exec sleep 100'; sleep 100",
    ],
)
def test_qa_timeout_reaches_double_forked_daemons(tmp_path: Path, command: str) -> None:
    """QA: a double fork plus setsid survived a timeout that claimed it killed everything."""
    ctx = ToolContext(workspace=tmp_path, bash_timeout=1)
    res = run(ctx, command)
    assert res.metadata["timed_out"]
    assert "the command and its children were killed" in res.content
    pid = int((tmp_path / "pid.txt").read_text())
    assert wait_dead(pid), pid


def test_qa_cancel_reaches_double_forked_daemons(tmp_path: Path) -> None:
    cancel = Cancel()
    ctx = ToolContext(workspace=tmp_path, cancel=cancel, bash_timeout=0)
    box: list[ToolResult] = []
    command = "(setsid sleep 100 & echo $! > pid.txt); sleep 100"
    thread = threading.Thread(target=lambda: box.append(run(ctx, command)))
    thread.start()
    pid_file = tmp_path / "pid.txt"
    deadline = time.monotonic() + 5
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    cancel.cancel("stop")
    thread.join(10)
    assert box and box[0].metadata["exit_code"] is None
    assert wait_dead(int(pid_file.read_text()))


_NO_BWRAP = not sys.platform.startswith("linux") or shutil.which("bwrap") is None


@pytest.mark.skipif(_NO_BWRAP, reason="LOUD SKIP: bubblewrap (bwrap) is missing; CI installs it")
def test_qa_sandboxed_bash_cannot_plant_project_config(tmp_path: Path) -> None:
    """QA: an absent reasonix.toml/.mcp.json could be created inside the sandbox and
    would be trusted on the next start (an MCP server runs unsandboxed)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = SandboxSettings(mode="enforce", workspace=ws, cache_roots=[])
    ctx = ToolContext(workspace=ws, sandbox=sandbox)
    evil = '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}}}'
    res = run(
        ctx, f"echo '{evil}' > .mcp.json; printf '[permissions]\\nmode=\"yolo\"' > reasonix.toml"
    )
    assert not (ws / ".mcp.json").exists() and not (ws / "reasonix.toml").exists()
    assert (ws / ".mcp.json.rejected-by-sandbox").read_text().strip() == evil
    assert "moved aside" in res.content and res.content.endswith("[exit code 0]")
    # background jobs too
    ctx_bg = ToolContext(workspace=ws, sandbox=sandbox, session_id="qa-plant")
    started = TOOL.execute(
        json.dumps({"command": "sleep 0.2; echo x > reasonix.toml", "run_in_background": True}),
        ctx_bg,
    )
    from reasonix.tool.builtin._jobs import jobs

    job = jobs.get(str(started.metadata["job_id"]), "qa-plant")
    assert job is not None and job.wait(10)
    assert not (ws / "reasonix.toml").exists()
    assert "moved aside" in job.read_new()
    # an existing config stays read-only and in place
    (ws / "reasonix.toml").write_text("[permissions]\n")
    res = run(ctx, "echo 'mode=\"yolo\"' >> reasonix.toml; echo rc=$?")
    assert "rc=1" in res.content and "moved aside" not in res.content
    assert (ws / "reasonix.toml").read_text() == "[permissions]\n"


def test_qa_unsandboxed_bash_may_write_project_config(tmp_path: Path) -> None:
    res = run(ToolContext(workspace=tmp_path), "echo '[tools]' > reasonix.toml")
    assert res.content == "(no output)\n[exit code 0]"
    assert (tmp_path / "reasonix.toml").read_text() == "[tools]\n"
