"""Issue 12 items 2, 6, 7 at the CLI: structured output survives damaged state,
carries the warnings text mode prints, and output paths are checked up front.

- ``run -c --output-format json`` over a damaged transcript prints exactly one
  result object (exit 0) whose ``warnings`` name the skipped records;
- unknown config keys and skipped MCP servers appear in ``warnings`` (json)
  and as ``notice``/``warning`` events (stream-json), as they do on stderr;
- ``--metrics`` into a missing directory fails before the first request
  (exit 2, no request sent); a metrics file that cannot be written at the end
  is exit 1 with the reason in the result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Turn

ROOT = Path(__file__).resolve().parents[2]


def _project(tmp_path: Path, url: str, extra: str = "") -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    ws.mkdir(exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n' + extra + '\n[[providers]]\nname = "fake"\n'
        f'kind = "openai"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
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


def _one_result(stdout: str) -> dict[str, Any]:
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout
    obj: dict[str, Any] = json.loads(lines[0])
    assert obj["type"] == "result"
    return obj


DAMAGE = [
    '{"type":"message","message":{"role":"alien"}}',
    '{"type":"message","message":"str"}',
    '{"type":"message"}',
    '{"type":"message","message":{"role":"assistant","tool_calls":[{"bad":1}]}}',
]


@pytest.mark.parametrize("line", DAMAGE)
def test_continue_over_a_damaged_transcript_prints_one_result(tmp_path: Path, line: str) -> None:
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        assert _run(ws, env, "--json", "hi").returncode == 0
        (transcript,) = (tmp_path / "rx" / "sessions").glob("*/*.jsonl")
        with open(transcript, "a") as fh:
            fh.write(line + "\n")
        proc = _run(ws, env, "-c", "--output-format", "json", "again")
    assert proc.returncode == 0, proc.stderr
    result = _one_result(proc.stdout)
    assert result["result"] == "two" and result["is_error"] is False
    assert any("damaged record" in w and "line " in w for w in result["warnings"])
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_malformed_lease_does_not_break_continue(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        assert _run(ws, env, "--json", "hi").returncode == 0
        (transcript,) = (tmp_path / "rx" / "sessions").glob("*/*.jsonl")
        transcript.with_suffix(".lease").write_text('{"pid":"abc"}')
        proc = _run(ws, env, "-c", "--json", "again")
    assert proc.returncode == 0, proc.stderr
    assert _one_result(proc.stdout)["result"] == "two"


MCP_MISSING = (
    '\n[[mcp.servers]]\nname = "gone"\ntype = "stdio"\ncommand = "/nonexistent/mcp-server"\n'
)


def test_warnings_reach_the_json_result_and_stream_events(tmp_path: Path) -> None:
    extra = "no_such_key = 1\n[agent]\nalso_unknown = true\n" + MCP_MISSING
    with FakeServer(
        "openai", [Turn.text_only("a"), Turn.text_only("b"), Turn.text_only("c")]
    ) as srv:
        ws, env = _project(tmp_path, srv.url, extra)
        text = _run(ws, env, "hi")
        js = _run(ws, env, "--output-format", "json", "hi")
        stream = _run(ws, env, "--output-format", "stream-json", "hi")
    assert text.returncode == js.returncode == stream.returncode == 0, js.stderr
    warnings = _one_result(js.stdout)["warnings"]
    assert any("no_such_key" in w for w in warnings)
    assert any("also_unknown" in w for w in warnings)
    assert any("MCP server gone" in w for w in warnings)
    for w in warnings:  # the same notices text mode prints on stderr
        assert w in text.stderr
    events = [json.loads(x) for x in stream.stdout.splitlines()]
    shown = [e["text"] for e in events if e["type"] == "notice" and e["kind"] == "warning"]
    assert shown == warnings == events[-1]["warnings"]


def test_no_warnings_is_an_empty_list(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("a")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        assert _one_result(_run(ws, env, "--json", "hi").stdout)["warnings"] == []


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("target", ["missing/dir/m.json", "is-a-dir"])
def test_an_unwritable_metrics_path_fails_before_the_first_request(
    tmp_path: Path, fmt: str, target: str
) -> None:
    with FakeServer("openai", [Turn.text_only("a")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        (tmp_path / "is-a-dir").mkdir()
        proc = _run(ws, env, "--output-format", fmt, "--metrics", str(tmp_path / target), "hi")
        assert srv.requests == []  # the task never ran
    assert proc.returncode == 2
    assert "--metrics" in (proc.stdout if fmt == "json" else proc.stderr)
    if fmt == "json":
        assert _one_result(proc.stdout)["error"]["type"] == "UsageError"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_metrics_write_that_fails_at_the_end_is_exit_1(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("a")]) as srv:
        ws, env = _project(tmp_path, srv.url)
        proc = _run(ws, env, "--json", "--metrics", "/dev/full", "hi")
    assert proc.returncode == 1
    result = _one_result(proc.stdout)
    assert result["is_error"] is True and "--metrics" in result["error"]["message"]
