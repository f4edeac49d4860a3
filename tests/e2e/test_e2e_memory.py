"""Memory end to end: headless ``reasonix run`` against the loopback fake.

A project fact saved headless is recalled in the next run's user turn while
the system prompt and tools bytes stay identical; sensitive or global saves
are refused headless; ``history`` finds an earlier session; and
``use_capability`` pages a tool result that was clipped at 32 KiB.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

FACT = "The release checklist lives in docs/RELEASING.md and needs two reviewers"


def project(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url)
    return ws, clean_env(tmp_path)


def run(ws: Path, env: dict[str, str], url: str, prompt: str) -> dict[str, Any]:
    write_project(ws, url)  # each run gets its own fake server
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix", "run", "--output-format", "json", prompt],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def system_and_tools(body: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(body["messages"][0], sort_keys=True), json.dumps(
        body["tools"], sort_keys=True
    )


def user_text(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def remember(content: str, call_id: str, **kw: str) -> ToolSpec:
    return ToolSpec("remember", json.dumps({"content": content, **kw}), id=call_id)


def test_headless_remember_then_recall_keeps_the_prefix(tmp_path: Path) -> None:
    save = [
        Turn.tools([remember(FACT, "r1", type="project", title="release")]),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", save) as srv:
        ws, env = project(tmp_path, srv.url)
        run(ws, env, srv.url, "please remember where the release checklist lives")
        first = [r.json for r in srv.requests]
    assert tool_texts(first[1])[0].startswith("remembered ")
    assert "<memory-recall>" not in user_text(first[0])  # nothing to recall yet
    with FakeServer("openai", [Turn.text_only("docs/RELEASING.md")]) as srv:
        out = run(ws, env, srv.url, "where does the release checklist live, and who reviews it")
        second = srv.requests[0].json
    assert out["result"] == "docs/RELEASING.md"
    text = user_text(second)
    assert text.endswith("</memory-recall>") and FACT in text
    assert "where does the release checklist live, and who reviews it\n\n<memory-recall>" in text
    assert system_and_tools(second) == system_and_tools(first[0])  # prefix cache intact
    names = {t["function"]["name"] for t in second["tools"]}
    assert {"memory", "remember", "forget", "history", "use_capability"} <= names


def test_headless_refuses_sensitive_and_global_facts(tmp_path: Path) -> None:
    calls = [
        remember("I prefer tabs everywhere", "g1", scope="global", type="user"),
        remember("deploy with api_key = hunter2hunter2", "s1", type="project"),
        remember("x " * 800, "o1", type="reference"),
    ]
    with FakeServer("openai", [Turn.tools(calls), Turn.text_only("ok")]) as srv:
        ws, env = project(tmp_path, srv.url)
        run(ws, env, srv.url, "remember my preferences")
        results = tool_texts(srv.requests[1].json)
    assert len(results) == 3
    assert "global scope" in results[0] and "none is available" in results[0]
    assert "looks sensitive" in results[1]
    assert "longer than 1200 characters" in results[2]
    listing = subprocess.run(
        [sys.executable, "-m", "reasonix", "memory", "list"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert listing.returncode == 0 and listing.stdout.strip() == "(no facts)"


def test_history_finds_an_earlier_session(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("noted")]) as srv:
        ws, env = project(tmp_path, srv.url)
        run(ws, env, srv.url, "the deploy codeword is ZEBRA-PLUM-42")
    search = ToolSpec("history", '{"query": "deploy codeword", "scope": "project"}', id="h1")
    with FakeServer("openai", [Turn.tools([search]), Turn.text_only("found")]) as srv:
        run(ws, env, srv.url, "what was the deploy codeword from last time")
        found = tool_texts(srv.requests[1].json)[0]
    assert "ZEBRA-PLUM-42" in found and "[user]" in found


def test_use_capability_pages_a_clipped_tool_result(tmp_path: Path) -> None:
    page = {"tool_call_id": "c_big", "page": 7}
    call = {"action": "call", "server": "session", "tool": "tool_result", "arguments": page}
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "big.txt"}', id="c_big")]),
        Turn.tools([ToolSpec("use_capability", json.dumps(call), id="c_page")]),
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        ws, env = project(tmp_path, srv.url)
        lines = [f"LINE-{i:05d} " + "y" * 90 for i in range(1000)]
        (ws / "big.txt").write_text("\n".join(lines) + "\n")
        run(ws, env, srv.url, "read big.txt and then look at its middle")
        bodies = [r.json for r in srv.requests]
    clipped = tool_texts(bodies[1])[0]
    assert len(clipped.encode()) <= 32768 and "LINE-00999" not in clipped
    paged = tool_texts(bodies[2])[1]
    assert paged.startswith("[tool result c_big: page 7 of ")
    assert len(paged.encode()) <= 32768
    assert [w for w in re.findall(r"LINE-\d{5}", paged) if w not in clipped]  # hidden before
    last = tool_texts(bodies[2])[0]
    assert last == clipped  # the shortened result itself is never rewritten
