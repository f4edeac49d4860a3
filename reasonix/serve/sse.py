"""Server-Sent Events framing: one pure function from an event to its bytes.

The wire rules (WHATWG HTML, "server-sent events"): a message is a block of
``field: value`` lines ended by a blank line. A value cannot hold a line
break, so ``data`` is split on every newline form (``\\r\\n``, ``\\r``,
``\\n``) into several ``data:`` lines, which the browser joins back with
``\\n``; ``id`` and ``event`` are single-line fields, so line breaks are
removed from them (and NUL from ``id``, which would make the browser ignore
the field). A line starting with ``:`` is a comment: used as a keep-alive.
"""

from __future__ import annotations

from reasonix.lazy import Pattern, dataclass

__all__ = ["SseEvent", "comment", "encode"]

_NEWLINES = Pattern(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SseEvent:
    """One message: ``data`` text plus the optional ``id``, ``event`` and ``retry`` fields."""

    data: str
    id: int | str | None = None
    event: str = ""
    retry: int | None = None  # milliseconds the browser waits before reconnecting


def _single_line(value: str) -> str:
    return _NEWLINES.sub("", value)


def encode(event: SseEvent) -> bytes:
    """The UTF-8 bytes of ``event`` on the wire, blank line included."""
    lines: list[str] = []
    if event.id is not None:
        lines.append("id: " + _single_line(str(event.id)).replace("\0", ""))
    if event.event:
        lines.append("event: " + _single_line(event.event))
    if event.retry is not None:
        lines.append(f"retry: {max(0, int(event.retry))}")
    lines.extend("data: " + part for part in _NEWLINES.split(event.data))
    # "replace": a lone surrogate in model text must not kill the stream
    return ("\n".join(lines) + "\n\n").encode("utf-8", "replace")


def comment(text: str = "") -> bytes:
    """A comment line (``: text``), e.g. a keep-alive ping; browsers ignore it."""
    return f": {_single_line(text)}\n\n".encode()
