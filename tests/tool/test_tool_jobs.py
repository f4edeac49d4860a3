"""Background jobs: bash(run_in_background), bash_output, kill_shell, wait, atexit."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin import bash, bash_output, kill_shell, wait
from reasonix.tool.builtin._jobs import jobs
from reasonix.tool.builtin._proc import alive

REPO = Path(__file__).resolve().parents[2]


def call(tool: object, ctx: ToolContext, **args: object) -> ToolResult:
    return tool.TOOL.execute(json.dumps(args), ctx)  # type: ignore[attr-defined, no-any-return]


def start(ctx: ToolContext, command: str) -> str:
    res = call(bash, ctx, command=command, run_in_background=True)
    assert not res.is_error, res.content
    assert "Started background job" in res.content
    return str(res.metadata["job_id"])


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.02)
    return not alive(pid)


def test_lifecycle_output_and_wait(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, session_id="s-life")
    job = start(ctx, "echo one; sleep 0.3; echo two; echo three >&2")
    first = call(bash_output, ctx, job_id=job)
    assert first.content.startswith(f"[{job}] ")
    done = call(wait, ctx, job_ids=[job])
    assert done.content.startswith(f"[{job}] done (exit 0)")
    combined = first.content + done.content
    assert all(word in combined for word in ("one", "two", "three"))
    again = call(bash_output, ctx, job_id=job)
    assert again.content == f"[{job}] done (exit 0)\n(no new output)"
    assert bash_output.TOOL.read_only and wait.TOOL.read_only and not kill_shell.TOOL.read_only


def test_failed_status_filter_and_scoping(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, session_id="s-fail")
    job = start(ctx, "printf 'keep 1\\ndrop\\nkeep 2\\n'; exit 4")
    assert call(wait, ctx).content.startswith(f"[{job}] failed (exit 4)")
    job2 = start(ctx, "printf 'keep 1\\ndrop\\nkeep 2\\n'")
    call(wait, ctx, job_ids=[job2], timeout_seconds=5)
    other = ToolContext(workspace=tmp_path, session_id="s-other")
    missing = call(bash_output, other, job_id=job)
    assert missing.is_error and "no background job" in missing.content
    assert call(wait, other).content == "No background jobs to wait for."
    assert call(wait, other, job_ids=[job]).is_error


def test_bash_output_filter(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, session_id="s-filter")
    job_id = start(ctx, "printf 'keep 1\\ndrop\\nkeep 2\\n'")
    job = jobs.get(job_id, "s-filter")
    assert job is not None and job.wait(5)
    assert call(bash_output, ctx, job_id=job_id, filter="(").is_error  # bad regex: nothing consumed
    res = call(bash_output, ctx, job_id=job_id, filter="^keep")
    assert res.content == f"[{job_id}] done (exit 0)\nkeep 1\nkeep 2"
    assert call(bash_output, ctx, job_id=job_id).content.endswith("(no new output)")


def test_wait_reports_jobs_that_already_finished(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, session_id="s-finished")
    job_id = start(ctx, "echo quick")
    job = jobs.get(job_id, "s-finished")
    assert job is not None and job.wait(5)
    assert call(wait, ctx).content == f"[{job_id}] done (exit 0)\nquick"
    assert call(wait, ctx).content == "No background jobs to wait for."


def test_kill_takes_the_whole_group(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, session_id="s-kill")
    res = call(bash, ctx, command="sleep 100 & echo $!; sleep 100", run_in_background=True)
    job, leader = str(res.metadata["job_id"]), int(res.metadata["pid"])
    text = ""
    deadline = time.monotonic() + 5
    while not text.strip() and time.monotonic() < deadline:
        body = call(bash_output, ctx, job_id=job).content.split("\n", 1)[1]
        text += "" if body == "(no new output)" else body
        time.sleep(0.02)
    child = int(text.strip())
    assert alive(child) and alive(leader)
    assert call(kill_shell, ctx, job_id=job).content == f"Killed background job {job!r}."
    assert wait_dead(child) and wait_dead(leader)
    assert call(bash_output, ctx, job_id=job).content.startswith(f"[{job}] killed")
    assert "was not running (killed)" in call(kill_shell, ctx, job_id=job).content
    assert "unknown id" in call(kill_shell, ctx, job_id="bash-999999").content


def test_wait_timeout_returns_progress(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, session_id="s-timeout")
    job = start(ctx, "echo started; sleep 30")
    t0 = time.monotonic()
    res = call(wait, ctx, job_ids=[job], timeout_seconds=1)
    assert 0.9 <= time.monotonic() - t0 < 5
    assert res.content == f"[{job}] running\nstarted"
    call(kill_shell, ctx, job_id=job)


def test_jobs_die_with_the_interpreter(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    code = (
        "import json; from pathlib import Path; from reasonix.tool import ToolContext\n"
        "from reasonix.tool.builtin import bash\n"
        f"p = Path({str(pidfile)!r})\n"
        "cmd = f'sleep 100 & echo $! > {p}; sleep 100'\n"
        "args = json.dumps({'command': cmd, 'run_in_background': True})\n"
        "r = bash.TOOL.execute(args, ToolContext())\n"
        "import time\n"
        "while not p.exists() or not p.read_text().strip(): time.sleep(0.02)\n"
        "print(r.metadata['pid'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    leader = int(out.stdout.strip())
    child = int(pidfile.read_text().strip())
    assert wait_dead(leader) and wait_dead(child)


def test_qa_kill_shell_reaches_double_forked_daemons(tmp_path: Path) -> None:
    """QA: kill_shell left a `(setsid cmd &)` daemon of the job running."""
    ctx = ToolContext(workspace=tmp_path, session_id="s-qa-daemon")
    job = start(ctx, "(setsid sleep 100 & echo $! > pid.txt); sleep 100")
    pid_file = tmp_path / "pid.txt"
    deadline = time.monotonic() + 5
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    res = call(kill_shell, ctx, job_id=job)
    assert not res.is_error, res.content
    assert wait_dead(int(pid_file.read_text()))
