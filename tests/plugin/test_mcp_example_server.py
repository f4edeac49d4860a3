"""The reference stdio plugin answers the handshake era and refuses the rest clearly."""

from __future__ import annotations

import io
import json

from reasonix.plugin.mcp.example_server import handle, serve


def test_handshake_list_and_calls() -> None:
    init = handle({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2024-11-05"}})  # fmt: skip
    assert init is not None and init["result"]["protocolVersion"] == "2024-11-05"
    newest = handle({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                     "params": {"protocolVersion": "2099-01-01"}})  # fmt: skip
    assert newest is not None and newest["result"]["protocolVersion"] == "2025-11-25"
    listed = handle({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["echo", "wordcount"]
    call = handle({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": "hi"}}})  # fmt: skip
    assert call is not None and call["result"]["content"][0]["text"] == "hi"


def test_notifications_unknown_methods_and_bad_tools() -> None:
    assert handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    discover = handle({"jsonrpc": "2.0", "id": 5, "method": "server/discover"})
    assert discover is not None and discover["error"]["code"] == -32601
    bad = handle({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "x"}})
    assert bad is not None and bad["error"]["code"] == -32602


def test_serve_reads_lines_and_reports_garbage() -> None:
    stdin = io.StringIO('{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n\n')
    stdout = io.StringIO()
    assert serve(stdin, stdout) == 0
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert replies[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert replies[1]["error"]["code"] == -32700


def test_prompt_and_resource() -> None:
    init = handle({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert init is not None and {"prompts", "resources"} <= set(init["result"]["capabilities"])
    listed = handle({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})
    assert listed is not None and [p["name"] for p in listed["result"]["prompts"]] == ["explain"]
    got = handle({"jsonrpc": "2.0", "id": 3, "method": "prompts/get",
                  "params": {"name": "explain", "arguments": {"topic": "tries"}}})  # fmt: skip
    assert got is not None
    assert got["result"]["messages"][0]["content"]["text"].startswith("Explain tries to a beginner")
    bad = handle({"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "x"}})
    assert bad is not None and bad["error"]["code"] == -32602
    res = handle({"jsonrpc": "2.0", "id": 5, "method": "resources/list"})
    assert res is not None and res["result"]["resources"][0]["uri"] == "example://readme"
    read = handle({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
                   "params": {"uri": "example://readme"}})  # fmt: skip
    assert read is not None and "prompt explain" in read["result"]["contents"][0]["text"]
    missing = handle({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                      "params": {"uri": "example://nope"}})  # fmt: skip
    assert missing is not None and missing["error"]["code"] == -32602
