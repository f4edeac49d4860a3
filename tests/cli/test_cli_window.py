"""``reasonix run`` against a local server whose window is smaller than configured.

Real parts: the CLI in a subprocess (exit codes and stdout as a script sees
them), the loopback fake answering like llama-server started with ``-c 8192``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fakes import FakeServer, Turn, dialects

ROOT = Path(__file__).resolve().parents[2]
NO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 1,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
}


def _project(ws: Path, url: str, window: int) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "local/m"\n[sandbox]\nbash = "off"\n'
        f'[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "{url}/v1"\n'
        f'models = ["m"]\ncontext_window = {window}\n'
    )


def _run(ws: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "reasonix", "run", *args], cwd=ws, input=stdin, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _result(out: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _messages(ws: Path) -> list[dict[str, Any]]:
    files = sorted((Path(os.environ["REASONIX_HOME"])).rglob("*.jsonl"))
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    return [r for r in records if r.get("type") == "message"]


def test_the_json_result_reports_the_window_learned_from_the_refusal(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    long = " ".join(["alpha"] * 5000)
    with FakeServer("openai") as srv:
        _project(ws, srv.url, 32768)
        srv.add(Turn.text_only("one", usage=NO_USAGE), Turn.text_only("two", usage=NO_USAGE))
        assert _run(ws, "--json", long + " first").returncode == 0
        assert _run(ws, "--json", "-c", long + " second").returncode == 0
        srv.add(dialects.OVERFLOWS["llama.cpp"](8192, 10100))
        srv.add(Turn.text_only("DIGEST", usage=NO_USAGE), Turn.text_only("done", usage=NO_USAGE))
        out = _run(ws, "--json", "-c", "what next?")
        assert len(srv.requests) == 5  # refused, one summary, one retry
    assert out.returncode == 0, out.stderr
    result = _result(out)
    assert result["result"] == "done"
    assert result["context_window"] == {
        "configured": 32768,
        "served": 8192,
        "effective": 8192,
        "source": "its context-overflow error",
    }


def test_a_message_that_can_never_fit_exits_1_and_changes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai") as srv:
        _project(ws, srv.url, 8192)
        out = _run(ws, "--json", stdin=" ".join(["gamma"] * 14000))
        assert srv.requests == []  # no model request, no summary request
    assert out.returncode == 1
    error = _result(out)["error"]
    assert error["type"] == "InputTooLarge" and error["kind"] == "context.exhausted"
    assert "your message is about" in error["message"]
    assert "the model's window is 8192 tokens" in error["message"]
    assert _messages(ws) == []  # the transcript holds no part of it
    text = _run(ws, stdin=" ".join(["gamma"] * 14000))
    assert text.returncode == 1 and "your message is about" in text.stderr
    assert "Traceback" not in text.stderr


def test_text_mode_says_the_server_serves_less_than_configured(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    meta = {"GET /props": dialects.llama_cpp_props(8192)}
    with FakeServer("openai", [Turn.text_only("hello", usage=NO_USAGE)], meta=meta) as srv:
        _project(ws, srv.url, 32768)
        out = _run(ws, "hi")
    assert out.returncode == 0, out.stderr
    assert "the server's window is 8192 tokens, not the configured 32768" in out.stderr
    assert "llama.cpp GET /props" in out.stderr
