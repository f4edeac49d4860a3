"""Sans-I/O NDJSON framing: one JSON-RPC message per ``\\n``-terminated UTF-8 line.

:class:`LineDecoder` is fed whatever bytes a read returned (a whole buffer,
half a line, one byte at a time) and hands back complete lines; it never
reads or blocks itself, so it is tested byte by byte. A line longer than
``max_line`` is not buffered without bound: it becomes one :class:`Oversize`
frame (answered with a parse error) and its bytes up to the next newline are
dropped. :func:`encode` turns one message into one line; JSON escapes every
newline inside strings, so a message never spans lines.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.lazy import Pattern, dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_LINE_BYTES", "Frame", "LineDecoder", "Oversize", "encode"]

# An editor may embed whole files in a prompt; 64 KiB (a common SDK default) is far
# too small, but a peer must not make us hold an unbounded line either.
MAX_LINE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Oversize:
    """A line longer than the limit was dropped (``size`` bytes seen so far)."""

    size: int


Frame = bytes | Oversize

# json.dumps escapes C0 itself; these it leaves raw with ensure_ascii=False.
_UNSAFE = Pattern("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


class LineDecoder:
    """Splits a byte stream into lines; a trailing ``\\r`` is removed, blank lines skipped."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._dropping = 0  # >0: inside an oversize line, this many bytes dropped

    def feed(self, data: bytes) -> list[Frame]:
        """Complete frames found after adding ``data``."""
        out: list[Frame] = []
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            piece = data[start:] if nl < 0 else data[start:nl]
            if self._dropping:
                self._dropping += len(piece)
            elif len(self._buf) + len(piece) > self.max_line:
                self._dropping = len(self._buf) + len(piece)
                self._buf.clear()
            else:
                self._buf += piece
            if nl < 0:
                break
            out.extend(self._end_line())
            start = nl + 1
        return out

    def close(self) -> list[Frame]:
        """Frames left at end of input: an unterminated last line still counts."""
        return self._end_line()

    def _end_line(self) -> list[Frame]:
        if self._dropping:
            size, self._dropping = self._dropping, 0
            return [Oversize(size)]
        line = bytes(self._buf).rstrip(b"\r")
        self._buf.clear()
        return [line] if line.strip() else []


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line of UTF-8 JSON.

    Printable non-ASCII text stays readable; DEL, C1 and bidi controls and
    lone surrogates are written as ``\\uXXXX`` escapes (the ``json_line`` rule
    of the structured CLI output), so no raw control reaches a client that
    logs the stream, and the line always encodes as UTF-8. ValueError for NaN
    or infinity, which JSON cannot carry.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if _UNSAFE.search(text) is not None:  # such characters only occur inside strings
        text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8") + b"\n"
