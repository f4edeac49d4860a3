"""Host receipts: what a child really ran, read and wrote, taken from its own events.

The ledger watches the child's ``ToolStart``/``ToolEnd`` events (the host
saw each call pass the gate and finish), so its receipts are the host's
record, not the child's story: a command counts as executed only when the
bash tool ran it; a path counts as written only when a path-aware writer
succeeded on it. Completion reports are judged against these receipts
(:mod:`.completion`) and mutations against the write claim.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import PathDenied
from reasonix.lazy import Pattern, dataclass, field
from reasonix.tool.paths import real_path

from ..events import Event, ToolEnd, ToolStart

if TYPE_CHECKING:
    from typing import Any

__all__ = ["PATH_READERS", "PATH_WRITERS", "CommandReceipt", "Ledger"]

# SUB-12: the path-aware writers and the arguments that name what they change.
PATH_WRITERS: dict[str, tuple[str, ...]] = {
    "write_file": ("path",),
    "edit_file": ("path",),
    "multi_edit": ("path",),
    "notebook_edit": ("path",),
    "delete_range": ("path",),
    "delete_symbol": ("path",),
    "move_file": ("source_path", "destination_path"),  # both ends change
}
PATH_READERS: dict[str, str] = {
    "read_file": "path", "ls": "path", "glob": "path", "grep": "path", "code_index": "path",
}  # fmt: skip
_EXIT = Pattern(r"\[exit code (-?\d+)\]\s*$")


@dataclass(frozen=True)
class CommandReceipt:
    """One command the bash tool ran; ``exit_code`` None = no normal exit."""

    command: str
    exit_code: int | None
    note: str = ""  # "timed out", "background job", …


@dataclass
class Ledger:
    """Receipts of one child run, fed with its events."""

    workspace: Path
    commands: list[CommandReceipt] = field(default_factory=list)
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    tool_calls: int = 0
    report: dict[str, Any] | None = None  # the last accepted complete_subtask arguments
    _open: dict[str, ToolStart] = field(default_factory=dict)

    def observe(self, event: Event) -> None:
        """Take one child event into the receipts."""
        if isinstance(event, ToolStart):
            self._open[event.call_id] = event
        elif isinstance(event, ToolEnd):
            self.tool_calls += 1
            start = self._open.pop(event.call_id, None)
            if start is not None:
                self._finished(start, event)

    def _real(self, raw: Any) -> Path | None:
        if not isinstance(raw, str) or not raw:
            return None
        try:
            return real_path(raw, self.workspace)
        except PathDenied:
            return None

    @staticmethod
    def _add(paths: list[Path], path: Path | None) -> None:
        if path is not None and path not in paths:
            paths.append(path)

    def _finished(self, start: ToolStart, end: ToolEnd) -> None:
        try:
            args = json.loads(start.arguments or "{}")
        except ValueError:
            args = {}
        if not isinstance(args, dict):
            args = {}
        name = start.name
        if name == "bash":
            self.commands.append(_command_receipt(args, end))
        elif name in PATH_WRITERS:
            if end.is_error:
                shown = " -> ".join(str(args.get(k, "")) for k in PATH_WRITERS[name])
                first = (end.content.strip().splitlines() or [""])[0]
                why = first.removeprefix(name + ": ").split(";", 1)[0]
                self.refused.append(f"{name} {shown}: {why[:240]}")
            else:
                for key in PATH_WRITERS[name]:
                    self._add(self.writes, self._real(args.get(key)))
        elif name in PATH_READERS and not end.is_error:
            self._add(self.reads, self._real(args.get(PATH_READERS[name]) or "."))
        elif name == "complete_subtask" and not end.is_error:
            self.report = args

    def ran(self, text: str) -> CommandReceipt | None:
        """The recorded command ``text`` cites (exactly, or quoted inside it), else None."""
        want = " ".join(text.split()).strip("`$ ")
        if not want:
            return None
        for receipt in reversed(self.commands):
            have = " ".join(receipt.command.split())
            if have == want or (len(have) >= 3 and have in want):
                return receipt
        return None

    def saw(self, raw: str) -> bool:
        """True when the host saw ``raw`` (a path) read or written."""
        path = self._real(raw.strip().strip("`"))
        if path is None:
            return False
        seen = [*self.writes, *self.reads]
        # a cited directory is backed by a file seen inside it, never the other way round
        return any(p == path or p.is_relative_to(path) for p in seen)


def _command_receipt(args: dict[str, Any], end: ToolEnd) -> CommandReceipt:
    command = str(args.get("command", ""))
    if args.get("run_in_background"):
        return CommandReceipt(command, None, "background job")
    match = _EXIT.search(end.content)
    if match:
        return CommandReceipt(command, int(match.group(1)))
    tail = end.content.strip().splitlines()[-1:] or [""]
    note = "timed out" if "timed out" in tail[0] else "did not exit normally"
    return CommandReceipt(command, None, note)
