"""The fakes themselves: each wire format renders, records and injects faults."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fakes import FakeServer, Fault, ToolSpec, Turn


def _post(url: str, body: bytes = b'{"x":1}') -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()


def _data_lines(raw: bytes) -> list[dict]:
    out = []
    for line in raw.decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(json.loads(line[6:]))
    return out


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
def test_turn_renders_and_request_is_recorded(kind: str) -> None:
    turn = Turn.tools(
        [ToolSpec("read", '{"path": "a.txt"}'), ("grep", '{"pattern": "x"}')],
        text="hello there",
        reasoning="thinking",
    )
    with FakeServer(kind, [turn]) as srv:
        status, raw = _post(srv.url + "/v1/x?y=1", b'{"model":"m"}')
        assert status == 200
        events = _data_lines(raw)
        assert events
        assert srv.requests[0].path == "/v1/x?y=1"
        assert srv.requests[0].body == b'{"model":"m"}'
        assert srv.requests[0].json == {"model": "m"}
        assert srv.remaining == 0


def test_script_exhausted_is_a_400() -> None:
    with FakeServer("openai", []) as srv:
        status, body = _post(srv.url + "/chat/completions")
    assert status == 400
    assert b"script exhausted" in body


def test_status_fault_has_retry_after_and_request_id() -> None:
    with FakeServer("anthropic", [Fault.status(429, retry_after=0)]) as srv:
        req = urllib.request.Request(srv.url + "/v1/messages", data=b"{}")
        with pytest.raises(urllib.error.HTTPError) as ei:
            urllib.request.urlopen(req, timeout=5)
        with ei.value as e:
            assert e.code == 429
            assert e.headers["Retry-After"] == "0"
            assert e.headers["request-id"] == "req_fake_1"
            assert json.loads(e.read())["error"]["type"] == "rate_limit_error"


def test_reset_and_cut() -> None:
    with FakeServer("openai", [Fault.reset(), Turn(text="a b c d", cut_after=2)]) as srv:
        with pytest.raises((ConnectionError, http.client.HTTPException, urllib.error.URLError)):
            _post(srv.url + "/chat/completions")
        req = urllib.request.Request(srv.url + "/chat/completions", data=b"{}")
        with (
            urllib.request.urlopen(req, timeout=5) as resp,
            pytest.raises(http.client.IncompleteRead),
        ):
            resp.read()


def test_serve_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([Turn(text="hi").to_dict()]))
    port_file, log = tmp_path / "port", tmp_path / "req.jsonl"
    tests_dir = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakes.serve", "--kind", "openai", "--script", str(script),
         "--port-file", str(port_file), "--requests-log", str(log)],
        cwd=tests_dir,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not port_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        port = int(port_file.read_text())
        status, raw = _post(f"http://127.0.0.1:{port}/chat/completions")
        assert status == 200 and b"[DONE]" in raw
    finally:
        proc.terminate()
        proc.wait(10)
    assert json.loads(log.read_text().splitlines()[0])["path"] == "/chat/completions"


def test_steps_roundtrip_through_dicts() -> None:
    from fakes import step_from_dict

    steps = [
        Turn.tools([ToolSpec("a", '{"x":1}', id="c1")], text="t", delay=0.1, cut_after=3),
        Fault.status(429, retry_after=2, message="slow down"),
        Fault.reset(),
        Fault.stall(1.5),
        Fault.context_overflow(),
    ]
    assert [step_from_dict(json.loads(json.dumps(s.to_dict()))) for s in steps] == steps
    assert step_from_dict({"text": "plain"}) == Turn(text="plain")
