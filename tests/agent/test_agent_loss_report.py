"""Compaction loss reports and pins, over a real runtime and a small context window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

from reasonix.agent.compaction import SUMMARY_INSTRUCTION
from reasonix.agent.events import Notice
from reasonix.agent.loss import loss_report
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.cancel import Cancel
from reasonix.provider.types import Message, Role

FILLER = "Here is more background about the project, for context only. " * 90
VAGUE = "The user is working on a bug fix; some tests were run and discussed."


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _summary_requests(srv: FakeServer) -> list[dict[str, object]]:
    return [r.json for r in srv.requests
            if str(r.json["messages"][-1]["content"]).startswith(SUMMARY_INSTRUCTION)]  # fmt: skip


def _turn(rt: object, srv: FakeServer, text: str, reply: Turn) -> list[str]:
    """One user turn whose scripted usage matches the prompt (as a real server's would);
    a summary request in the turn gets a vague summary. Returns loss-report notices."""
    ctx = rt.context  # type: ignore[attr-defined]
    size = ctx.estimate() + len(text) // 3
    reply.usage = {**reply.usage, "input_tokens": size}
    srv.add(Turn(text=VAGUE, usage={"input_tokens": size}))  # used if a summary comes first
    srv.add(reply)
    before = len(srv.requests)
    notes = [e.text for e in rt.runner.run(text, Cancel())  # type: ignore[attr-defined]
             if isinstance(e, Notice) and e.kind == "compaction_loss"]  # fmt: skip
    if len(srv.requests) - before == 1 and srv.remaining:  # no summary: the vague one is left
        srv.script.pop(srv._next)  # type: ignore[attr-defined]
    return notes


def test_the_report_names_what_the_summary_dropped_and_pins_survive(ws: Path) -> None:
    failing = json.dumps({"command": "python3 -c \"raise SystemExit('FAILED test_nested')\""})
    with FakeServer("openai", []) as srv:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/fake-model"\n[sandbox]\nbash = "off"\n'
            f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{srv.url}"\n'
            'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\ncontext_window = 16000\n'
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, yolo=True, interactive=True))
        try:
            srv.add(Turn.tools([ToolSpec("bash", failing)]))
            first = "Please fix src/parser.py. Never touch migrations/ in this repo."
            reports = _turn(rt, srv, first, Turn.text_only("It fails."))
            for i in range(30):  # the small prompt of a 16000 window (issue 37) leaves more room
                if reports:
                    break
                reports = _turn(rt, srv, f"{FILLER} (part {i})", Turn.text_only(f"noted {i}"))
            assert reports, "no automatic summary happened"
            text = reports[0]
            assert "src/parser.py" in text and "Never touch migrations/" in text
            assert "raise SystemExit" in text  # the failing command
            reg = build_commands(rt)
            assert "pinned (1)" in reg.run("/pin never touch migrations/").text
            assert reg.run("/pins").text == "1. never touch migrations/"
            assert "never touch migrations/" in reg.run("/context").text
            summaries = len(_summary_requests(srv))
            later: list[str] = []
            for i in range(30):  # more turns until the next automatic summary
                later += _turn(rt, srv, f"{FILLER} (later {i})", Turn.text_only(f"more {i}"))
                if len(_summary_requests(srv)) > summaries:
                    break
            assert len(_summary_requests(srv)) > summaries, "no second summary happened"
            last = _summary_requests(srv)[-1]
            assert "never touch migrations/" in str(last["messages"][-1]["content"])
            assert later and not any("Never touch migrations/" in t for t in later)
            assert rt.pins() == ["never touch migrations/"]
        finally:
            rt.close()
    again = build_runtime(RuntimeOptions(workspace=ws, continue_latest=True))
    try:
        assert again.pins() == ["never touch migrations/"]  # pins survive a resume
        system = srv.requests[0].json["messages"][0]["content"]
        assert "never touch migrations/" not in system  # and never enter the system prompt
    finally:
        again.close()


def test_a_summary_that_keeps_everything_reports_nothing() -> None:
    replaced = [Message(Role.USER, "Rename parse_expr in src/parser.py; the port is 8080.")]
    kept = loss_report(replaced, "Rename parse_expr in src/parser.py (port 8080).")
    assert kept.empty
    lost = loss_report(replaced, "Rename a function.")
    assert lost.counts == {"paths": 1, "numbers": 1, "symbols": 1}
    assert loss_report(replaced, "Rename a function.", pins=["src/parser.py"]).counts.get(
        "paths") is None  # fmt: skip
