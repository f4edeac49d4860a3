"""The built .pyz in a small window with long tool outputs (issue 34, Deliver 1).

``context_window`` of 4000-16000 tokens, ``[tools] enabled = ["bash",
"read_file"]``, every bash call printing 5-50 KB, against a fake local
server that counts prompt + ``max_tokens`` and refuses what does not fit
(:class:`fakes.tight.TightWindow`). The run must reach its end through
pruning and summaries (cache-aligned where they fit) with a loss report;
when a summary cannot be had, CompactionRequired says why and
``run -c --compact`` recovers the session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer
from fakes.tight import TightWindow, is_summary_request


def _command(kb: int) -> str:
    """A bash command printing about ``kb`` KB of varied log lines."""
    script = (
        "import random; r = random.Random(7); w = ['alpha', 'beta', 'src/x.py', 'Error:', '42']; "
        f"[print(f'line {{i:05d}} ' + ' '.join(r.choice(w) for _ in range(10))) "
        f"for i in range({kb} * 1024 // 60)]"
    )
    return json.dumps({"command": f'python3 -c "{script}"'})


def _workspace(tmp_path: Path, url: str, window: int) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url + "/v1")
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write(f'context_window = {window}\n\n[tools]\nenabled = ["bash", "read_file"]\n')
    return ws, clean_env(tmp_path, source_tree=False)


def _run(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", "--yolo", *args], cwd=ws, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr
    result = dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    result["exit"] = proc.returncode
    return result


def _aligned(bodies: list[dict[str, object]], n: int) -> bool:
    """Summary request ``n`` reuses request ``n - 1``'s system prompt, tools and messages."""
    head, prev = bodies[n]["messages"][:-1], bodies[n - 1]["messages"]  # type: ignore[index]
    common = min(len(head), len(prev))
    same = [json.dumps(m, sort_keys=True) for m in head[:common]] == [
        json.dumps(m, sort_keys=True) for m in prev[:common]
    ]
    return same and common >= 2 and bodies[n]["tools"] == bodies[n - 1]["tools"]


@pytest.mark.parametrize(
    ("window", "kb"), [(4000, 50), (6000, 30), (8000, 5), (8000, 50), (16000, 20)]
)  # 6000/30: with the small prompt of a small window (issue 37) 20 KB outputs summarise later
def test_a_small_window_session_runs_to_its_end(
    tmp_path: Path, pyz: Path, window: int, kb: int
) -> None:
    tight = TightWindow(window, tool=("bash", _command(kb)), rounds=8, counts_output=True)
    with FakeServer("openai", responder=tight) as srv:
        ws, env = _workspace(tmp_path, srv.url, window)
        result = _run(pyz, ws, env, "run the tests")
        bodies = [r.json for r in srv.requests]
    assert result["exit"] == 0, result.get("error")
    assert result["result"] == "all done" and tight.called == 8
    compaction = result["compaction"]
    assert isinstance(compaction, dict) and compaction["summaries"] >= 1
    assert compaction["dropped"], "no loss report"  # the summary no longer names the command
    assert all(is_summary_request(bodies[n]) for n in tight.refused)  # ordinary ones fit
    for n in tight.summaries:  # each leaves room for the summary in the window
        assert tight.prompts[n] + bodies[n]["max_tokens"] <= window
    if window == 6000:  # the acceptance case: at least one summary hits the prefix cache
        assert any(_aligned(bodies, n) for n in tight.summaries)


def test_compaction_required_says_why_and_run_c_compact_recovers(tmp_path: Path, pyz: Path) -> None:
    tight = TightWindow(6000, tool=("bash", _command(20)), rounds=6, counts_output=True)
    tight.misbehave = True  # the model answers the summary request with a tool call
    with FakeServer("openai", responder=tight) as srv:
        ws, env = _workspace(tmp_path, srv.url, 6000)
        failed = _run(pyz, ws, env, "run the tests")
        assert failed["exit"] == 1
        error = failed["error"]
        assert isinstance(error, dict) and error["type"] == "CompactionRequired"
        assert "called a tool instead of writing the summary" in error["message"]
        assert "--compact" in error["message"]
        tight.misbehave = False
        before = len(srv.requests)
        result = _run(pyz, ws, env, "-c", "--compact", "go on")
        first = srv.requests[before].json
    assert result["exit"] == 0, result.get("error")
    assert result["result"] == "all done" and tight.called == 6
    assert is_summary_request(first)  # --compact summarised before the turn's first request
    compaction = result["compaction"]
    assert isinstance(compaction, dict) and compaction["summaries"] >= 1 and compaction["dropped"]
