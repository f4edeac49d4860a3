"""Killing, cancelling and budgeting a run of ``python -m reasonix`` from the source tree.

These drive the real CLI as a subprocess against the loopback fake (fast: no
archive needed): SIGKILL at random moments never loses a completed round and
``--continue`` always loads the session; SIGINT cancels the turn and leaves a
loadable transcript and no orphan process; ``--max-steps`` stops the loop.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.session import Session, latest_session


def setup_ws(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url)
    return ws, clean_env(tmp_path)


def reasonix(*args: str) -> list[str]:
    return [sys.executable, "-m", "reasonix", "run", *args]


def busy_turn(i: int) -> Turn:
    # An unknown tool is fine: its error result still completes the round.
    return Turn.tools([ToolSpec("no_such_tool", f'{{"i": {i}}}', id=f"k{i}")], delay=0.01)


def load_messages(ws: Path, env: dict[str, str]) -> int:
    os.environ["REASONIX_HOME"] = env["REASONIX_HOME"]
    info = latest_session(ws)
    assert info is not None
    with Session.open(info.path) as s:  # the killed writer's lease is taken over
        return len(s.messages())


@pytest.mark.slow
def test_sigkill_at_random_moments_never_loses_a_completed_round(tmp_path: Path) -> None:
    rng = random.Random(1234)
    with FakeServer("openai", [busy_turn(i) for i in range(2000)]) as srv:
        ws, env = setup_ws(tmp_path, srv.url)
        before = 0
        for attempt in range(20):
            cont = ["-c"] if attempt else []
            proc = subprocess.Popen(
                reasonix("--output-format", "stream-json", *cont, f"task {attempt}"),
                cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )  # fmt: skip
            time.sleep(rng.uniform(0.05, 1.2))
            proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate(timeout=30)
            steps = sum(1 for line in out.splitlines() if '"type": "request"' in line)
            if attempt == 0 and steps == 0 and latest_session(ws) is None:
                continue  # killed before the session existed: nothing to lose
            after = load_messages(ws, env)
            # request k+1 is only sent after round k's results were appended and flushed
            completed_rounds = max(0, steps - 1)
            assert after - before >= 2 * completed_rounds, (attempt, steps, before, after)
            before = after
        srv.add(Turn.text_only("all good"))
        final = subprocess.run(
            reasonix("--json", "-c", "finish"), cwd=ws, env=env,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    # Whatever the leftover script step was, the continued session loads and runs a turn.
    result = json.loads(final.stdout)
    assert result["session_id"] == latest_session(ws).id  # type: ignore[union-attr]
    assert load_messages(ws, env) > before


def test_sigint_cancels_the_turn_and_the_transcript_stays_loadable(tmp_path: Path) -> None:
    slow = Turn.text_only("word " * 400, delay=0.02)  # about 8 seconds of drip
    with FakeServer("openai", [slow]) as srv:
        ws, env = setup_ws(tmp_path, srv.url)
        proc = subprocess.Popen(
            reasonix("--output-format", "stream-json", "long answer please"),
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:  # wait until the answer is streaming
            if '"type": "text"' in line:
                break
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert time.monotonic() - t0 < 5, "cancel must interrupt the in-flight request"
    assert proc.returncode == 1, err
    result = json.loads(out.splitlines()[-1])
    assert result["stop_reason"] == "cancelled" and result["is_error"] is True
    assert load_messages(ws, env) >= 1  # the user message (and the partial answer) survived


def sleepers(marker: str) -> list[int]:
    """Pids whose command line carries ``marker`` (works across a sandbox's pid namespace)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline and "sleep" in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_sigint_during_bash_leaves_no_orphan(tmp_path: Path) -> None:
    marker = f"600.{random.randrange(10**6):06d}"  # a unique argument to find the child by
    cmd = json.dumps({"command": f"sleep {marker}; echo never"})
    with FakeServer("openai", [Turn.tools([ToolSpec("bash", cmd)]), Turn.text_only("x")]) as srv:
        ws, env = setup_ws(tmp_path, srv.url)
        proc = subprocess.Popen(
            reasonix("--output-format", "stream-json", "--yolo", "run it"),
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while not sleepers(marker) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert sleepers(marker), "the bash tool never started its command"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    deadline = time.monotonic() + 5
    while sleepers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers(marker) == [], "the cancelled command outlived the run"
    assert json.loads(out.splitlines()[-1])["stop_reason"] == "cancelled", err
    assert load_messages(ws, env) >= 3


def test_step_budget_ends_the_run(tmp_path: Path) -> None:
    with FakeServer("openai", [busy_turn(i) for i in range(10)]) as srv:
        ws, env = setup_ws(tmp_path, srv.url)
        proc = subprocess.run(
            reasonix("--json", "--max-steps", "3", "loop forever"),
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert len(srv.requests) == 3
    result = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert result["stop_reason"] == "max_steps" and result["num_turns"] == 3
    assert result["tool_calls"] == 3 and result["is_error"] is True
