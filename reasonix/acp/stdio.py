"""The stdio transport: read frames until the client closes stdin, then end cleanly.

:func:`serve` is given the protocol streams by the frontend (``reasonix acp``
hands over the real stdin/stdout after pointing every other writer at
stderr). The reader loop never dies on a message: each frame is parsed,
validated and dispatched inside the RPC error boundary. When the input ends,
every running turn is cancelled and answered, pending agent→client requests
fail at once, MCP servers stop, and the exit code is 0.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .framing import Frame, LineDecoder
from .rpc import Connection
from .server import AcpServer
from .session import Defaults

if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

__all__ = ["serve"]

_READ = 65536


def _reader(stream: BinaryIO) -> bytes:
    read1 = getattr(stream, "read1", None)
    data = read1(_READ) if read1 is not None else stream.read(_READ)
    return bytes(data or b"")


def serve(
    stdin: BinaryIO,
    stdout: BinaryIO,
    log_stream: TextIO,
    defaults: Defaults | None = None,
    version: str = "",
) -> int:
    """Run the agent until ``stdin`` ends; returns the exit code (0)."""
    log_lock = threading.Lock()

    def log(message: str) -> None:
        with log_lock:
            try:
                log_stream.write(f"reasonix acp: {message}\n")
                log_stream.flush()
            except (OSError, ValueError):
                pass  # logging must never stop the agent

    def write(data: bytes) -> None:
        stdout.write(data)
        stdout.flush()

    conn = Connection(write, log)
    server = AcpServer(conn, defaults or Defaults(), version)
    decoder = LineDecoder()

    def handle(frames: list[Frame]) -> None:
        for frame in frames:
            try:
                incoming = conn.receive(frame)
                if incoming is not None:
                    server.dispatch(incoming)
            except Exception as exc:  # noqa: BLE001 - one bad message never ends the agent
                log(f"dropped a message: {type(exc).__name__}: {exc}")

    try:
        while True:
            try:
                data = _reader(stdin)
            except OSError as err:
                log(f"stdin: {err}")
                break
            if not data:
                break
            handle(decoder.feed(data))
        handle(decoder.close())
    finally:
        conn.close()
        server.shutdown()
    return 0
