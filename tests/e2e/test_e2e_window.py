"""The built .pyz against a fake llama-server started with ``-c 8192`` but configured 32768.

The start-up probe reads ``GET /props``; a message that cannot fit 8192 is
refused before any model request; a long session that the probe could not
warn about recovers from the server's own refusal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from e2e_task_env import clean_env, write_project
from fakes import FakeServer, Turn, dialects

USAGE = {"input_tokens": 0, "output_tokens": 1, "cache_read_tokens": 0,
         "cache_write_tokens": 0, "reasoning_tokens": 0}  # fmt: skip


def _ws(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url + "/v1")
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write("context_window = 32768\n")
    return ws, clean_env(tmp_path, source_tree=False)


def _run(
    pyz: Path, ws: Path, env: dict[str, str], *args: str, stdin: str = ""
) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", *args], cwd=ws, env=env, input=stdin,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr
    result = dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    result["exit"] = proc.returncode
    return result


def test_the_probe_refuses_a_message_that_cannot_fit(tmp_path: Path, pyz: Path) -> None:
    with FakeServer("openai", meta={"GET /props": dialects.llama_cpp_props(8192)}) as srv:
        ws, env = _ws(tmp_path, srv.url)
        result = _run(pyz, ws, env, stdin=" ".join(["gamma"] * 14000))
        assert srv.requests == []  # not even one model request
    assert result["exit"] == 1
    error = result["error"]
    assert isinstance(error, dict) and error["kind"] == "context.exhausted"
    assert "your message is about" in error["message"] and "window is 8192" in error["message"]
    assert result["context_window"] == {
        "configured": 32768, "served": 8192, "effective": 8192, "source": "llama.cpp GET /props",
    }  # fmt: skip


def test_a_long_session_learns_the_window_from_the_refusal(tmp_path: Path, pyz: Path) -> None:
    long = " ".join(["alpha"] * 5000)
    with FakeServer("openai") as srv:
        ws, env = _ws(tmp_path, srv.url)
        srv.add(Turn.text_only("one", usage=USAGE), Turn.text_only("two", usage=USAGE))
        assert _run(pyz, ws, env, long + " first")["exit"] == 0
        assert _run(pyz, ws, env, "-c", long + " second")["exit"] == 0
        srv.add(dialects.OVERFLOWS["vllm"](8192, 10100))
        srv.add(Turn.text_only("DIGEST", usage=USAGE), Turn.text_only("done", usage=USAGE))
        result = _run(pyz, ws, env, "-c", "what next?")
        assert len(srv.requests) == 5  # the refusal, one summary, one retry
    assert result["exit"] == 0 and result["result"] == "done"
    window = result["context_window"]
    assert isinstance(window, dict) and window["served"] == 8192 and window["effective"] == 8192
