"""The JSON-RPC connection: validation, error codes, pending requests, the error boundary."""

from __future__ import annotations

import json
import threading
import time

import pytest

from reasonix.acp.framing import Oversize
from reasonix.acp.rpc import Connection, ConnectionClosed, Incoming, Reply, RpcError, wire_error
from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ConfigError, MissingAPIKey, UsageError


class Wire:
    """Collects what the connection writes, one parsed message per line."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.logs: list[str] = []
        self.conn = Connection(self.lines.append, self.logs.append)

    def sent(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.lines]

    def feed(self, raw: bytes | Oversize) -> Incoming | None:
        return self.conn.receive(raw)


def error_of(wire: Wire) -> tuple[object, int]:
    last = wire.sent()[-1]
    assert last["jsonrpc"] == "2.0" and "result" not in last
    return last["id"], last["error"]["code"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe garbage", -32700),
        (b"[" * 100000, -32700),  # nested too deep for the parser: still a parse error
        (b"[]", -32600),  # a batch: ACP has none
        (b"42", -32600),
        (b'{"id": 1, "method": "x"}', -32600),  # no jsonrpc member
        (b'{"jsonrpc": "1.0", "id": 1, "method": "x"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 2, "method": "x", "params": "str"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 3}', -32600),
    ],
)
def test_malformed_messages_get_errors(raw: bytes, code: int) -> None:
    wire = Wire()
    assert wire.feed(raw) is None
    assert error_of(wire)[1] == code


def test_invalid_request_keeps_a_usable_id() -> None:
    wire = Wire()
    wire.feed(b'{"jsonrpc": "2.0", "id": 9, "method": 7}')
    assert error_of(wire) == (9, -32600)
    wire.feed(b'{"jsonrpc": "2.0", "id": true, "method": "x"}')
    assert error_of(wire) == (None, -32600)  # a boolean is no id


def test_oversize_is_a_parse_error() -> None:
    wire = Wire()
    wire.feed(Oversize(123))
    assert error_of(wire) == (None, -32700)


def test_requests_and_notifications_are_classified() -> None:
    wire = Wire()
    req = wire.feed(b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}')
    assert req == Incoming("m", {"x": 1}, "a", True)
    note = wire.feed(b'{"jsonrpc":"2.0","method":"n"}')
    assert note == Incoming("n", {}, None, False)
    assert wire.feed(b'{"jsonrpc":"2.0","method":"n","params":5}') is None
    assert wire.lines == []  # a broken notification is never answered


def test_agent_requests_wait_for_their_answer() -> None:
    wire = Wire()
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(wire.conn.request("fs/read", {"p": 1})))
    t.start()
    while not wire.lines:
        time.sleep(0.01)
    sent = wire.sent()[0]
    assert sent["method"] == "fs/read" and sent["id"] == 0
    wire.feed(b'{"jsonrpc":"2.0","id":0,"result":{"content":"hi"}}')
    t.join(2)
    assert out == [{"content": "hi"}]


def test_a_second_answer_before_the_waiter_wakes_is_ignored() -> None:
    """The first answer stands: a client answering twice cannot swap the result
    while the asking thread has not woken up yet."""
    wire = Wire()
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(wire.conn.request("fs/read", {"p": 1})))
    t.start()
    while not wire.lines:
        time.sleep(0.01)
    wire.feed(b'{"jsonrpc":"2.0","id":0,"result":{"content":"first"}}')
    wire.feed(b'{"jsonrpc":"2.0","id":0,"result":{"content":"second"}}')
    t.join(2)
    assert out == [{"content": "first"}]


def test_client_errors_are_raised_and_unknown_answers_ignored() -> None:
    wire = Wire()
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            wire.conn.request("terminal/create", {})
        except RpcError as err:
            failed.append(err)

    t = threading.Thread(target=ask)
    t.start()
    while not wire.lines:
        time.sleep(0.01)
    wire.feed(b'{"jsonrpc":"2.0","id":77,"result":{}}')  # nobody asked: logged only
    wire.feed(b'{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"nope"}}')
    t.join(2)
    assert isinstance(failed[0], RpcError) and failed[0].code == -32002
    assert any("77" in line for line in wire.logs)


def test_close_fails_pending_requests_and_cancel_tells_the_client() -> None:
    wire = Wire()
    errors: list[BaseException] = []

    def ask(cancel: Cancel | None) -> None:
        try:
            wire.conn.request("session/request_permission", {}, cancel)
        except (ConnectionClosed, Cancelled) as err:
            errors.append(err)

    token = Cancel()
    t1 = threading.Thread(target=ask, args=(token,))
    t1.start()
    while not wire.lines:
        time.sleep(0.01)
    token.cancel()
    t1.join(2)
    assert isinstance(errors[0], Cancelled)
    assert wire.sent()[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": 0},
    }
    t2 = threading.Thread(target=ask, args=(None,))
    t2.start()
    while len(wire.lines) < 3:
        time.sleep(0.01)
    wire.conn.close()
    t2.join(2)
    assert isinstance(errors[1], ConnectionClosed)
    with pytest.raises(ConnectionClosed):
        wire.conn.request("fs/read_text_file", {})


def test_the_error_boundary_maps_every_exception() -> None:
    assert wire_error(RpcError(-32601, "x")).code == -32601
    assert wire_error(MissingAPIKey("no key")).code == -32000
    assert wire_error(UsageError("bad cwd")).code == -32602
    assert wire_error(ConfigError("bad toml")).code == -32603
    logs: list[str] = []
    hidden = wire_error(KeyError("secret internals"), logs.append)
    assert hidden.code == -32603 and "secret" not in hidden.message and "KeyError" in logs[0]


def test_answer_sends_results_errors_and_runs_follow_up_work() -> None:
    wire = Wire()
    after: list[str] = []
    wire.conn.answer(Incoming("m", {}, 1), lambda p: Reply({"ok": True}, lambda: after.append("x")))
    wire.conn.answer(Incoming("m", {}, 2), lambda p: 1 / 0)
    wire.conn.answer(Incoming("n", {}, None, False), lambda p: 1 / 0)
    sent = wire.sent()
    assert sent[0] == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}} and after == ["x"]
    assert sent[1]["id"] == 2 and sent[1]["error"]["code"] == -32603  # type: ignore[index]
    assert len(sent) == 2  # the failed notification got no answer


def test_unencodable_results_become_internal_errors() -> None:
    wire = Wire()
    wire.conn.respond(5, {"amount": float("nan")})
    assert error_of(wire) == (5, -32603)
