"""A sans-I/O incremental decoder for Server-Sent Events.

Bytes go in, events come out; nothing here reads a socket. The parsing rules
follow the WHATWG "event stream interpretation" section
(https://html.spec.whatwg.org/multipage/server-sent-events.html):

* lines end in CRLF, LF or CR — a CR that ends one read and an LF that starts
  the next are one line end;
* the stream is UTF-8, invalid sequences become U+FFFD, one leading BOM is
  dropped; a multi-byte sequence split across reads is reassembled, because
  only whole lines are decoded and line ends are ASCII;
* ``data:`` lines accumulate (joined with LF), ``event:`` sets the type,
  ``id:`` sets the last event id (ignored when it contains NUL), ``retry:``
  with ASCII digits sets the reconnection time, ``:`` starts a comment,
  unknown fields are ignored, one space after the colon is stripped;
* a blank line dispatches the event — unless no ``data:`` line was seen, in
  which case nothing is dispatched (the spec's rule, applied consistently,
  so keep-alive and priming blocks are skipped);
* at end of stream an unterminated event is discarded; :attr:`SSEDecoder.pending`
  tells the caller whether anything was left, so a cut stream can be detected.

The hot path works on whole buffers: ``bytes.splitlines`` (which splits on
exactly CR, LF and CRLF) and one decode per line, never a Python loop per byte.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SSEDecoder", "ServerSentEvent"]

_BOM = b"\xef\xbb\xbf"


class ServerSentEvent(NamedTuple):
    """One dispatched event (an immutable record: a :class:`typing.NamedTuple`, cheap to
    define on the start-up path, no ``__dict__`` per event).

    ``event`` is the type ("message" when no ``event:`` field was given),
    ``id`` the last event id in effect, ``retry`` the reconnection time in ms
    set inside this event's block (None when none was).
    """

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None


class SSEDecoder:
    """Incremental SSE parser: call :meth:`feed` with each read, :meth:`close` at EOF."""

    def __init__(self) -> None:
        self._partial: list[bytes] = []  # an unterminated line, in pieces
        self._skip_lf = False  # the last read ended in CR: a leading LF is its partner
        self._first_line = True  # the BOM may only open the very first line
        self._data: list[str] = []
        self._event = ""
        self._retry: int | None = None
        self.last_event_id = ""
        self.retry: int | None = None  # the most recent reconnection time, in ms

    @property
    def pending(self) -> bool:
        """True when bytes or fields of an undispatched event are buffered."""
        return bool(self._partial or self._data or self._event or self._retry is not None)

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Consume one read's bytes; return the events it completed, in order."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        # Everything up to the last line end is complete; the rest waits.
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if end < 0:
            self._partial.append(chunk)
            return []
        head = chunk[: end + 1]
        if self._partial:
            self._partial.append(head)
            head = b"".join(self._partial)
            self._partial = []
        tail = chunk[end + 1 :]
        if tail:
            self._partial.append(tail)
        elif head[-1:] == b"\r":
            self._skip_lf = True
        return self._lines(head.splitlines())

    def close(self) -> list[ServerSentEvent]:
        """End of stream: an unterminated event is discarded, per the spec.

        Returns an empty list (kept for symmetry with ``feed``); check
        :attr:`pending` first to learn whether the stream was cut mid-event.
        """
        self._partial = []
        self._data = []
        self._event = ""
        self._retry = None
        return []

    def _lines(self, lines: list[bytes]) -> list[ServerSentEvent]:
        out: list[ServerSentEvent] = []
        if self._first_line and lines:
            self._first_line = False
            if lines[0].startswith(_BOM):
                lines[0] = lines[0][3:]
        data = self._data
        for raw in lines:
            if not raw:
                if data:
                    text = data[0] if len(data) == 1 else "\n".join(data)
                    out.append(
                        ServerSentEvent(
                            self._event or "message", text, self.last_event_id, self._retry
                        )
                    )
                    data.clear()
                # A block without data is not dispatched, but still resets its type.
                self._event = ""
                self._retry = None
                continue
            # The common case first: "data: …" carries the payload of almost every line.
            if raw[:6] == b"data: ":
                data.append(raw[6:].decode("utf-8", "replace"))
                continue
            line = raw.decode("utf-8", "replace")
            if line[0] == ":":
                continue
            name, colon, value = line.partition(":")
            if colon and value[:1] == " ":
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                if "\0" not in value:
                    self.last_event_id = value
            elif name == "retry" and value.isascii() and value.isdigit():
                self._retry = self.retry = int(value)
        return out
