"""serve/sse.py byte for byte, and the hub's numbering, replay and slow-client drop."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time

import pytest

from reasonix.serve.hub import Hub, Subscriber, pump
from reasonix.serve.sse import SseEvent, comment, encode


@pytest.mark.parametrize(
    ("event", "wire"),
    [
        (SseEvent("hello"), b"data: hello\n\n"),
        (SseEvent("", id=0), b"id: 0\ndata: \n\n"),
        (SseEvent("a\nb", id=7), b"id: 7\ndata: a\ndata: b\n\n"),
        (SseEvent("a\r\nb\rc\n", id=1), b"id: 1\ndata: a\ndata: b\ndata: c\ndata: \n\n"),
        (SseEvent("x", id="4\n2\r", event="up\ndate"), b"id: 42\nevent: update\ndata: x\n\n"),
        (SseEvent("x", id="a\0b"), b"id: ab\ndata: x\n\n"),
        (SseEvent("x", retry=1500), b"retry: 1500\ndata: x\n\n"),
        (SseEvent("é ✓", id=3), "id: 3\ndata: é ✓\n\n".encode()),
        (SseEvent("\ud800"), b"data: ?\n\n"),  # a lone surrogate must not break the stream
    ],
)
def test_encode_bytes(event: SseEvent, wire: bytes) -> None:
    assert encode(event) == wire


def test_comment_is_one_line() -> None:
    assert comment("ping") == b": ping\n\n"
    assert comment("a\nb") == b": ab\n\n"


def _decode(batch: list[bytes]) -> list[dict[str, object]]:
    """The events in ``batch``, whose chunks may each hold several (coalesced) events."""
    out = []
    wire = b"".join(batch)
    assert not wire or wire.endswith(b"\n\n"), wire[-80:]  # only whole events
    for block in wire.split(b"\n\n")[:-1]:
        lines = block.decode().split("\n")
        ident = lines[0].removeprefix("id: ")
        body = json.loads("\n".join(x.removeprefix("data: ") for x in lines[1:]))
        assert ident == str(body["seq"])
        out.append(body)
    return out


def test_sequence_numbers_and_replay_after_last_event_id() -> None:
    hub = Hub()
    for i in range(5):
        assert hub.publish({"type": "text", "text": str(i)}) == i + 1
    sub = hub.subscribe(after=2)
    got = _decode(sub.take(0.1) or [])
    assert [e["seq"] for e in got] == [3, 4, 5] and [e["text"] for e in got] == ["2", "3", "4"]
    hub.publish({"type": "text", "text": "live"})
    assert [e["text"] for e in _decode(sub.take(0.1) or [])] == ["live"]
    assert sub.take(0.01) == []  # a timeout is an empty batch, not the end


def test_subscribe_without_an_id_gets_only_new_events() -> None:
    hub = Hub()
    hub.publish({"type": "x"})
    sub = hub.subscribe(after=None)
    assert sub.take(0.01) == []


@pytest.mark.parametrize("after", [99, -5])
def test_an_id_the_log_cannot_serve_gets_a_reset(after: int) -> None:
    hub = Hub(keep=3)
    for _ in range(10):
        hub.publish({"type": "x"})
    got = _decode(hub.subscribe(after=after).take(0.1) or [])
    assert got == [{"type": "reset", "seq": 10, "ts": got[0]["ts"]}]
    assert [e["seq"] for e in _decode(hub.subscribe(after=7).take(0.1) or [])] == [8, 9, 10]


def test_a_slow_subscriber_is_dropped_and_never_blocks_the_publisher() -> None:
    hub = Hub(backlog=10)
    slow, fast = hub.subscribe(None), hub.subscribe(None)
    received: list[int] = []
    progress = threading.Condition()

    def reader() -> None:
        while (batch := fast.take(1.0)) is not None:
            with progress:
                received.extend(int(str(e["seq"])) for e in _decode(batch))
                progress.notify()
            if received and received[-1] == 100:
                return

    thread = threading.Thread(target=reader)
    thread.start()
    for burst in range(20):  # bursts of 5: the fast reader keeps up, the slow one never reads
        for _ in range(5):
            hub.publish({"type": "text"})
        with progress:
            assert progress.wait_for(lambda b=burst: len(received) == 5 * (b + 1), timeout=5)
    thread.join(5)
    assert received == list(range(1, 101))  # everything, in order
    assert slow.dropped and slow.take(0.01) is None  # dropped after 10 unread events
    assert hub.subscribers == 1
    # it reconnects with its last id and catches up from the log
    replay = _decode(hub.subscribe(after=0).take(0.1) or [])
    assert [e["seq"] for e in replay] == list(range(1, 101))


def test_forget_keeps_numbering_and_resets_old_ids() -> None:
    hub = Hub()
    for _ in range(3):
        hub.publish({"type": "x"})
    hub.forget()
    hub.publish({"type": "status"})
    assert _decode(hub.subscribe(after=1).take(0.1) or [])[0]["type"] == "reset"
    assert [e["seq"] for e in _decode(hub.subscribe(after=3).take(0.1) or [])] == [4]


def test_close_ends_every_subscriber() -> None:
    hub = Hub()
    sub = hub.subscribe(None)
    hub.close()
    assert sub.take(1.0) is None


def _pumped(hub: Hub) -> tuple[socket.socket, Subscriber, threading.Thread]:
    """A tab on a real socket pair: the hub writes directly, the pump writes the rest."""
    server, client = socket.socketpair()
    server.setblocking(False)
    sub = hub.subscribe(None, server)

    def run() -> None:
        with contextlib.suppress(OSError):
            pump(sub, server, ping=comment("ping"), every=0.05, write_timeout=2.0)
        server.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return client, sub, thread


def test_direct_writes_and_queued_writes_keep_the_byte_order() -> None:
    hub = Hub(backlog=100_000)
    client, _, thread = _pumped(hub)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    big = "x" * 3000
    received = bytearray()

    def slow_reader() -> None:
        while chunk := client.recv(1024):
            received.extend(chunk)
            time.sleep(0.0005)
            if b'"id":"last"' in received[-4096:] and received.endswith(b"\n\n"):
                return

    reader = threading.Thread(target=slow_reader)
    reader.start()
    started = time.monotonic()
    for i in range(300):
        hub.publish({"type": "text", "text": f"{i}:{big}"})
    hub.publish({"type": "x", "id": "last"})
    publish_time = time.monotonic() - started
    reader.join(20)
    hub.close()
    thread.join(5)
    client.close()
    events = [b for b in bytes(received).split(b"\n\n") if b.startswith(b"id: ")]
    got = _decode([e + b"\n\n" for e in events])
    assert [e["seq"] for e in got] == list(range(1, 302))
    assert [e["text"].split(":")[0] for e in got[:-1]] == [str(i) for i in range(300)]
    assert publish_time < 5  # the publisher never waited for the slow reader


def test_a_stalled_socket_never_blocks_the_publisher_and_is_dropped() -> None:
    hub = Hub(backlog=50)
    client, sub, thread = _pumped(hub)  # nobody ever reads `client`
    started = time.monotonic()
    for _ in range(2000):
        hub.publish({"type": "text", "text": "y" * 1000})
    assert time.monotonic() - started < 5
    hub.flush()  # what the flusher holds for the current window
    assert sub.dropped and hub.subscribers == 0
    thread.join(5)
    assert not thread.is_alive()
    client.close()


def test_an_idle_stream_gets_pings() -> None:
    hub = Hub()
    client, _, thread = _pumped(hub)
    client.settimeout(5)
    assert client.recv(100).startswith(b": ping\n\n")
    hub.close()
    thread.join(5)
    client.close()


class CountingSocket:
    """The server end of a socket pair, counting the ``send`` calls the hub makes."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sends = 0

    def send(self, data: bytes | memoryview) -> int:
        self.sends += 1
        return self.sock.send(data)


def _read_events(client: socket.socket) -> list[dict[str, object]]:
    client.setblocking(False)
    wire = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := client.recv(1 << 20):
            wire += chunk
    return _decode([wire])


def test_a_burst_reaches_each_tab_in_fewer_writes_complete_and_in_order() -> None:
    # a window far longer than the test: what is coalesced does not depend on timing
    hub = Hub(window=60.0)
    tabs = []
    for _ in range(3):
        server, client = socket.socketpair()
        server.setblocking(False)
        counted = CountingSocket(server)
        hub.subscribe(None, counted)  # type: ignore[arg-type]  # a socket's send, counted
        tabs.append((counted, client, server))
    n = 100
    for i in range(n):
        hub.publish({"type": "text", "text": f"{i}\nline"})
    hub.flush()  # the end of the window
    for counted, client, server in tabs:
        got = _read_events(client)
        assert [e["seq"] for e in got] == list(range(1, n + 1))
        assert [e["text"] for e in got] == [f"{i}\nline" for i in range(n)]
        # the first event went out at once, the other 99 waited for the window together
        assert counted.sends == 2 < n
        client.close()
        server.close()


def test_a_tab_that_joins_within_a_window_gets_no_event_twice() -> None:
    hub = Hub(window=60.0)
    pairs = [socket.socketpair() for _ in range(3)]
    for server, _ in pairs:
        server.setblocking(False)
    hub.subscribe(None, pairs[0][0])  # from the start
    for _ in range(3):
        hub.publish({"type": "x"})  # 1 goes out now, 2 and 3 wait
    hub.subscribe(1, pairs[1][0])  # resumes after 1: replays 2 and 3 at once
    hub.subscribe(None, pairs[2][0])  # only what comes next
    hub.publish({"type": "x"})
    hub.flush()
    seqs = [[e["seq"] for e in _read_events(client)] for _, client in pairs]
    assert seqs == [[1, 2, 3, 4], [2, 3, 4], [4]]
    for server, client in pairs:
        server.close()
        client.close()


def test_events_after_a_quiet_window_go_out_at_once() -> None:
    hub = Hub(window=0.0)  # every window already over: each event is its own write
    server, client = socket.socketpair()
    server.setblocking(False)
    counted = CountingSocket(server)
    hub.subscribe(None, counted)  # type: ignore[arg-type]
    for _ in range(5):
        hub.publish({"type": "x"})
        assert counted.sends == hub.head  # sent before publish returned, no flusher involved
    assert [e["seq"] for e in _read_events(client)] == [1, 2, 3, 4, 5]
    server.close()
    client.close()


def test_the_flusher_sends_the_window_on_its_own_and_comes_back_after_idling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import reasonix.serve.hub as hub_module

    monkeypatch.setattr(hub_module, "IDLE_EXIT_SECONDS", 0.05)
    hub = Hub(window=0.01)
    sub = hub.subscribe(None)
    got: list[object] = []
    for burst in range(3):  # the flusher ends between bursts; the next window starts one
        for _ in range(4):
            hub.publish({"type": "x"})
        while len(got) < 4 * (burst + 1):  # no flush() here: the flusher's own
            batch = sub.take(5.0)
            assert batch, "an event was left behind"
            got.extend(e["seq"] for e in _decode(batch))
        threading.Event().wait(0.2)
    assert got == list(range(1, 13))
