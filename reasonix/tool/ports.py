"""Where the file tools and bash do their I/O, when a frontend owns it (ACP editors).

By default the tools read and write the local disk and run bash as a local
subprocess. A frontend that speaks for an editor (``reasonix acp``) fills a
:class:`ToolPorts` so that

- text files are read and written through the editor (:class:`FileIO`), which
  sees unsaved buffers and keeps its undo history;
- foreground bash runs in the editor's terminal (:class:`TerminalPort`);
- every completed file change is reported with its before/after text
  (``on_change``), so the frontend can show diffs.

The ports only move bytes: path confinement (``resolve_read`` /
``resolve_write``), the permission gate and the sandbox wrapping of bash run
before a port is called, exactly as on the local path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from reasonix.lazy import dataclass

if TYPE_CHECKING:
    from reasonix.cancel import Cancel

__all__ = ["FileChange", "FileIO", "TerminalPort", "TerminalRun", "ToolPorts"]


@dataclass(frozen=True)
class FileChange:
    """One file a tool changed: its text before (None: the file was new) and after."""

    path: Path
    old_text: str | None
    new_text: str


class FileIO(Protocol):
    """Text-file access through someone else (an editor's buffers)."""

    def read_text(self, path: Path) -> str:
        """The current text of ``path`` (absolute, already confined); ToolError when missing."""
        ...

    def write_text(self, path: Path, text: str) -> None:
        """Replace (or create) ``path`` with ``text``; ToolError on failure."""
        ...


@dataclass(frozen=True)
class TerminalRun:
    """How a command run through a :class:`TerminalPort` ended."""

    output: str
    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    cancelled: bool = False
    truncated: bool = False  # the terminal dropped the start of a long output


class TerminalPort(Protocol):
    """Runs one foreground command somewhere else (an editor's terminal)."""

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
        """Run ``argv`` (already sandbox-wrapped) to the end, a timeout or a cancel."""
        ...


class ToolPorts(NamedTuple):
    """The optional ports of one run; every field None means "all local".

    A named tuple: every run's tool context holds one (all None but for an editor's
    or the browser's), and a tuple class costs a tenth of a dataclass to build."""

    file_io: FileIO | None = None
    terminal: TerminalPort | None = None
    # (tool call id, change) after every successful write by a file tool
    on_change: Callable[[str, FileChange], None] | None = None
