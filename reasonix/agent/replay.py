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
from typing import TYPE_CHECKING

from reasonix.agent.compaction import SUMMARY_INSTRUCTION
from reasonix.cancel import Cancel
from reasonix.errors import ProviderError
from reasonix.lazy import Pattern, dataclass, field
from reasonix.provider.types import Chunk, ChunkKind, Message, Request, Role, Usage

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Divergence",
    "RecordedTurn",
    "Recording",
    "ReplayProvider",
    "compare_results",
    "normalise",
    "relocate",
]

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
    rule: str = ""  # the permission rule behind a "denied" (as written in the config)
    diff: list[str] = field(default_factory=list)  # "result": the normalised results' diff

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {"turn": self.turn, "kind": self.kind, "tool": self.tool,
                               "detail": self.detail}  # fmt: skip
        if self.rule:
            out["rule"] = self.rule
        if self.diff:
            out["diff"] = self.diff
        return out


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

    def relocate(self, moves: tuple[tuple[str, str], ...]) -> int:
        """Point the recorded tool calls' paths at the replay's copy; the calls changed.

        ``moves`` maps a recorded directory (the workspace, as recorded and as
        resolved) to the scratch copy. Models send absolute paths; replayed as
        recorded they would read, and could write, the real workspace.
        """
        import json

        changed = 0
        for turn in self.turns:
            for reply in turn.replies:
                for call in reply.tool_calls:
                    try:
                        args = json.loads(call.arguments or "{}")
                    except ValueError:
                        moved = relocate(call.arguments, moves)  # malformed: its text as is
                    else:
                        new = _relocate_value(args, moves)
                        moved = (
                            call.arguments if new == args else json.dumps(new, ensure_ascii=False)
                        )
                    if moved != call.arguments:
                        call.arguments, changed = moved, changed + 1
        return changed

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
# Characters that continue a file name: a recorded path followed (or preceded) by one
# is another path (``/w/repo`` in ``/w/repo2`` or ``/x/w/repo``) and is left alone.
_NAME_CHARS = frozenset("_.-~+@%#$")


def _joins(ch: str) -> bool:
    return ch.isalnum() or ch in _NAME_CHARS


def relocate(text: str, moves: tuple[tuple[str, str], ...]) -> str:
    """``text`` with every path that is, or lies under, a ``moves`` source moved to its target.

    A source matches only as a whole path or a path's leading directories (bounded
    by the text's start or end, a separator, quotes, spaces, ``=`` …), in one pass,
    so a target that contains a source is not moved again. Longest source first.
    """
    pairs = sorted(((a.rstrip("/\\") or a, b) for a, b in moves if a and a != b),
                   key=lambda m: -len(m[0]))  # fmt: skip
    if not pairs or not any(a in text for a, _ in pairs):
        return text
    out: list[str] = []
    i = last = 0
    while i < len(text):
        for old, new in pairs:
            end = i + len(old)
            if (
                text.startswith(old, i)
                and (i == 0 or not (_joins(text[i - 1]) or text[i - 1] in "/\\"))
                and (end == len(text) or not _joins(text[end]))
            ):
                out += (text[last:i], new)
                i = last = end
                break
        else:
            i += 1
    out.append(text[last:])
    return "".join(out)


def _relocate_value(value: Any, moves: tuple[tuple[str, str], ...]) -> Any:
    """A JSON value with :func:`relocate` applied to every string in it (keys too)."""
    if isinstance(value, str):
        return relocate(value, moves)
    if isinstance(value, list):
        return [_relocate_value(v, moves) for v in value]
    if isinstance(value, dict):
        return {relocate(k, moves): _relocate_value(v, moves) for k, v in value.items()}
    return value


def normalise(text: str, workspaces: tuple[str, ...]) -> str:
    """Tool output with what changes from run to run folded: workspace paths, numbers."""
    for ws in workspaces:
        if ws:
            text = text.replace(ws, "<workspace>")
    return _NUMBER.sub("0", text)


_DIFF_LINES = 12  # a divergence shows this many changed lines at most
_DIFF_WIDTH = 160  # … each cut to this many characters


def result_diff(old: str, new: str) -> list[str]:
    """A short unified diff (no context) of two normalised results: ``-`` then, ``+`` now."""
    import difflib

    lines = [
        line if len(line) <= _DIFF_WIDTH else line[: _DIFF_WIDTH - 1] + "\u2026"
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    if len(lines) > _DIFF_LINES:
        lines[_DIFF_LINES:] = [f"\u2026 {len(lines) - _DIFF_LINES} more changed line(s)"]
    return lines


def _rule(reason: str) -> str:
    """The rule a refusal names (``… matches deny rule 'Bash(rm:*)' …``), else ""."""
    for kind in ("deny", "ask"):
        mark = f"matches {kind} rule "
        at = reason.find(mark)
        if at >= 0:
            rest = reason[at + len(mark) :]
            quote = rest[:1]
            end = rest.find(quote, 1) if quote in "'\"" and quote else -1
            return rest[1:end] if end > 0 else rest.split(")", 1)[0]
    return ""


def compare_results(
    turn: int, recorded: RecordedTurn, now: dict[tuple[int, str], tuple[str, bool, str]],
    workspaces: tuple[str, ...],
) -> list[Divergence]:  # fmt: skip
    """Divergences of one turn's tool results (``now``: (reply, call id) -> text, ran, tool).

    Each says what differs: the refusal's reason and rule for a call refused now,
    what the call returned for one run now, the diff of the normalised results.
    """
    out: list[Divergence] = []
    for key, (text, ran) in recorded.results.items():
        if key not in now:
            continue
        new_text, new_ran, tool = now[key]
        first = (new_text.splitlines() or [""])[0][:300]
        if ran and not new_ran:
            kind = "blocked_by_hook" if "hook" in first else "denied"
            out.append(
                Divergence(turn, kind, f"run then, refused now: {first}", tool, _rule(first))
            )
        elif not ran and new_ran:
            then = (text.splitlines() or [""])[0][:200]
            out.append(Divergence(turn, "allowed", f"refused then ({then}), run now", tool))
        elif ran:
            old, new = normalise(text, workspaces), normalise(new_text, workspaces)
            if old != new:
                diff = result_diff(old, new)
                out.append(Divergence(turn, "result", "the tool's result differs", tool, diff=diff))
    return out
