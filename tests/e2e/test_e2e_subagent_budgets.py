"""Sub-agents that cannot run away, against the built .pyz (issue 36 item 3).

A parent starts a fleet of read-only sub-agents that read a file forever (the
scripted fake answers every child request with another read). SIGTERM to
``run`` mid-fleet stops the whole subtree: no child request starts after it
(beyond the ones already on the wire), and every finished child request's usage
is in the children's transcripts. Under ``run --max-tokens 2000`` the same fleet
stops with the budget (``budget_exhausted``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from e2e_task_env import clean_env, write_project
from fakes import FakeServer, RecordedRequest, ToolSpec, Turn

USAGE = {"input_tokens": 300, "output_tokens": 50}  # 350 tokens a request
CHILDREN = 4


def _fleet_server() -> FakeServer:
    """The parent asks for CHILDREN read-only tasks once, then answers; children loop."""
    prompts = [{"prompt": f"read a.txt again and again ({i})"} for i in range(CHILDREN)]
    first = threading.Event()

    def answer(req: RecordedRequest) -> Turn:
        tools = {t["function"]["name"] for t in (req.json or {}).get("tools", [])}
        if "fleet" in tools:  # only the parent has the fleet tool
            if not first.is_set():
                first.set()
                call = ToolSpec("parallel_tasks", json.dumps({"tasks": prompts}), id="p0")
                return Turn.tools([call], usage=USAGE)
            return Turn.text_only("the helpers stopped", usage=USAGE)
        return Turn(tool_calls=[ToolSpec("read_file", '{"path": "a.txt"}')], usage=USAGE,
                    delay=0.01)  # fmt: skip

    return FakeServer("openai", [], responder=answer)


def _project(ws: Path, url: str) -> None:
    write_project(ws, url)
    (ws / "a.txt").write_text("a fact\n")


def _usage_records(home: Path) -> int:
    found = 0
    for path in home.rglob("subagents/*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line).get("type") == "usage":
                found += 1
    return found


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_sigterm_mid_fleet_stops_every_child_and_keeps_their_usage(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    with _fleet_server() as srv:
        _project(ws, srv.url)
        proc = subprocess.Popen(
            [sys.executable, str(pyz), "run", "--output-format", "stream-json", "--yolo",
             "read forever"],
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while len(srv.requests) < 1 + 3 * CHILDREN and time.monotonic() < deadline:
                time.sleep(0.01)
            assert proc.poll() is None, proc.communicate()
            proc.send_signal(signal.SIGTERM)
            at_signal = len(srv.requests)
            time.sleep(2.0)  # the whole subtree stops within 2 s
            after_2s = len(srv.requests)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        time.sleep(0.3)
        final = len(srv.requests)
    # at most one request per child was already being sent when the signal came
    assert after_2s - at_signal <= CHILDREN, (at_signal, after_2s)
    assert final == after_2s, (after_2s, final)  # nothing at all after the 2 s
    events = _lines(out)
    subs = [e for e in events if e["type"] == "subagent"]
    assert {e["state"] for e in subs} >= {"running"}
    ended = {e["run_id"]: e["state"] for e in subs if e["state"] != "running"}
    assert len(ended) == CHILDREN and set(ended.values()) == {"cancelled"}, ended
    assert max(e["tokens"] for e in subs) >= 350  # live counters, not only the end
    # every child request that finished has its usage record (in-flight ones were cut)
    child_requests = final - 1
    recorded = _usage_records(tmp_path / "rx")
    assert child_requests - CHILDREN <= recorded <= child_requests, (recorded, child_requests)
    assert err.count("Traceback") == 0, err


def test_a_looping_fleet_stops_with_a_2000_token_run_budget(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    with _fleet_server() as srv:
        _project(ws, srv.url)
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "--yolo", "--max-tokens", "2000",
             "read forever"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        sent = len(srv.requests)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["stop_reason"] == "budget" and result["subtype"] == "budget_exhausted"
    assert result["is_error"] is False
    # the parent's 350, then the children share the 1650 left: they stop once it is
    # spent, each at most one request past it (they check before each request)
    assert sent <= 1 + 5 + CHILDREN, sent
    usage = result["usage"]
    assert usage["input_tokens"] + usage["output_tokens"] <= 2000 + CHILDREN * 350
