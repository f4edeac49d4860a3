"""Our transcript mirrored in Claude Code's JSONL shape, for hooks that parse it.

Hooks get ``transcript_path`` and some read it: Anthropic's ralph-wiggum Stop
hook takes the last line holding ``"role":"assistant"`` and joins the ``text``
blocks of its ``message.content``. Our own transcript keeps a message's content
as one string, so such a hook found nothing it could read. This sidecar is
written next to it for hooks alone, one line per message, in the shape Claude
Code writes under ``~/.claude/projects/`` (documented by example in Claude's
hooks guide and read by Anthropic's plugins)::

    {"parentUuid":…,"isSidechain":false,"userType":"external","cwd":…,"sessionId":…,
     "version":…,"type":"assistant","message":{"role":"assistant","content":[
     {"type":"text","text":…},{"type":"tool_use","id":…,"name":"Bash","input":{…}}],…},
     "uuid":…,"timestamp":…}

A typed prompt is a ``user`` line whose content is the string (as Claude writes
it); a tool result is a ``user`` line with a ``tool_result`` block. JSON is
compact (no spaces), so ``grep '"role":"assistant"'`` finds the lines.

The sidecar lives under ``<state>/hook-transcripts/<project>/<session id>.jsonl``
(outside the sessions folder, so listings and history search never take it for
a session). It is brought up to date only when a hook is about to run, and
rewritten whole the first time in a process, so it never holds a line twice.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.paths import project_slug, state_dir

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ClaudeTranscript", "transcript_path"]

VERSION = "reasonix"  # Claude writes its own version here; hooks only ever show it


def transcript_path(session_id: str, workspace: str) -> Path:
    """Where the Claude-shaped copy of session ``session_id`` is kept."""
    return state_dir() / "hook-transcripts" / project_slug(workspace) / f"{session_id}.jsonl"


class ClaudeTranscript:
    """The Claude-shaped copy of one session's transcript, appended to as it grows."""

    def __init__(self, session: Any, workspace: str, *, sidechain: bool = False) -> None:
        self.session, self.workspace, self.sidechain = session, workspace, sidechain
        self.path = transcript_path(str(session.id), workspace)
        self._done = -1  # records already written; -1: nothing yet in this process
        self._parent: str | None = None
        self._lock = threading.Lock()  # hooks of parallel tool calls sync at once

    def sync(self) -> Path:
        """Write the lines for records added since the last call; returns the path."""
        with self._lock:
            records = self.session.records()
            fresh = self._done < 0 or len(records) < self._done
            start = 0 if fresh else self._done
            lines = [line for rec in records[start:] for line in self._lines(rec)]
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w" if fresh else "a", encoding="utf-8") as fh:
                fh.write("".join(lines))
            self._done = len(records)
        return self.path

    def _lines(self, record: dict[str, Any]) -> list[str]:
        if record.get("type") != "message" or not isinstance(record.get("message"), dict):
            return []
        message = _claude_message(record["message"], self.workspace, self._model())
        if message is None:
            return []
        kind, body, result = message
        line_id = str(uuid.uuid4())
        line: dict[str, Any] = {
            "parentUuid": self._parent, "isSidechain": self.sidechain, "userType": "external",
            "cwd": self.workspace, "sessionId": str(self.session.id), "version": VERSION,
            "type": kind, "message": body, "uuid": line_id,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        }  # fmt: skip
        if result is not None:
            line["toolUseResult"] = result
        self._parent = line_id
        return [json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"]

    def _model(self) -> str:
        meta = getattr(self.session, "meta", {}) or {}
        return str(meta.get("model") or "")


def _claude_message(
    m: dict[str, Any], workspace: str, model: str
) -> tuple[str, dict[str, Any], Any] | None:
    """(line type, Claude's ``message``, ``toolUseResult``) for one of our messages."""
    role, text = m.get("role"), str(m.get("content") or "")
    if role == "user":
        return "user", {"role": "user", "content": text}, None
    if role == "tool":
        block = {"type": "tool_result", "tool_use_id": str(m.get("tool_call_id") or ""),
                 "content": text}  # fmt: skip
        return "user", {"role": "user", "content": [block]}, text
    if role != "assistant":
        return None  # system lines are not part of Claude's transcript
    from .hook_shapes import tool_input
    from .hooks import CLAUDE_TOOL_NAMES

    blocks: list[dict[str, Any]] = []
    if m.get("reasoning"):
        blocks.append({"type": "thinking", "thinking": str(m["reasoning"]), "signature": ""})
    if text:
        blocks.append({"type": "text", "text": text})
    calls = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    for call in calls:
        name = str(call.get("name") or "")
        try:
            args = json.loads(call.get("arguments") or "{}")
        except ValueError:
            args = {}
        args = args if isinstance(args, dict) else {}
        blocks.append({"type": "tool_use", "id": str(call.get("id") or ""),
                       "name": CLAUDE_TOOL_NAMES.get(name, name),
                       "input": tool_input(name, args, workspace)})  # fmt: skip
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    body = {
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
        "model": model, "content": blocks, "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0},
    }  # fmt: skip
    return "assistant", body, None
