"""Cache-break forecasts: /model and /effort ask first with the tokens and money at stake."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Turn

from reasonix.agent.cachebreak import forecast
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.cancel import Cancel

ROOT = Path(__file__).resolve().parents[2]


def _project(ws: Path, url: str, extra: str = "") -> None:
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model", "other-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        "[providers.prices.fake-model]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n"
        "[providers.prices.other-model]\ninput = 3.0\noutput = 6.0\ncache_read = 0.3\n" + extra
    )


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    d = tmp_path / "ws"
    d.mkdir()
    return d


def test_the_model_switch_forecast_matches_what_the_next_request_misses(ws: Path) -> None:
    warm = {"input_tokens": 40_000, "output_tokens": 50, "cache_read_tokens": 39_500}
    cold = {"input_tokens": 41_200, "output_tokens": 50, "cache_read_tokens": 0}
    with FakeServer("openai", [Turn(text="a", usage=warm), Turn(text="b", usage=cold)]) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            list(rt.runner.run("first", Cancel()))
            reg = build_commands(rt)
            ask = reg.run("/model fake/other-model")
            assert ask.confirm and ask.confirm_command == "/model fake/other-model --yes"
            tokens = int(
                re.search(r"about ([\d,]+) prompt tokens", ask.confirm)[1].replace(",", "")
            )
            assert "$0.1080 more" in ask.confirm  # 40,000 × (3.0 − 0.3) / 1M at the new price
            assert rt.resolved.ref == "fake/fake-model"  # nothing switched before the answer
            reg.run(ask.confirm_command)
            list(rt.runner.run("second", Cancel()))
            last = rt.telemetry.per_request[-1]
            missed = last.input_tokens - last.cache_read_tokens
            assert abs(tokens - missed) <= 0.1 * missed
            assert [b.reason for b in rt.cache_breaks] == ["model"]
            assert reg.run("/effort high").confirm  # a second kind of break asks too
        finally:
            rt.close()


def test_no_question_without_cache_or_when_turned_off(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("a")]) as srv:
        _project(ws, srv.url, "[ui]\nconfirm_cache_break = false\n")
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            reg = build_commands(rt)
            assert not reg.run("/model fake/other-model").confirm  # nothing cached yet
            list(rt.runner.run("first", Cancel()))
            assert not reg.run("/effort low").confirm  # asked for no confirmation
        finally:
            rt.close()


def test_unpriced_models_say_unknown() -> None:
    assert "unknown amount" in forecast("model", 1000, None).text()
    assert forecast("effort", 2_000_000, {"input": 1.0, "cache_read": 0.25}).cost == 1.5


def test_run_json_reports_a_resume_under_another_model(ws: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FakeServer("openai", [Turn.text_only("a"), Turn.text_only("b")]) as srv:
        _project(ws, srv.url)
        base = [sys.executable, "-m", "reasonix", "run", "--json"]
        first = subprocess.run([*base, "hello"], cwd=ws, env=env, capture_output=True,
                               text=True, timeout=60)  # fmt: skip
        assert json.loads(first.stdout)["cache_breaks"] == []
        again = subprocess.run([*base, "-c", "--model", "fake/other-model", "more"], cwd=ws,
                               env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    breaks = json.loads(again.stdout)["cache_breaks"]
    assert [b["reason"] for b in breaks] == ["model"] and breaks[0]["tokens"] > 0
    assert breaks[0]["cost"] is not None


def test_changed_instructions_and_mcp_servers_are_named_at_the_next_turn(ws: Path) -> None:
    from reasonix.agent.events import Notice

    (ws / "REASONIX.md").write_text("Use tabs.\n")
    script = [Turn.text_only("a"), Turn.text_only("b"), Turn.text_only("c")]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            list(rt.runner.run("first", Cancel()))
            (ws / "REASONIX.md").write_text("Use spaces.\n")
            with (ws / "reasonix.toml").open("a") as fh:
                fh.write('[[mcp.servers]]\nname = "later"\ncommand = "true"\n')
            notes = [e.text for e in rt.runner.run("second", Cancel())
                     if isinstance(e, Notice) and e.kind == "cache_break"]  # fmt: skip
            assert any("instruction files changed" in n and "prompt tokens" in n for n in notes)
            assert any("MCP servers changed" in n for n in notes)
            again = [e for e in rt.runner.run("third", Cancel())
                     if isinstance(e, Notice) and e.kind == "cache_break"]  # fmt: skip
            assert again == []  # said once
            sent = srv.requests[1].json["messages"][1]["content"]
            assert "Use tabs." in sent and "Use spaces." not in sent  # the session kept its copy
        finally:
            rt.close()
