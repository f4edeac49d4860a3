"""The sans-I/O SSE decoder: spec cases, byte-at-a-time, arbitrary chunking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.provider.sse import ServerSentEvent, SSEDecoder


def _whole(data: bytes) -> list[ServerSentEvent]:
    dec = SSEDecoder()
    return dec.feed(data) + dec.close()


def _bytewise(data: bytes) -> list[ServerSentEvent]:
    dec = SSEDecoder()
    out: list[ServerSentEvent] = []
    for i in range(len(data)):
        out += dec.feed(data[i : i + 1])
    return out + dec.close()


def _both(data: bytes) -> list[ServerSentEvent]:
    whole = _whole(data)
    assert _bytewise(data) == whole
    return whole


def test_basic_and_multiline_data() -> None:
    evs = _both(b"data: a\ndata: b\n\nevent: x\ndata:c\n\n")
    assert evs == [ServerSentEvent("message", "a\nb"), ServerSentEvent("x", "c")]


def test_line_endings_crlf_cr_lf_mixed() -> None:
    for sep in (b"\n", b"\r\n", b"\r"):
        assert _both(b"data: one" + sep + sep + b"data: two" + sep + sep) == [
            ServerSentEvent(data="one"),
            ServerSentEvent(data="two"),
        ]
    assert _both(b"data: a\r\ndata: b\rdata: c\n\r\n") == [ServerSentEvent(data="a\nb\nc")]


def test_cr_at_chunk_boundary_is_one_line_end() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: a\r") == []
    assert dec.feed(b"\n") == []  # the LF belongs to the CR: no blank line yet
    assert dec.feed(b"\r\n") == [ServerSentEvent(data="a")]


def test_comments_retry_id_and_unknown_fields() -> None:
    stream = b": keep-alive\nretry: 1500\nid: 7\nfoo: bar\ndata: x\n\nretry: 12a\ndata: y\n\n"
    evs = _both(stream)
    assert evs == [ServerSentEvent("message", "x", "7", 1500), ServerSentEvent("message", "y", "7")]


def test_id_with_nul_is_ignored_and_id_persists() -> None:
    evs = _both(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\nid\ndata: c\n\n")
    assert [e.id for e in evs] == ["1", "1", ""]


def test_blocks_without_data_are_not_dispatched() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"event: ping\n\nid: 5\n\n\n\n") == []
    assert dec.last_event_id == "5"
    # The type of the skipped block does not leak into the next event.
    assert dec.feed(b"data: z\n\n") == [ServerSentEvent("message", "z", "5")]


def test_empty_data_line_dispatches_empty_string() -> None:
    assert _both(b"data\n\ndata:\n\n") == [ServerSentEvent(data=""), ServerSentEvent(data="")]


def test_only_one_leading_space_stripped_and_field_without_colon() -> None:
    assert _both(b"data:  two\n\n") == [ServerSentEvent(data=" two")]
    assert _both(b"event\ndata\n\n") == [ServerSentEvent("message", "")]


def test_bom_only_at_start() -> None:
    bom = b"\xef\xbb\xbf"
    assert _both(bom + b"data: a\n\n") == [ServerSentEvent(data="a")]
    # A second BOM is part of the (unknown) field name, so the line is ignored.
    assert _both(bom + bom + b"data: a\n\ndata: b\n\n") == [ServerSentEvent(data="b")]


def test_utf8_split_across_reads_and_invalid_bytes() -> None:
    payload = "data: 你好 — é\n\n".encode()
    assert _bytewise(payload) == [ServerSentEvent(data="你好 — é")]
    assert _both(b"data: \xff\n\n") == [ServerSentEvent(data="\ufffd")]


def test_unterminated_event_is_discarded_and_pending_reported() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: a\n\ndata: partial") == [ServerSentEvent(data="a")]
    assert dec.pending
    assert dec.close() == []
    assert not dec.pending
    dec2 = SSEDecoder()
    dec2.feed(b"data: done\n")
    assert dec2.pending  # data seen but no blank line: the event was cut


_field_lines = st.sampled_from(
    [b"data: x", b"data:y", b"data", b"event: e", b": c", b"id: 3", b"retry: 10", b"",
     b"\xe4\xbd\xa0", b"data: \xe4\xbd\xa0\xe5\xa5\xbd", b"bogus: 1", b"data: [DONE]"]
)  # fmt: skip
_seps = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def _streams(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.tuples(_field_lines, _seps), max_size=30))
    return b"".join(a + b for a, b in parts)


@settings(max_examples=300, deadline=None)
@given(_streams(), st.lists(st.integers(min_value=1, max_value=17), max_size=60))
def test_arbitrary_chunking_gives_same_events(data: bytes, cuts: list[int]) -> None:
    expected = _whole(data)
    dec = SSEDecoder()
    got: list[ServerSentEvent] = []
    pos = 0
    for n in cuts:
        got += dec.feed(data[pos : pos + n])
        pos += n
    got += dec.feed(data[pos:])
    assert got + dec.close() == expected
    assert _bytewise(data) == expected


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=1, max_value=9))
def test_arbitrary_bytes_never_crash_and_chunking_is_invariant(data: bytes, n: int) -> None:
    expected = _whole(data)
    dec = SSEDecoder()
    got: list[ServerSentEvent] = []
    for i in range(0, len(data), n):
        got += dec.feed(data[i : i + n])
    assert got == expected
