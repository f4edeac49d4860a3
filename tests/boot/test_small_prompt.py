"""A small context window gets a small prompt (issue 37, item 4).

Real parts: the composition root, real sessions under the per-test home, the
loopback fake answering like llama-server started with ``-c 8192``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Turn, dialects
from fakes.tight import TightWindow

from reasonix.agent import oversize
from reasonix.agent.events import Done, Error, Notice
from reasonix.agent.tokens import estimate_text, estimate_tools
from reasonix.agent.toolpin import TOOLS
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.smallprompt import CORE_TOOLS, FIXED_SHARE
from reasonix.cancel import Cancel
from reasonix.errors import InputTooLarge

WINDOW = 8192


def _project(ws: Path, url: str, window: int) -> None:
    (ws / "reasonix.toml").write_text(
        'default_model = "local/m"\n[sandbox]\nbash = "off"\n'
        f'[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "{url}/v1"\n'
        f'models = ["m"]\ncontext_window = {window}\n'
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _turn(rt: Any, text: str) -> list[Any]:
    return list(rt.runner.run(text, Cancel()))


def _fixed(body: dict[str, Any]) -> int:
    """The fixed prompt of a first request: system prompt, tools, the first turn's
    instructions (all of the first user message before the user's own words)."""
    msgs = body["messages"]
    system = "".join(m["content"] for m in msgs if m["role"] == "system")
    first = next(m["content"] for m in msgs if m["role"] == "user")
    head = first.rsplit("</instructions>", 1)[0] if "</instructions>" in first else ""
    tools = [t["function"] for t in body.get("tools", [])]
    return estimate_text(system) + estimate_tools(tools) + estimate_text(head)


def _words(n: int, word: str) -> str:
    return " ".join([word] * n)


def test_a_fresh_session_takes_a_1000_then_a_1500_token_message(ws: Path) -> None:
    big = "# Project rules\n" + "\n".join(f"- rule {i}: keep the code tidy" for i in range(300))
    (ws / "AGENTS.md").write_text(big)
    tight = TightWindow(WINDOW, tool=("ls", "{}"), rounds=0, factor=1.15)
    first_msg, second_msg = _words(1000, "alpha"), _words(1500, "beta")
    assert 950 <= estimate_text(first_msg) <= 1100 and 1400 <= estimate_text(second_msg) <= 1650
    with FakeServer("openai", responder=tight) as srv:
        _project(ws, srv.url, WINDOW)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            one = _turn(rt, first_msg)
            two = _turn(rt, second_msg)
        finally:
            rt.close()
    for events in (one, two):
        assert not [e for e in events if isinstance(e, Error)]
        assert isinstance(events[-1], Done)
    assert tight.refused == []  # no HTTP 400 anywhere, let alone one reaching the user
    body = srv.requests[0].json
    assert _fixed(body) <= FIXED_SHARE * WINDOW
    names = {t["function"]["name"] for t in body["tools"]}
    assert names == {*CORE_TOOLS, "use_capability"}
    first = next(m["content"] for m in body["messages"] if m["role"] == "user")
    assert 'name="AGENTS.md"' in first and "rule 299" not in first  # named, not included
    assert any("use_capability (search)" in n for n in rt.notices)


def test_a_large_window_keeps_the_full_prompt(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        _project(ws, srv.url, 65536)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            _turn(rt, "hi")
        finally:
            rt.close()
    names = {t["function"]["name"] for t in srv.requests[0].json["tools"]}
    assert {"multi_edit", "todo_write", "memory"} <= names


def test_the_probe_window_decides_and_a_resume_keeps_the_choice(ws: Path) -> None:
    meta = {"GET /props": dialects.llama_cpp_props(WINDOW)}
    script = [Turn.text_only("one"), Turn.text_only("two")]
    with FakeServer("openai", script, meta=meta) as srv:
        _project(ws, srv.url, 32768)  # configured larger; the server serves 8192
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            _turn(rt, "first")
            records = list(rt.session.iter_type(TOOLS))
        finally:
            rt.close()
        assert len(records) == 1 and records[0].get("small") is True
        # the next run is configured with a large window and no probe answers: still small
        (ws / "reasonix.toml").write_text(
            (ws / "reasonix.toml").read_text().replace("32768", "65536")
        )
        again = build_runtime(RuntimeOptions(workspace=ws, continue_latest=True))
        try:
            _turn(again, "second")
        finally:
            again.close()
    first, second = srv.requests[-2].json, srv.requests[-1].json
    assert json.dumps(second["tools"]) == json.dumps(first["tools"])  # byte for byte
    assert len(second["tools"]) == len(CORE_TOOLS) + 1


def test_use_capability_searches_and_calls_the_builtins_behind_it(ws: Path) -> None:
    (ws / "a.txt").write_text("one\n")
    search = '{"action": "search", "query": "move or rename a file"}'
    move = {"source_path": "a.txt", "destination_path": "b.txt"}
    call = json.dumps({"action": "call", "tool": "move_file", "arguments": move})
    script = [
        Turn.tools([("use_capability", search)]),
        Turn.tools([("use_capability", call)]),
        Turn.text_only("moved"),
    ]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url, WINDOW)
        rt = build_runtime(RuntimeOptions(workspace=ws, yolo=True))
        try:
            _turn(rt, "rename a.txt to b.txt")
        finally:
            rt.close()
    found = srv.requests[1].json["messages"][-1]["content"]
    assert '"tool": "move_file"' in found and "input_schema" in found
    assert (ws / "b.txt").read_text() == "one\n" and not (ws / "a.txt").exists()


def test_a_refused_message_is_told_what_takes_the_room(ws: Path) -> None:
    quiet = {"input_tokens": 0, "output_tokens": 1}  # no usage: the estimate stays uncalibrated
    with FakeServer("openai", [Turn.text_only("ok", usage=quiet)]) as srv:
        _project(ws, srv.url, WINDOW)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            _turn(rt, _words(300, "delta"))
            events = _turn(rt, _words(7000, "gamma"))
        finally:
            rt.close()
        assert len(srv.requests) == 1  # the refused message sent nothing
    err = events[-1]
    assert isinstance(err, Error) and isinstance(err.error, InputTooLarge)
    got = re.search(
        r"your message is about (\d+) tokens; the model's window is 8192 tokens; the fixed "
        r"prompt \(system prompt, 8 tool definitions\) takes about (\d+) and the history "
        r"about (\d+) \(compacted when needed\)",
        err.message,
    )
    assert got is not None, err.message
    message, fixed, history = (int(g) for g in got.groups())
    assert 6500 <= message <= 7700 and 0 < fixed <= FIXED_SHARE * WINDOW and 250 <= history < 700


def test_the_first_turns_instructions_count_as_fixed_prompt_not_as_the_message() -> None:
    block = "<instructions>\n" + _words(3000, "rule") + "\n</instructions>"
    content = f"{block}\n\n<skills>\n- tidy\n</skills>\n\n" + _words(500, "ask")
    cut = oversize.first_turn_preamble(content)
    assert content[cut:] == _words(500, "ask")
    text = oversize.room_text(content, 3600, 1500, 8192, sent=False, tools=8, history_tokens=0)
    mine = int(re.search(r"your message is about (\d+) tokens", text).group(1))  # type: ignore[union-attr]
    assert 450 <= mine <= 650  # the 3000 words of instructions are not "your message"
    assert "instructions (about" in text and "tool definitions and instructions" in text


def test_a_window_learned_from_a_refusal_switches_the_session_once(ws: Path) -> None:
    tight = TightWindow(WINDOW, tool=("ls", "{}"), rounds=0, factor=1.15)
    with FakeServer("openai", responder=tight) as srv:
        _project(ws, srv.url, 32768)  # no probe answers: the refusal is the first word of it
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            one = _turn(rt, _words(1000, "alpha"))
            records = [bool(r.get("small")) for r in rt.session.iter_type(TOOLS)]
        finally:
            rt.close()
        again = build_runtime(RuntimeOptions(workspace=ws, continue_latest=True))
        try:
            two = _turn(again, _words(1500, "beta"))
        finally:
            again.close()
    assert tight.refused == [0]  # the first request only; its retry and the rest fit
    assert isinstance(one[-1], Done) and isinstance(two[-1], Done)
    assert records == [False, True]  # switched once, and the choice is stored
    sent = [{t["function"]["name"] for t in r.json["tools"]} for r in srv.requests]
    assert len(sent[0]) > 20 and sent[1] == sent[2] == {*CORE_TOOLS, "use_capability"}
    notices = [e.text for e in one if isinstance(e, Notice)]
    assert any("through use_capability (search)" in n for n in notices)


def test_a_call_through_use_capability_is_judged_as_the_builtin(ws: Path) -> None:
    (ws / "a.txt").write_text("one\n")
    move = {"source_path": "a.txt", "destination_path": "b.txt"}
    call = json.dumps({"action": "call", "tool": "move_file", "arguments": move})
    script = [Turn.tools([("use_capability", call)]), Turn.text_only("could not")]
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url, WINDOW)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write('[permissions]\ndeny = ["move_file"]\n')
        rt = build_runtime(RuntimeOptions(workspace=ws, yolo=True))
        try:
            _turn(rt, "rename a.txt to b.txt")
        finally:
            rt.close()
    result = srv.requests[1].json["messages"][-1]["content"]
    assert "blocked" in result and "move_file" in result
    assert (ws / "a.txt").exists() and not (ws / "b.txt").exists()
