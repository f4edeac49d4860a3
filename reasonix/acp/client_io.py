"""The editor's file system and terminals as tool ports (``fs/*``, ``terminal/*``).

Used only when the client advertised them in ``initialize``. The tools have
already confined the path (or sandbox-wrapped the command) and passed the
permission gate; these ports only carry the I/O to the editor, which sees
unsaved buffers, keeps its undo history and shows commands live.

Both run on tool worker threads and block on the client's answer; the
session's current turn token (:attr:`SessionLink.cancel`) ends the wait when
the turn is cancelled.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ToolError
from reasonix.tool.ports import FileChange, TerminalRun, ToolPorts

from .rpc import Connection, ConnectionClosed, RpcError
from .toolcalls import CallBoard

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ClientFiles", "ClientTerminal", "SessionLink", "ports_for"]

OUTPUT_BYTE_LIMIT = 4 * 1024 * 1024  # what the editor keeps of a command's output


class SessionLink:
    """What the ports need of their ACP session: its id and the running turn's token."""

    def __init__(self, conn: Connection, board: CallBoard, session_id: str = "") -> None:
        self.conn, self.board, self.session_id = conn, board, session_id
        self.cancel = Cancel()  # replaced at the start of every turn

    def ask(self, method: str, params: dict[str, Any], cancel: Cancel | None = None) -> Any:
        """One request to the client for this session; failures become ToolError."""
        try:
            return self.conn.request(
                method, {"sessionId": self.session_id, **params}, cancel or self.cancel
            )
        except RpcError as err:
            raise ToolError(f"the editor refused {method}: {err.message}") from None
        except ConnectionClosed as err:
            raise ToolError(str(err)) from None


class ClientFiles:
    """:class:`~reasonix.tool.ports.FileIO` over ``fs/read_text_file`` / ``fs/write_text_file``."""

    def __init__(self, link: SessionLink) -> None:
        self.link = link

    def read_text(self, path: Path) -> str:
        """The editor's text of ``path`` (unsaved changes included)."""
        result = self.link.ask("fs/read_text_file", {"path": str(path)})
        content = result.get("content") if isinstance(result, dict) else None
        if not isinstance(content, str):
            raise ToolError(f"the editor sent no text for {path}")
        return content

    def write_text(self, path: Path, text: str) -> None:
        """Hand the new text to the editor (it creates the file when needed)."""
        self.link.ask("fs/write_text_file", {"path": str(path), "content": text})


class ClientTerminal:
    """:class:`~reasonix.tool.ports.TerminalPort` over ``terminal/*``.

    The timeout follows the protocol's recipe: wait for exit, and when the
    timer (or the turn's cancel) fires first, kill, read the output, release.
    """

    def __init__(self, link: SessionLink) -> None:
        self.link = link

    def run(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        timeout: float | None,
        cancel: Cancel,
        call_id: str,
    ) -> TerminalRun:
        """Run ``argv`` in a new editor terminal until it exits, times out or is cancelled."""
        created = self.link.ask(
            "terminal/create",
            {
                "command": argv[0],
                "args": argv[1:],
                "env": [{"name": k, "value": v} for k, v in sorted(env.items())],
                "cwd": cwd,
                "outputByteLimit": OUTPUT_BYTE_LIMIT,
            },
            cancel,
        )
        terminal_id = created.get("terminalId") if isinstance(created, dict) else None
        if not isinstance(terminal_id, str):
            raise ToolError("the editor created no terminal")
        ref = {"terminalId": terminal_id}
        if call_id:
            self.link.board.attach_terminal(call_id, terminal_id)
        timed_out = stopped = False
        try:
            waiter = Cancel.with_timeout(timeout, parent=cancel) if timeout else cancel.child()
            try:
                self.link.ask("terminal/wait_for_exit", ref, waiter)
            except ToolError:
                if not (cancel.cancelled or waiter.cancelled):
                    raise
            except Cancelled:
                pass
            if waiter.cancelled:
                stopped = True
                timed_out = not cancel.cancelled
                with contextlib.suppress(ToolError, Cancelled):
                    self.link.ask("terminal/kill", ref, Cancel.with_timeout(5.0))
            output = self.link.ask("terminal/output", ref, Cancel.with_timeout(10.0))
        finally:
            with contextlib.suppress(ToolError, Cancelled):
                self.link.ask("terminal/release", ref, Cancel.with_timeout(5.0))
        return _outcome(output, timed_out, stopped and not timed_out)


def _outcome(output: Any, timed_out: bool, cancelled: bool) -> TerminalRun:
    if not isinstance(output, dict):
        output = {}
    raw_status = output.get("exitStatus")
    status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
    code = status.get("exitCode")
    signal = status.get("signal")
    return TerminalRun(
        output=str(output.get("output") or ""),
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
        signal=signal if isinstance(signal, str) and signal else None,
        timed_out=timed_out,
        cancelled=cancelled,
        truncated=bool(output.get("truncated")),
    )


def ports_for(link: SessionLink, client_caps: dict[str, Any]) -> ToolPorts:
    """The tool ports one session gets from what the client advertised.

    File changes are always recorded (for diffs); files and terminals go
    through the editor only when it offers them. Files need both
    ``readTextFile`` and ``writeTextFile``: an edit reads and writes the same
    text, so half of it in the editor and half on disk could disagree.
    """
    raw_fs = client_caps.get("fs")
    fs: dict[str, Any] = raw_fs if isinstance(raw_fs, dict) else {}
    both = fs.get("readTextFile") is True and fs.get("writeTextFile") is True
    files = ClientFiles(link) if both else None
    terminal = ClientTerminal(link) if client_caps.get("terminal") is True else None

    def on_change(call_id: str, change: FileChange) -> None:
        link.board.record_change(call_id, change)

    return ToolPorts(file_io=files, terminal=terminal, on_change=on_change)
