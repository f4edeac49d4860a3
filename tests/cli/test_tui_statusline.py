"""The scripted status line (issue 36, item 4): its stdin payload in Claude Code's
statusLine shape, the runner (first line, timeout, failure, pace, never blocking)
and its place in the footer. Commands are real shell commands run by ``sh``.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from reasonix.cli.tui.state import AppState
from reasonix.cli.tui.statusline import (
    StatusLineRunner,
    budget_left,
    build_payload,
    first_line,
    run_once,
    runner_for,
)
from reasonix.cli.tui.view import render

PY = sys.executable


def payload(**over: object) -> dict[str, object]:
    args: dict[str, object] = dict(
        session_id="s-1",
        transcript_path="/state/s-1.jsonl",
        cwd="/ws",
        model_ref="deepseek/deepseek-chat",
        model_name="deepseek-chat",
        mode="plan",
        context_used=32_000,
        context_window=128_000,
        cache_hit=0.75,
        cost_usd=0.0123,
        cost_amount=0.0123,
        currency="USD",
        input_tokens=40_000,
        output_tokens=900,
        budget_left={"cost": 1.5},
        version="9.9",
    )
    args.update(over)
    return build_payload(**args)  # type: ignore[arg-type]


def test_the_payload_has_claude_codes_statusline_fields() -> None:
    p = payload()
    assert p["hook_event_name"] == "Status"
    assert p["session_id"] == "s-1"
    assert p["transcript_path"] == "/state/s-1.jsonl"
    assert p["cwd"] == "/ws"
    assert p["model"] == {"id": "deepseek/deepseek-chat", "display_name": "deepseek-chat"}
    assert p["workspace"] == {"current_dir": "/ws", "project_dir": "/ws"}
    assert p["cost"] == {"total_cost_usd": 0.0123}
    assert p["permission_mode"] == "plan"
    ctx = p["context_window"]
    assert ctx["context_window_size"] == 128_000  # type: ignore[index]
    assert ctx["used_percentage"] == 25.0  # type: ignore[index]
    assert ctx["remaining_percentage"] == 75.0  # type: ignore[index]
    assert ctx["total_input_tokens"] == 40_000  # type: ignore[index]
    ours = p["reasonix"]
    assert ours == {
        "mode": "plan",
        "context_used": 32_000,
        "cache_hit": 0.75,
        "cost": {"amount": 0.0123, "currency": "USD"},
        "budget_left": {"cost": 1.5},
    }
    json.dumps(p)  # it goes to stdin as JSON


def test_an_unpriced_or_yuan_priced_model_has_no_usd_cost() -> None:
    assert payload(cost_usd=None, cost_amount=None, currency="")["cost"] == {"total_cost_usd": None}
    cny = payload(cost_usd=None, cost_amount=0.5, currency="CNY")
    assert cny["cost"] == {"total_cost_usd": None}
    assert cny["reasonix"]["cost"] == {"amount": 0.5, "currency": "CNY"}  # type: ignore[index]
    unknown = payload(context_used=None)["context_window"]
    assert unknown["used_percentage"] is None  # type: ignore[index]


def test_the_command_reads_the_payload_and_its_first_line_is_kept(tmp_path: Path) -> None:
    script = tmp_path / "status.py"
    script.write_text(
        "import json, sys\n"
        "p = json.load(sys.stdin)\n"
        "print(f\"\\x1b[34m[{p['model']['display_name']}]\\x1b[0m {p['session_id']} "
        "{p['context_window']['used_percentage']}%\")\n"
        "print('second line')\n"
    )
    line = run_once(f"{PY} {script}", payload(), str(tmp_path))
    assert line == "[deepseek-chat] s-1 25.0%"


def test_the_command_runs_in_the_workspace(tmp_path: Path) -> None:
    assert run_once("pwd", payload(), str(tmp_path)) == str(tmp_path)


def test_a_failing_command_says_so(tmp_path: Path) -> None:
    assert run_once("echo partial; exit 3", payload(), str(tmp_path)) == "status: failed (exit 3)"


def test_a_slow_command_is_killed_and_shown_as_timed_out(tmp_path: Path) -> None:
    start = time.monotonic()
    line = run_once("sleep 30 & sleep 30", payload(), str(tmp_path), timeout=0.5)
    assert line == "status: timed out"
    # it returned long before either 30 s sleep could end: the background child was
    # killed with the command's process group, not waited for
    assert time.monotonic() - start < 25


def test_empty_output_blanks_the_line_and_control_bytes_are_shown(tmp_path: Path) -> None:
    assert run_once("true", payload(), str(tmp_path)) == ""
    assert first_line(b"a\x07b\r\nc") == "a\\x07b"


def test_the_runner_never_blocks_and_keeps_its_pace(tmp_path: Path) -> None:
    lines: list[str] = []
    got = threading.Event()

    def on_line(line: str) -> None:
        lines.append(line)
        got.set()

    runner = StatusLineRunner(
        f"{PY} -c \"import json,sys; print(json.load(sys.stdin)['session_id'])\"",
        str(tmp_path),
        on_line,
        interval=0.3,
    )
    for i in range(50):  # a burst of updates, as a streaming turn gives
        runner.update(payload(session_id=f"s-{i}"))
    assert got.wait(5)
    time.sleep(1.0)
    runner.close()
    assert lines[-1] == "s-49"  # the newest payload wins
    assert runner.runs <= 2  # coalesced: not one run per update
    before = runner.runs
    runner.update(payload())
    time.sleep(0.5)
    assert runner.runs == before  # closed: runs no more


def test_the_runner_waits_the_interval_between_runs(tmp_path: Path) -> None:
    starts: list[float] = []
    runner = StatusLineRunner("echo x", str(tmp_path), lambda _: starts.append(time.monotonic()))
    runner.update(payload())
    deadline = time.monotonic() + 5
    while len(starts) < 3 and time.monotonic() < deadline:
        runner.update(payload())
        time.sleep(0.02)
    runner.close()
    assert len(starts) >= 3
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.2  # 0.3 s between starts; a run's own length varies a little


def test_the_footer_shows_the_scripts_line() -> None:
    state = AppState()
    state.status.model, state.status.mode = "p/m", "plan"
    state.status.script = "⎇ main · $0.01"
    rows, _ = render(state, 80, 10)
    footer = "".join(text for text, _ in rows[-1])
    assert footer.strip() == "p/m · plan · ⎇ main · $0.01"


def test_provider_keys_stay_out_of_the_commands_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-secret")
    command = 'echo "${FAKE_PROVIDER_KEY:-none} $CLAUDE_PROJECT_DIR"'
    rt = SimpleNamespace(
        config=SimpleNamespace(
            ui=SimpleNamespace(status_command=command),
            providers=[SimpleNamespace(api_key_env="FAKE_PROVIDER_KEY")],
        ),
        workspace=tmp_path,
    )
    handle = runner_for(rt, lambda _: None)
    assert handle is not None
    runner = handle.runner
    assert run_once(runner.command, payload(), runner.cwd, env=runner.env) == f"none {tmp_path}"
    rt.config.ui.status_command = ""
    assert runner_for(rt, lambda _: None) is None


def test_budget_left_names_each_limit_that_is_set() -> None:
    from reasonix.agent.spend import RunBudget
    from reasonix.provider.types import Usage

    price = {"input": 1.0, "output": 2.0}  # per million tokens
    usage = Usage(input_tokens=100_000, output_tokens=50_000)  # $0.20
    assert budget_left(None, usage, price) is None
    assert budget_left(RunBudget(), usage, price) is None  # no limit set
    left = budget_left(RunBudget(max_cost=1.0, max_tokens=200_000), usage, price)
    assert left == {"cost": 0.8, "tokens": 50_000}
    spent = budget_left(RunBudget(max_tokens=1000), usage, price)
    assert spent == {"tokens": 0}
