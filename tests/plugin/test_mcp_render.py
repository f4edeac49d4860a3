"""Result rendering, tool ids, the serial gate and the child environment (no I/O)."""

from __future__ import annotations

import threading
import time

import pytest

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled
from reasonix.plugin.mcp.client import choose_version, roots_result
from reasonix.plugin.mcp.gate import Gate, default_concurrency
from reasonix.plugin.mcp.render import (
    render_prompt,
    render_resource,
    render_tool_result,
    tool_id,
)
from reasonix.plugin.mcp.stdio import child_environment


def test_tool_ids_normalise_names() -> None:
    assert tool_id("git hub", "create issue") == "mcp__git_hub__create_issue"
    assert tool_id("fs", "read.file") == "mcp__fs__read_file"


def test_render_all_content_kinds() -> None:
    result = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "x://a", "text": "embedded"}},
            {"type": "resource", "resource": {"uri": "x://b", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "x://c", "name": "c"},
        ],
    }
    text, is_error = render_tool_result(result)
    assert not is_error
    assert "hello" in text and "[image image/png, 3 bytes]" in text
    assert "embedded" in text and "binary resource x://b" in text
    assert "[resource link c: x://c]" in text


def test_structured_content_once() -> None:
    mirrored = {"content": [{"type": "text", "text": "a is 1"}], "structuredContent": {"a": 1}}
    assert render_tool_result(mirrored)[0] == "a is 1"
    only = {"content": [], "structuredContent": {"a": 1}}
    assert render_tool_result(only)[0] == '{"a": 1}'
    assert render_tool_result({"content": [{"type": "text", "text": "x"}], "isError": True}) == (
        "x",
        True,
    )


def test_render_prompt_and_resource() -> None:
    prompt = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
    assert render_prompt(prompt) == "hi"
    assert render_resource(
        {"contents": [{"uri": "a", "text": "A"}, {"uri": "b", "text": "B"}]}
    ) == ("A\nB")


def test_version_choice_and_roots(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert choose_version(["2024-11-05", "2026-07-28"]) == "2026-07-28"
    assert choose_version(["2025-06-18", "1999-01-01"]) == "2025-06-18"
    assert choose_version(["2030-01-01"]) is None
    roots = roots_result([tmp_path])["roots"]
    assert roots == [{"uri": tmp_path.resolve().as_uri(), "name": tmp_path.name}]


@pytest.mark.parametrize(
    ("name", "configured", "mode"),
    [
        ("my-Browser", "", "serial"),
        ("PLAYWRIGHT", "", "serial"),
        ("headless-chromium", "", "serial"),
        ("github", "", "parallel"),
        ("browser", "parallel", "parallel"),
        ("github", "serial", "serial"),
    ],
)
def test_default_concurrency(name: str, configured: str, mode: str) -> None:
    assert default_concurrency(name, configured) == mode


def test_serial_gate_queues_and_honours_cancel() -> None:
    gate = Gate("serial")
    gate.acquire(Cancel())
    queued = Cancel()
    outcome: list[str] = []

    def waiter() -> None:
        try:
            gate.acquire(queued)
            outcome.append("got it")
        except Cancelled:
            outcome.append("cancelled")

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.05)
    start = time.monotonic()
    queued.cancel("user")
    t.join(timeout=2)
    assert outcome == ["cancelled"] and time.monotonic() - start < 0.5
    gate.release()
    gate.acquire(Cancel())  # free again
    gate.release()


def test_child_environment_is_whitelisted() -> None:
    base = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "OPENAI_API_KEY": "sk", "AWS_SECRET": "x"}
    env = child_environment({"TOKEN": "t"}, base)
    assert env == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "TOKEN": "t"}
