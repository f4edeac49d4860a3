"""Issue 36 item 2: run budgets (``--max-cost``, ``--max-tokens``, ``--max-time``).

A priced fake model answers with tool rounds forever; the run stops within one
request of the limit, cleanly (exit 0, ``stop_reason: "budget"``, subtype
``budget_exhausted``), and ``run -c`` with a raised budget goes on. An
unpriced model with a cost budget is refused before any request (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fakes import FakeServer, ToolSpec, Turn

ROOT = Path(__file__).resolve().parents[2]
PRICE = "[providers.prices.fake-model]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n"
# 100k in at $1/M + 10k out at $2/M: $0.12 a request
BIG = {"input_tokens": 100_000, "output_tokens": 10_000}
PER_REQUEST = 0.12


def _project(tmp_path: Path, url: str, priced: bool = True) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("hello\n")
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n[[providers]]\nname = "fake"\n'
        f'kind = "openai"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n' + (PRICE if priced else "")
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "REASONIX_HOME": str(tmp_path / "rx"),
           "FAKE_PROVIDER_KEY": "sk-fake", "PYTHONPATH": str(ROOT),
           "REASONIX_TRUST_WORKSPACE": "1"}  # fmt: skip
    return ws, env


def _run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix", "run", *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    assert obj["type"] == "result", proc.stdout
    return obj


def _reads(n: int) -> list[Turn]:
    read = ToolSpec("read_file", '{"path": "a.txt"}')
    return [Turn.tools([read], usage=BIG) for _ in range(n)]


def test_max_cost_stops_within_one_request_then_continue_with_more(tmp_path: Path) -> None:
    with FakeServer("openai", [*_reads(3)]) as srv:
        ws, env = _project(tmp_path, srv.url)
        proc = _run(ws, env, "--json", "--max-cost", "0.3", "loop forever")
        assert proc.returncode == 0, proc.stderr
        got = _result(proc)
        assert got["stop_reason"] == "budget" and got["subtype"] == "budget_exhausted"
        assert got["is_error"] is False
        cost = got["total_cost_usd"]
        assert 0.3 <= cost <= 0.3 + PER_REQUEST + 1e-9, cost
        assert len(srv.requests) == 3  # 0.12, 0.24 (< 0.3, goes on), 0.36: spent
        # the session was saved: -c with a raised budget continues it
        srv.add(Turn.text_only("done now", usage=BIG))
        again = _run(ws, env, "-c", "--json", "--max-cost", "1", "go on")
        assert again.returncode == 0, again.stderr
        more = _result(again)
        assert more["stop_reason"] == "complete" and more["result"] == "done now"
        assert more["session_id"] == got["session_id"]
        assert len(srv.requests) == 4


def test_max_tokens_counts_reported_usage(tmp_path: Path) -> None:
    with FakeServer("openai", [*_reads(20)]) as srv:
        ws, env = _project(tmp_path, srv.url, priced=False)
        proc = _run(ws, env, "--json", "--max-tokens", "200000", "loop forever")
        assert proc.returncode == 0, proc.stderr
        got = _result(proc)
        assert got["stop_reason"] == "budget" and got["subtype"] == "budget_exhausted"
        assert len(srv.requests) == 2  # 110k, then 220k >= 200k: spent


def test_cost_budget_on_an_unpriced_model_is_refused(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("never")]) as srv:
        ws, env = _project(tmp_path, srv.url, priced=False)
        proc = _run(ws, env, "--max-cost", "1", "hi")
        assert proc.returncode == 2, proc.stderr
        assert "needs a priced model" in proc.stderr
        assert srv.requests == []


def test_bad_duration_is_a_usage_error(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("never")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        proc = _run(ws, env, "--max-time", "soon", "hi")
        assert proc.returncode == 2
        assert "bad duration" in proc.stderr
        assert srv.requests == []


def test_a_goal_run_obeys_the_run_budget_too(tmp_path: Path) -> None:
    with FakeServer("openai", [*_reads(3)]) as srv:
        ws, env = _project(tmp_path, srv.url, priced=False)
        proc = _run(ws, env, "--json", "--goal", "read forever", "--max-tokens", "200000")
        assert proc.returncode == 0, proc.stderr
        got = _result(proc)
        assert got["stop_reason"] == "goal_paused", got
        assert len(srv.requests) == 2  # the goal's own budgets are off: the run's stopped it


def test_bad_amount_is_a_usage_error(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("never")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        for bad in ("cheap", "0", "-1"):
            proc = _run(ws, env, "--max-cost", bad, "hi")
            assert proc.returncode == 2 and "--max-cost" in proc.stderr, proc.stderr
        assert srv.requests == []
