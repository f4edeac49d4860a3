"""QA: undecodable bytes (argv/stdin/file names arrive as lone surrogates) never
break the transcript or the provider request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_scripted import ScriptedProvider, calls, text

from reasonix.agent.loop import Agent
from reasonix.agent.prompt import system_prompt, valid_text
from reasonix.agent.session import Session, read_records
from reasonix.cancel import Cancel
from reasonix.tool import Registry, ToolContext
from reasonix.tool.base import FunctionTool

ESCAPED = b"fix \xff\xfe bug".decode("utf-8", "surrogateescape")


def test_valid_text_replaces_escaped_bytes_and_keeps_good_text() -> None:
    assert valid_text("plain ascii") == "plain ascii"
    assert valid_text("résumé ✓ 中文") == "résumé ✓ 中文"
    assert valid_text(ESCAPED) == "fix \ufffd\ufffd bug"
    assert valid_text("lone \ud800 high") == "lone ? high"
    assert "\udcff" not in system_prompt(Path(b"/tmp/d\xffir".decode("utf-8", "surrogateescape")))


def test_session_append_survives_lone_surrogates(workspace: Path) -> None:
    with Session.create(workspace, {"workspace_raw": ESCAPED}) as s:
        s.append({"type": "note", "text": ESCAPED})
        path = s.path
    records = read_records(path)
    assert records[0]["workspace_raw"] == ESCAPED  # escaped in the file, round-trips exactly
    assert records[-1]["text"] == ESCAPED
    path.read_bytes().decode("utf-8")  # the transcript stays valid UTF-8


def test_turn_with_escaped_prompt_and_tool_output(
    make_agent: Callable[..., tuple[Agent, ScriptedProvider]],
) -> None:
    reg = Registry()

    def ls(args: dict[str, Any], ctx: ToolContext) -> str:
        return "od" + b"\xff".decode("utf-8", "surrogateescape") + "d.txt"

    reg.add(FunctionTool("ls", "list", {"type": "object", "properties": {}}, ls, read_only=True))
    agent, prov = make_agent([calls(("ls", "{}")), text("done")], reg)
    events = list(agent.run(ESCAPED, Cancel()))
    assert type(events[-1]).__name__ == "Done"
    last = prov.requests[-1].messages
    assert last[0].content == "fix \ufffd\ufffd bug"
    assert last[-1].content.startswith("od") and last[-1].content.endswith("d.txt")
    for request in prov.requests:  # what a provider would put on the wire
        json.dumps([m.to_dict() for m in request.messages], ensure_ascii=False).encode("utf-8")
    assert agent.session.title == "fix \ufffd\ufffd bug"
