"""Sans-I/O NDJSON framing: lines survive any split of the byte stream."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from reasonix.acp.framing import LineDecoder, Oversize, encode

MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    {"jsonrpc": "2.0", "method": "session/update", "params": {"text": "héllo\nwörld ✓"}},
    {"jsonrpc": "2.0", "id": "x", "result": {"content": "line1\r\nline2\u2028"}},
]


def test_byte_at_a_time_gives_the_same_messages() -> None:
    stream = b"".join(encode(m) for m in MESSAGES)
    decoder = LineDecoder()
    frames = []
    for i in range(len(stream)):
        frames.extend(decoder.feed(stream[i : i + 1]))  # one byte per read
    frames.extend(decoder.close())
    assert [json.loads(f) for f in frames if isinstance(f, bytes)] == MESSAGES


@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=60))
def test_any_chunking_gives_the_same_messages(cuts: list[int]) -> None:
    stream = b"".join(encode(m) for m in MESSAGES) * 2
    decoder, frames, pos = LineDecoder(), [], 0
    for size in cuts:
        frames.extend(decoder.feed(stream[pos : pos + size]))
        pos += size
    frames.extend(decoder.feed(stream[pos:]))
    frames.extend(decoder.close())
    assert [json.loads(f) for f in frames if isinstance(f, bytes)] == MESSAGES * 2


def test_encoded_messages_are_single_lines_of_utf8() -> None:
    for message in MESSAGES:
        line = encode(message)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert json.loads(line.decode("utf-8")) == message


def test_crlf_blank_lines_and_an_unterminated_last_line() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b'{"a":1}\r\n\r\n   \n{"b"') == [b'{"a":1}']
    assert decoder.feed(b":2}") == []
    assert decoder.close() == [b'{"b":2}']  # EOF ends the last line
    assert decoder.close() == []


def test_an_oversize_line_is_one_frame_and_the_next_line_is_intact() -> None:
    decoder = LineDecoder(max_line=10)
    frames = decoder.feed(b"x" * 7)
    frames += decoder.feed(b"y" * 7)  # over the limit across two reads
    frames += decoder.feed(b"z" * 50 + b'\n{"ok":1}\n')
    assert frames == [Oversize(64), b'{"ok":1}']


def test_lone_surrogates_are_escaped_not_fatal() -> None:
    line = encode({"text": "bad \udcff name"})
    assert line == b'{"text":"bad \\udcff name"}\n'


def test_terminal_controls_are_escaped_and_still_decode() -> None:
    message = {"text": "esc \x1b[31m del \x7f c1 \x9b bidi \u202e end ✓"}
    line = encode(message)
    for raw in (b"\x1b", b"\x7f", "\x9b".encode(), "\u202e".encode()):
        assert raw not in line
    assert "✓".encode() in line and json.loads(line) == message
