"""Issue 36: a sub-agent's live counters reach the browser as ``subagent`` SSE events,
and the session's status lists this turn's sub-agents."""

from __future__ import annotations

import json
from pathlib import Path

from fakes import FakeServer, ToolSpec, Turn
from serve_kit import Client, running, turn_end, write_workspace

USAGE = {"input_tokens": 300, "output_tokens": 50}


def script() -> list[Turn]:
    ask = ToolSpec("read_only_task", json.dumps({"prompt": "what does calc.py do?"}), id="q0")
    return [
        Turn.tools([ask], usage=USAGE),
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], usage=USAGE),  # the child
        Turn.text_only("it subtracts", usage=USAGE),  # the child's answer
        Turn.text_only("calc.add subtracts", usage=USAGE),  # the parent's
    ]


def test_subagent_counters_stream_and_show_in_the_status(tmp_path: Path) -> None:
    with FakeServer("openai", script()) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url, extra="[agent]\nsubagent_max_turns = 5\n")
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            stream = c.events(sid)
            assert c.post(f"/api/sessions/{sid}/prompt", {"text": "explain calc"})[0] == 200
            seen = stream.until(turn_end)
            seen += stream.until(lambda e: e["type"] == "status")
            stream.close()
    subs = [e for e in seen if e["type"] == "subagent"]
    assert [(s["state"], s["tokens"], s["turns"]) for s in subs] == [
        ("running", 0, 0), ("running", 350, 1), ("running", 700, 2), ("complete", 700, 2),
    ]  # fmt: skip
    assert subs[-1]["call_id"] == "q0" and subs[-1]["limits"] == {"turns": 5.0}
    status = seen[-1]
    assert [s["state"] for s in status["subagents"]] == ["complete"]
