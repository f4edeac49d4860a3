"""Replay a recorded session: every model response comes from the transcript.

:class:`Recording` reads a transcript into user turns, the assistant replies of
each turn, the results each tool call got and the summaries compaction wrote.
:class:`ReplayProvider` is a Provider that serves those replies in order (no
network), and the summaries when the context manager asks for one.
:func:`compare` then lines the new run up against the recording and names
where it diverges: a call now refused or answered differently, a hook that now
blocks, a compaction at another point, a reply the recording does not have.
"""

from __future__ import annotations

from collections.abc import Iterator

from reasonix.agent.compaction import SUMMARY_INSTRUCTION
from reasonix.cancel import Cancel
from reasonix.errors import ProviderError
from reasonix.lazy import Pattern, dataclass, field
from reasonix.provider.types import Chunk, ChunkKind, Message, Request, Role, Usage

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Divergence", "RecordedTurn", "Recording", "ReplayProvider", "normalise"]

STOP_HOOK_PREFIX = "[Stop hook] "  # the loop's own continuation message, not a user turn


@dataclass
class RecordedTurn:
    """One user turn of the recording."""

    text: str
    replies: list[Message] = field(default_factory=list)
    # (reply index, call id) -> (result text, ran); ids repeat across replies on some servers
    results: dict[tuple[int, str], tuple[str, bool]] = field(default_factory=dict)
    summaries: int = 0  # compaction checkpoints written during this turn


@dataclass
class Divergence:
    """One place where the new run differs from the recording."""

    turn: int
    kind: str  # denied | allowed | blocked_by_hook | result | compaction | no_reply | error
    detail: str
    tool: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"turn": self.turn, "kind": self.kind, "tool": self.tool, "detail": self.detail}


def _refused(text: str) -> bool:
    return text.startswith("blocked:") or text.startswith("unknown tool")


class Recording:
    """A transcript read back for replay."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.turns: list[RecordedTurn] = []
        self.summaries: list[str] = []
        self.workspace = ""
        for rec in records:
            kind = rec.get("type")
            if kind == "meta":
                self.workspace = str(rec.get("workspace", ""))
            elif kind == "checkpoint":
                self.summaries.append(str(rec.get("summary", "")))
                if self.turns:
                    self.turns[-1].summaries += 1
            elif kind == "message" and isinstance(rec.get("message"), dict):
                self._message(Message.from_dict(rec["message"]))

    def _message(self, msg: Message) -> None:
        if msg.role is Role.USER and not msg.content.startswith(STOP_HOOK_PREFIX):
            self.turns.append(RecordedTurn(msg.content))
        elif not self.turns:
            return
        elif msg.role is Role.ASSISTANT:
            self.turns[-1].replies.append(msg)
        elif msg.role is Role.TOOL and self.turns[-1].replies:
            key = (len(self.turns[-1].replies) - 1, msg.tool_call_id)
            self.turns[-1].results[key] = (msg.content, not _refused(msg.content))


class ReplayProvider:
    """Serves the recorded replies of the current turn; summaries for compaction requests."""

    name = "replay"

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.turn = -1
        self._next = 0
        self._summary = 0
        self.summaries_requested: list[int] = []  # the turn of each summary request
        self.missing: list[int] = []  # turns that asked for a reply the recording lacks

    def begin_turn(self, index: int) -> None:
        """The replay moves on to recorded turn ``index`` (0-based)."""
        self.turn, self._next = index, 0

    def stream(self, request: Request, cancel: Cancel) -> Iterator[Chunk]:
        """The next recorded reply (or summary) as chunks."""
        cancel.raise_if_cancelled()
        last = request.messages[-1] if request.messages else None
        if (
            last is not None
            and last.role is Role.USER
            and last.content.startswith(SUMMARY_INSTRUCTION)
        ):
            self.summaries_requested.append(self.turn)
            summaries = self.recording.summaries
            text = summaries[self._summary] if self._summary < len(summaries) else "(replay)"
            self._summary += 1
            yield Chunk(ChunkKind.TEXT, text=text)
            yield Chunk(ChunkKind.USAGE, usage=Usage())
            yield Chunk(ChunkKind.DONE, finish_reason="stop")
            return
        replies = self.recording.turns[self.turn].replies if self.turn >= 0 else []
        if self._next >= len(replies):
            self.missing.append(self.turn)
            raise ProviderError("replay: the recording has no further reply for this turn")
        reply = replies[self._next]
        self._next += 1
        if reply.reasoning:
            yield Chunk(ChunkKind.REASONING, text=reply.reasoning)
        if reply.content:
            yield Chunk(ChunkKind.TEXT, text=reply.content)
        for call in reply.tool_calls:
            yield Chunk(ChunkKind.TOOL_CALL, tool_call=call)
        yield Chunk(ChunkKind.USAGE, usage=Usage())
        reason = "tool_calls" if reply.tool_calls else "stop"
        yield Chunk(ChunkKind.DONE, finish_reason=reason, reasoning_meta=reply.reasoning_meta)


_NUMBER = Pattern(r"\d+(?:\.\d+)?")


def normalise(text: str, workspaces: tuple[str, ...]) -> str:
    """Tool output with what changes from run to run folded: workspace paths, numbers."""
    for ws in workspaces:
        if ws:
            text = text.replace(ws, "<workspace>")
    return _NUMBER.sub("0", text)


def compare_results(
    turn: int, recorded: RecordedTurn, now: dict[tuple[int, str], tuple[str, bool, str]],
    workspaces: tuple[str, ...],
) -> list[Divergence]:  # fmt: skip
    """Divergences of one turn's tool results (``now``: (reply, call id) -> text, ran, tool)."""
    out: list[Divergence] = []
    for key, (text, ran) in recorded.results.items():
        if key not in now:
            continue
        new_text, new_ran, tool = now[key]
        if ran and not new_ran:
            kind = "blocked_by_hook" if "hook" in new_text.split("\n", 1)[0] else "denied"
            out.append(Divergence(turn, kind, new_text.splitlines()[0][:300], tool))
        elif not ran and new_ran:
            out.append(Divergence(turn, "allowed", "refused then, run now", tool))
        elif ran and normalise(text, workspaces) != normalise(new_text, workspaces):
            out.append(Divergence(turn, "result", "the tool's result differs", tool))
    return out
