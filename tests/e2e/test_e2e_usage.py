"""`reasonix usage` against the built .pyz: its figures are the runs' own (issue 36 item 5).

Three runs of one session (`-c`) over two models, one of them unpriced, the
first delegating to a sub-agent; `usage --json` must equal the sums of the
runs' `run --json` usage and costs exactly, and name the unpriced model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env
from fakes import FakeServer, ToolSpec, Turn

pytestmark = pytest.mark.e2e

_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
           "cache_creation_input_tokens")  # fmt: skip


def _project(ws: Path, url: str) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "p"\n'
        f'[[providers]]\nname = "p"\nkind = "openai"\nbase_url = "{url}"\nmodels = ["m"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
        "[providers.prices]\nm = { input = 2.0, output = 8.0, cache_read = 0.5 }\n"
        f'[[providers]]\nname = "q"\nkind = "openai"\nbase_url = "{url}"\nmodels = ["free"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
    )


def _reasonix(pyz: Path, ws: Path, tmp: Path, *args: str) -> Any:
    proc = subprocess.run(
        [sys.executable, str(pyz), *args], cwd=ws, env=clean_env(tmp, source_tree=False),
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout)


def _turn(text: str = "", tools: list[ToolSpec] | None = None, **usage: int) -> Turn:
    if tools:
        return Turn.tools(tools, text, usage=usage)
    return Turn.text_only(text, usage=usage)


def test_usage_equals_the_sum_of_the_runs(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    script = [
        # run 1 on p/m: the parent delegates; the child (same model) answers once
        _turn(tools=[ToolSpec("task", json.dumps({"prompt": "look around"}))],
              input_tokens=1200, output_tokens=40, cache_read_tokens=800),
        _turn("child done", input_tokens=700, output_tokens=30, cache_write_tokens=100),
        _turn("first", input_tokens=1500, output_tokens=60, cache_read_tokens=1100),
        # run 2 on the unpriced q/free
        _turn("second", input_tokens=1900, output_tokens=70, reasoning_tokens=12),
        # run 3 back on p/m
        _turn("third", input_tokens=2100, output_tokens=90, cache_read_tokens=1800),
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        runs = [
            _reasonix(pyz, ws, tmp_path, "run", "--json", "-y", "go"),
            _reasonix(pyz, ws, tmp_path, "run", "--json", "-c", "--model", "q/free", "more"),
            _reasonix(pyz, ws, tmp_path, "run", "--json", "-c", "again"),
        ]
    assert [r["result"] for r in runs] == ["first", "second", "third"]
    assert len({r["session_id"] for r in runs}) == 1
    assert runs[1]["cost"] == "unknown"
    report = _reasonix(pyz, ws, tmp_path, "usage", "--json", "--by", "session")
    (row,) = report["rows"]
    assert row["key"] == runs[0]["session_id"]
    sub = row["subagent"]
    assert sub["requests"] == 1 and sub["tokens"] == 730
    # a run's usage block counts its sub-agents' requests too: the session's row is the sum
    for name in _FIELDS:
        assert row[name] == sum(r["usage"][name] for r in runs), name
    priced = [r["cost"]["amount"] for r in runs if r["cost"] != "unknown"]
    assert row["cost"] == {"USD": round(sum(priced), 6)}
    assert report["total"]["cost"] == row["cost"]
    assert row["unpriced"] == {"requests": 1, "models": ["q/free"]}
    assert row["requests"] == 5
    basis = {b["model"]: b for b in report["price_basis"]}
    assert basis["q/free"]["source"] == "unpriced" and basis["p/m"]["cache_discount"] is True
