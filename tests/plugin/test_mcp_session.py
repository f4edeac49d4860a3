"""The session/dispatcher and the client lifecycle over an in-memory transport.

The peer here is a few lines of test script (an in-memory Transport, as the
STYLE guide's conformance matrix has one); real servers are exercised in
test_mcp_conformance.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled
from reasonix.plugin.mcp.client import McpClient
from reasonix.plugin.mcp.errors import ConnectionLost, McpTimeout, RpcError
from reasonix.plugin.mcp.jsonrpc import (
    ErrorResponse,
    FramingError,
    Message,
    Notification,
    Request,
    Response,
)
from reasonix.plugin.mcp.session import Session
from reasonix.plugin.mcp.transport import Closed, Inbox, Incoming

Peer = Callable[[Message, Callable[[Incoming], None]], None]


class MemoryTransport:
    """Hands every sent message to ``peer``, which may push replies."""

    label = "memory"

    def __init__(self, peer: Peer) -> None:
        self.peer = peer
        self.sent: list[Message] = []
        self.inbox = Inbox()

    def start(self, cancel: Cancel) -> None:
        pass

    def send(self, message: Message) -> None:
        self.sent.append(message)
        self.peer(message, self.inbox.put)

    def receive(self, timeout: float | None = None) -> Incoming | None:
        return self.inbox.get(timeout)

    def close(self) -> None:
        self.inbox.put(Closed("connection closed"))


def _silent(msg: Message, push: Callable[[Incoming], None]) -> None:
    pass


def _session(peer: Peer, **kw: Any) -> tuple[Session, MemoryTransport]:
    t = MemoryTransport(peer)
    s = Session(t, **kw)
    s.start()
    return s, t


def test_out_of_order_answers_are_correlated() -> None:
    held: list[Request] = []

    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        if isinstance(msg, Request):
            held.append(msg)
            if len(held) == 2:  # answer the second first
                for r in reversed(held):
                    push(Response(r.id, {"method": r.method}))

    s, _ = _session(peer)
    out: dict[str, Any] = {}
    t = threading.Thread(target=lambda: out.update(a=s.request("a", timeout=5)))
    t.start()
    while not held:
        time.sleep(0.01)
    assert s.request("b", timeout=5) == {"method": "b"}
    t.join(5)
    assert out["a"] == {"method": "a"}
    s.close()


def test_server_requests_are_answered() -> None:
    s, t = _session(_silent, handlers={"roots/list": lambda r: {"roots": []}})
    t.inbox.put(Request(9, "roots/list"))
    t.inbox.put(Request(10, "sampling/createMessage"))
    end = time.monotonic() + 5
    while len(t.sent) < 2 and time.monotonic() < end:
        time.sleep(0.01)
    assert Response(9, {"roots": []}) in t.sent
    (err,) = [m for m in t.sent if isinstance(m, ErrorResponse)]
    assert err.id == 10 and err.code == -32601
    s.close()


def test_progress_is_routed_by_token_and_others_ignored() -> None:
    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        if isinstance(msg, Request):
            token = (msg.params or {})["_meta"]["progressToken"]
            push(Notification("notifications/progress", {"progressToken": "other", "progress": 9}))
            push(
                Notification(
                    "notifications/progress", {"progressToken": token, "progress": 1, "total": 2}
                )
            )
            push(Response(msg.id, {}))

    seen: list[tuple[Any, ...]] = []
    s, _ = _session(peer)
    s.request("tools/call", {"name": "x"}, timeout=5, progress=lambda *a: seen.append(a))
    assert seen == [(1.0, 2.0, None)]
    s.close()


def test_timeout_and_cancel_send_notifications_cancelled() -> None:
    s, t = _session(_silent)
    with pytest.raises(McpTimeout):
        s.request("slow", timeout=0.1)
    cancel = Cancel()
    threading.Timer(0.1, cancel.cancel, ("user pressed Esc",)).start()
    start = time.monotonic()
    with pytest.raises(Cancelled):
        s.request("slow", cancel=cancel, timeout=10)
    assert time.monotonic() - start < 2
    cancels = [
        m for m in t.sent if isinstance(m, Notification) and m.method == "notifications/cancelled"
    ]
    assert [c.params["requestId"] for c in cancels if c.params] == [1, 2]
    s.close()


def test_error_answer_garbage_and_close() -> None:
    notices: list[str] = []

    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        if isinstance(msg, Request) and msg.method == "bad":
            push(FramingError("not JSON", "hello"))
            push(ErrorResponse(msg.id, -32602, "invalid params"))

    s, t = _session(peer, on_notice=notices.append)
    with pytest.raises(RpcError, match="invalid params"):
        s.request("bad", timeout=5)
    assert any("hello" in n for n in notices)
    pending: list[BaseException] = []

    def waiter() -> None:
        try:
            s.request("never", timeout=10)
        except ConnectionLost as exc:
            pending.append(exc)

    th = threading.Thread(target=waiter)
    th.start()
    time.sleep(0.05)
    t.inbox.put(Closed("server exited with code 1"))
    th.join(5)
    assert pending and "exited" in str(pending[0])
    with pytest.raises(ConnectionLost):
        s.request("after", timeout=1)
    s.close()


def _stateless_peer(log: list[Message]) -> Peer:
    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        log.append(msg)
        if not isinstance(msg, Request):
            return
        params = msg.params or {}
        meta = params.get("_meta") or {}
        assert meta.get("io.modelcontextprotocol/protocolVersion") == "2026-07-28"
        if msg.method == "server/discover":
            push(
                Response(
                    msg.id,
                    {
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "modern"},
                    },
                )
            )
        elif msg.method == "tools/call":
            answers = params.get("inputResponses")
            if not answers:
                push(
                    Response(
                        msg.id,
                        {
                            "resultType": "input_required",
                            "requestState": "s1",
                            "inputRequests": {"r": {"method": "roots/list"}},
                        },
                    )
                )
            else:
                assert params["requestState"] == "s1"
                uris = [r["uri"] for r in answers["r"]["roots"]]
                push(
                    Response(
                        msg.id,
                        {
                            "resultType": "complete",
                            "content": [{"type": "text", "text": " ".join(uris)}],
                        },
                    )
                )

    return peer


def test_stateless_era_envelope_and_input_required(tmp_path: Path) -> None:
    log: list[Message] = []
    client = McpClient(MemoryTransport(_stateless_peer(log)), roots=[tmp_path])
    client.connect(Cancel.with_timeout(5))
    assert client.stateless and client.protocol_version == "2026-07-28"
    assert client.server_info == {"name": "modern"}
    result = client.request("tools/call", {"name": "roots"}, timeout=5)
    assert result["content"][0]["text"] == tmp_path.resolve().as_uri()
    assert not any(isinstance(m, Request) and m.method == "initialize" for m in log)
    client.close()


def test_handshake_era_after_method_not_found() -> None:
    log: list[Message] = []

    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        log.append(msg)
        if isinstance(msg, Request) and msg.method == "server/discover":
            push(ErrorResponse(msg.id, -32601, "Method not found"))
        elif isinstance(msg, Request) and msg.method == "initialize":
            assert (msg.params or {})["protocolVersion"] == "2025-11-25"
            push(
                Response(
                    msg.id, {"protocolVersion": "2025-03-26", "capabilities": {}, "serverInfo": {}}
                )
            )

    client = McpClient(MemoryTransport(peer))
    client.connect(Cancel.with_timeout(5))
    assert not client.stateless and client.protocol_version == "2025-03-26"
    assert [getattr(m, "method", None) for m in log] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
    ]
    client.close()


def test_unsupported_version_offered_by_server_is_refused() -> None:
    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        if isinstance(msg, Request) and msg.method == "server/discover":
            push(ErrorResponse(msg.id, -32601, "Method not found"))
        elif isinstance(msg, Request) and msg.method == "initialize":
            push(Response(msg.id, {"protocolVersion": "1999-01-01", "capabilities": {}}))

    client = McpClient(MemoryTransport(peer))
    with pytest.raises(Exception, match="unsupported protocol version"):
        client.connect(Cancel.with_timeout(5))
    client.close()


def _handshake_only_peer(supported: list[str], log: list[Message]) -> Peer:
    """A server that speaks only ``supported`` (handshake era) and negotiates honestly:
    it refuses ``server/discover`` listing its versions, and answers ``initialize``
    with the requested version when it speaks it, else with its own newest (the
    MCP lifecycle rule) — so what the client ends with depends on what it sent."""

    def peer(msg: Message, push: Callable[[Incoming], None]) -> None:
        log.append(msg)
        if isinstance(msg, Request) and msg.method == "server/discover":
            push(ErrorResponse(msg.id, -32022, "unsupported", {"supported": supported}))
        elif isinstance(msg, Request) and msg.method == "initialize":
            asked = (msg.params or {})["protocolVersion"]
            answer = asked if asked in supported else supported[0]
            push(Response(msg.id, {"protocolVersion": answer, "capabilities": {}}))

    return peer


@pytest.mark.parametrize(
    ("supported", "expected"),
    [
        (["2025-06-18"], "2025-06-18"),  # an older handshake version only
        (["2024-11-05"], "2024-11-05"),  # the oldest we speak
        (["2025-11-25", "2025-03-26"], "2025-11-25"),  # it speaks our newest: no downgrade
    ],
)
def test_unsupported_protocol_error_falls_back_to_the_handshake(
    supported: list[str], expected: str
) -> None:
    log: list[Message] = []
    client = McpClient(MemoryTransport(_handshake_only_peer(supported, log)))
    client.connect(Cancel.with_timeout(5))
    assert not client.stateless and client.protocol_version == expected
    methods = [getattr(m, "method", None) for m in log]
    assert methods == ["server/discover", "initialize", "notifications/initialized"]
    init = next(m for m in log if isinstance(m, Request) and m.method == "initialize")
    assert (init.params or {})["protocolVersion"] == "2025-11-25"  # the newest, then negotiated
    client.close()


def test_a_server_listing_only_versions_we_lack_is_refused() -> None:
    log: list[Message] = []
    client = McpClient(MemoryTransport(_handshake_only_peer(["1999-01-01"], log)))
    with pytest.raises(Exception, match="unsupported protocol version"):
        client.connect(Cancel.with_timeout(5))
    client.close()
