"""Run budgets against the built .pyz (issue 36 item 2).

``run --max-cost`` with a priced fake model stops within one request of the
limit (exit 0, ``stop_reason: "budget"``), ``run -c`` with a raised budget
continues; the line chat on a pseudo-terminal asks whether to grant more, a
"y" grants the same amount again and ``/status`` shows what is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project
from e2e_term import Term
from fakes import FakeServer, ToolSpec, Turn

BIG = {"input_tokens": 100_000, "output_tokens": 10_000}  # $0.12 at $1/M in, $2/M out
PRICE = "\n[providers.prices.fake-model]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n"


def _reads(n: int) -> list[Turn]:
    return [Turn.tools([ToolSpec("read_file", '{"path": "a.txt"}')], usage=BIG) for _ in range(n)]


def _project(ws: Path, url: str) -> None:
    write_project(ws, url)
    with open(ws / "reasonix.toml", "a") as fh:
        fh.write(PRICE)
    (ws / "a.txt").write_text("hello\n")


def _run(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    got: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return got


def test_run_max_cost_stops_then_continue_with_a_raised_budget(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", _reads(3)) as srv:
        _project(ws, srv.url)
        first = _run(pyz, ws, env, "--max-cost", "0.3", "loop")
        assert first["stop_reason"] == "budget" and first["subtype"] == "budget_exhausted"
        assert first["is_error"] is False
        assert 0.3 <= first["total_cost_usd"] <= 0.3 + 0.12 + 1e-9
        assert len(srv.requests) == 3
        srv.add(Turn.text_only("all done", usage=BIG))
        again = _run(pyz, ws, env, "-c", "--max-cost", "1", "go on")
        assert again["stop_reason"] == "complete" and again["result"] == "all done"
        assert again["session_id"] == first["session_id"]
        assert len(srv.requests) == 4


pytest.importorskip("pty")


def test_line_chat_asks_to_grant_more_and_y_grants_it(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = {**clean_env(tmp_path, source_tree=False), "TERM": "dumb"}
    script = [*_reads(2), Turn.text_only("finished"), *_reads(2)]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        term = Term([sys.executable, str(pyz), "--plain", "--max-tokens", "200000"], ws, env)
        try:
            term.expect("› ")
            term.send("loop\r")
            term.expect("grant the same amount again? [y/N]")
            assert len(srv.requests) == 2  # 110k, 220k >= 200k: no third request
            term.send("y\r")
            term.expect("send a message to go on]")
            term.expect("› ")
            term.send("/status\r")
            shown = term.expect("› ")
            assert "budget" in shown and "tok left" in shown, shown
            term.send("go on\r")
            term.expect("finished")
            term.expect("› ")
            assert len(srv.requests) == 3
            term.send("more\r")  # 330k, then 440k >= the 420k granted: asked again
            term.expect("grant the same amount again? [y/N]")
            term.send("n\r")
            term.expect("no more budget granted")
            term.expect("› ")
            term.send("again\r")  # spent: not even the turn's first request goes out
            term.expect("budget is spent; no further request")
            term.expect("grant the same amount again? [y/N]")  # asked again, still spent
            term.send("\r")  # the default is no
            term.expect("no more budget granted")
            term.expect("› ")
            assert len(srv.requests) == 5
            term.send("/exit\r")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
                term.proc.wait()
