"""The ``history`` tool over real transcripts, and paging full tool results (MEM-1, CTX-5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reasonix.agent.memory.history import (
    PAGE_CHARS,
    HistorySource,
    history_tool,
    session_tool_result_tool,
    tool_result_page,
)
from reasonix.agent.session import Session
from reasonix.config.paths import state_dir
from reasonix.provider.types import Message, Role, ToolCall
from reasonix.tool import ToolContext, ToolResult


def run(tool: Any, **args: Any) -> tuple[bool, str]:
    res = tool.execute(json.dumps(args), ToolContext())
    return res.is_error, res.content


@pytest.fixture
def sessions(tmp_path: Path) -> tuple[Path, Session]:
    ws = tmp_path / "ws"
    ws.mkdir()
    with Session.create(ws) as old:
        old.append_message(Message(Role.USER, "we chose the flux capacitor design"))
        old.append_message(Message(Role.ASSISTANT, "noted: flux capacitor"))
    other = tmp_path / "other"
    other.mkdir()
    with Session.create(other) as foreign:
        foreign.append_message(Message(Role.USER, "the zeppelin hangar is in another project"))
    archive = state_dir() / "archive"
    archive.mkdir(parents=True)
    (archive / "old-1.jsonl").write_text(
        json.dumps({"type": "message", "message": {"role": "user", "content": "archived quasar"}})
        + "\n"
    )
    live = Session.create(ws)
    for i in range(8):
        live.append_message(Message(Role.USER, f"step {i} about ordinary things"))
    live.append_message(Message(Role.ASSISTANT, "the answer mentions a unique marmoset"))
    return ws, live


def test_scopes(sessions: tuple[Path, Session]) -> None:
    ws, live = sessions
    src = HistorySource.for_workspace(ws, current=lambda: (live.id, live.records()))
    tool = history_tool(src)
    _, out = run(tool, query="marmoset", scope="session")
    assert out.startswith(f"{live.id}#") and "marmoset" in out
    _, out = run(tool, query="flux capacitor", scope="session")
    assert out == "(no matches)"
    _, out = run(tool, query="flux capacitor", scope="project")
    assert "flux capacitor" in out
    _, out = run(tool, query="zeppelin hangar", scope="project")
    assert out == "(no matches)"
    _, out = run(tool, query="zeppelin hangar", scope="global")
    assert "zeppelin" in out
    _, out = run(tool, query="quasar", scope="global")
    assert "old-1#0" in out
    live.close()


def test_around_returns_a_bounded_window(sessions: tuple[Path, Session]) -> None:
    ws, live = sessions
    src = HistorySource.for_workspace(ws, current=lambda: (live.id, live.records()))
    tool = history_tool(src)
    _, out = run(tool, query="step 4 ordinary", scope="session", limit=1)
    hit = out.split()[0]
    err, around = run(tool, operation="around", id=hit, window=2)
    assert not err
    lines = around.splitlines()
    assert len(lines) == 5 and lines[2].startswith(f"> {hit}")
    err, _ = run(tool, operation="around", id="nonsense")
    assert err
    live.close()


def test_tool_result_pages_raw_content(tmp_path: Path) -> None:
    full = "".join(f"{i:06d}\n" for i in range(5000))  # 35000 characters
    result = ToolResult(content=full)
    with Session.create(tmp_path) as s:
        s.append_message(Message(Role.ASSISTANT, "", [ToolCall("c1", "bash", "{}")]))
        s.append_message(
            Message(Role.TOOL, result.content, tool_call_id="c1", name="bash"),
            raw_content=result.raw_content,
        )
        assert len(result.content.encode()) <= 32768 and result.raw_content == full
        pages = -(-len(full) // PAGE_CHARS)
        texts = [tool_result_page(s.records(), "c1", p) for p in range(1, pages + 1)]
        assert "".join(t.split("\n", 1)[1] for t in texts) == full
        assert texts[0].startswith(f"[tool result c1: page 1 of {pages}")
        tool = session_tool_result_tool(s.records)
        err, out = run(tool, tool_call_id="c1", page=pages + 1)
        assert err
        err, out = run(tool, tool_call_id="nope")
        assert err
        err, out = run(tool, tool_call_id="c1", page=2)
        assert not err and len(out.encode()) <= 32768
