"""Form-mode elicitation: SEP-1034 defaults, schema checks, policies and the client seam.

The rules are I/O-free; the client is driven over the in-memory transport of
test_mcp_session.py (a few lines of peer script playing the server).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from test_mcp_session import MemoryTransport

from reasonix.cancel import Cancel
from reasonix.errors import PluginError
from reasonix.plugin.mcp.client import McpClient
from reasonix.plugin.mcp.elicit import (
    ElicitRequest,
    ElicitResult,
    accept_defaults,
    apply_defaults,
    decline_all,
    parse_request,
    result_json,
    schema_errors,
)
from reasonix.plugin.mcp.jsonrpc import ErrorResponse, Message, Request, Response
from reasonix.plugin.mcp.transport import Incoming

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
    "required": [],
}
ALL_DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
NEEDS_A_PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {"email": {"type": "string"}, "ok": {"type": "boolean", "default": True}},
    "required": ["email"],
}


def _req(schema: dict[str, Any]) -> ElicitRequest:
    return ElicitRequest("srv", "please", schema)


# -- rules ------------------------------------------------------------------------
def test_apply_defaults_fills_only_omitted_fields() -> None:
    assert apply_defaults(SCHEMA, {}) == ALL_DEFAULTS
    assert apply_defaults(SCHEMA, {"age": 41})["age"] == 41
    assert apply_defaults(NEEDS_A_PERSON, {}) == {"ok": True}  # no default: left out


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"age": "30"}, "age: not a integer"),
        ({"age": True}, "age: not a integer"),
        ({"score": float("nan")}, "score: not a number"),
        ({"verified": 1}, "verified: not a boolean"),
        ({"status": "gone"}, "status: 'gone' is not one of"),
        ({"extra": 1}, "extra: not in the requested schema"),
    ],
)
def test_schema_errors(content: dict[str, Any], problem: str) -> None:
    (got,) = schema_errors(SCHEMA, content)
    assert got.startswith(problem)


def test_required_and_titled_enums() -> None:
    assert schema_errors(NEEDS_A_PERSON, {}) == ["email: required"]
    titled = {"type": "object", "properties": {"c": {"type": "string",
              "oneOf": [{"const": "r", "title": "Red"}]}}}  # fmt: skip
    assert schema_errors(titled, {"c": "r"}) == []
    assert schema_errors(titled, {"c": "g"}) != []


def test_accept_defaults_never_invents_data() -> None:
    assert accept_defaults(_req(SCHEMA)) == ElicitResult("accept", ALL_DEFAULTS)
    assert accept_defaults(_req(NEEDS_A_PERSON)).action == "decline"
    assert decline_all(_req(SCHEMA)).action == "decline"


def test_result_json_completes_and_checks_an_accepted_answer() -> None:
    assert result_json(_req(SCHEMA), ElicitResult("accept", {"age": 5})) == {
        "action": "accept",
        "content": {**ALL_DEFAULTS, "age": 5},
    }
    assert result_json(_req(SCHEMA), ElicitResult("cancel", {"age": 5})) == {"action": "cancel"}
    with pytest.raises(PluginError, match="does not fit"):
        result_json(_req(NEEDS_A_PERSON), ElicitResult("accept", {}))
    with pytest.raises(PluginError, match="unknown elicitation action"):
        result_json(_req(SCHEMA), ElicitResult("maybe"))


@pytest.mark.parametrize(
    "params",
    [None, {"mode": "url", "url": "https://x"}, {"requestedSchema": {"type": "array"}}],
)
def test_parse_request_refuses_what_we_cannot_answer(params: Any) -> None:
    with pytest.raises(PluginError):
        parse_request("srv", params)


# -- the client seam ------------------------------------------------------------------
def _server(answers: list[Message]) -> Callable[[Message, Callable[[Incoming], None]], None]:
    """A handshake-era server that asks for elicitation on tools/call."""

    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        if isinstance(msg, Request) and msg.method == "initialize":
            push(Response(msg.id, {"protocolVersion": "2025-11-25", "capabilities": {}}))
            peer.caps = (msg.params or {}).get("capabilities")  # type: ignore[attr-defined]
        elif isinstance(msg, Request) and msg.method == "tools/call":
            push(Request("e1", "elicitation/create", {"message": "m", "requestedSchema": SCHEMA}))
            push(Request("e2", "elicitation/create", {"mode": "url", "url": "https://x"}))
            peer.call_id = msg.id  # type: ignore[attr-defined]
        elif isinstance(msg, (Response, ErrorResponse)):
            answers.append(msg)
            if len(answers) == 2:
                push(Response(peer.call_id, {"content": []}))  # type: ignore[attr-defined]

    return peer


def _client(peer: Any, hook: Any) -> McpClient:
    client = McpClient(MemoryTransport(peer), on_elicit=hook, allow_stateless=False, name="srv")
    client.connect(Cancel.with_timeout(5))
    return client


def test_client_answers_elicitation_through_its_hook() -> None:
    answers: list[Message] = []
    peer = _server(answers)
    seen: list[ElicitRequest] = []
    client = _client(peer, lambda r: seen.append(r) or ElicitResult("accept", {}))
    assert peer.caps == {"elicitation": {"form": {}}}  # type: ignore[attr-defined]
    client.request("tools/call", {"name": "t"}, timeout=5)
    client.close()
    by_id = {m.id: m for m in answers}
    assert by_id["e1"] == Response("e1", {"action": "accept", "content": ALL_DEFAULTS})
    assert isinstance(by_id["e2"], ErrorResponse) and by_id["e2"].code == -32602
    assert seen[0].server == "srv" and seen[0].message == "m"


def test_without_a_hook_nothing_is_advertised_or_answered() -> None:
    answers: list[Message] = []
    peer = _server(answers)
    client = _client(peer, None)
    assert peer.caps == {}  # type: ignore[attr-defined]
    client.request("tools/call", {"name": "t"}, timeout=5)
    client.close()
    assert {m.code for m in answers if isinstance(m, ErrorResponse)} == {-32601}


def test_a_slow_answer_does_not_block_the_reader() -> None:
    answers: list[Message] = []
    release = threading.Event()

    def slow(request: ElicitRequest) -> ElicitResult:
        release.wait(5)
        return ElicitResult("decline")

    peer = _server(answers)
    client = _client(peer, slow)
    done = threading.Event()
    threading.Thread(
        target=lambda: (client.request("tools/call", {"name": "t"}, timeout=5), done.set()),
        daemon=True,
    ).start()
    end = time.monotonic() + 5
    while not any(m.id == "e2" for m in answers) and time.monotonic() < end:
        time.sleep(0.01)  # e2 is answered while e1 still waits for its person
    assert [m.id for m in answers] == ["e2"]
    release.set()
    assert done.wait(5)
    client.close()


def test_stateless_input_requests_are_answered_by_the_hook() -> None:
    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        if not isinstance(msg, Request):
            return
        params = msg.params or {}
        if msg.method == "server/discover":
            push(Response(msg.id, {"supportedVersions": ["2026-07-28"], "capabilities": {}}))
        elif "inputResponses" not in params:
            ask = {"method": "elicitation/create", "params": {"requestedSchema": SCHEMA}}
            push(Response(msg.id, {"resultType": "input_required", "inputRequests": {"q": ask}}))
        else:
            caps = params["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            push(Response(msg.id, {"answer": params["inputResponses"]["q"], "caps": caps}))

    client = McpClient(MemoryTransport(peer), on_elicit=accept_defaults, name="srv")
    client.connect(Cancel.with_timeout(5))
    got = client.request("tools/call", {"name": "t"}, timeout=5)
    client.close()
    assert got["answer"] == {"action": "accept", "content": ALL_DEFAULTS}
    assert got["caps"] == {"elicitation": {"form": {}}}
