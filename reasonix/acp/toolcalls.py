"""Tool calls as the editor sees them: kind, title, locations, content — and their board.

:func:`describe` turns one of our tool calls (name + JSON arguments) into the
ACP ``ToolCall`` fields; :func:`diff_content` turns a recorded file change into
a ``diff`` content item. :class:`CallBoard` is the per-session record shared by
the turn thread (which announces calls as events arrive) and the tool worker
threads (whose ports create terminals and record file changes): it makes sure
an update about a call never reaches the editor before the call itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.provider.types import arguments_object
from reasonix.tool.ports import FileChange

if TYPE_CHECKING:
    from typing import Any

__all__ = ["KINDS", "CallBoard", "describe", "diff_content", "text_content"]

# ACP ToolKind per built-in tool (anything else, MCP tools included, is "other").
KINDS: dict[str, str] = {
    "read_file": "read",
    "ls": "read",
    "glob": "search",
    "grep": "search",
    "code_index": "search",
    "memory": "search",
    "history": "search",
    "edit_file": "edit",
    "multi_edit": "edit",
    "write_file": "edit",
    "notebook_edit": "edit",
    "delete_range": "edit",
    "delete_symbol": "delete",
    "move_file": "move",
    "bash": "execute",
    "bash_output": "execute",
    "wait": "execute",
    "kill_shell": "execute",
    "web_fetch": "fetch",
    "web_search": "fetch",
    "todo_write": "think",
    "update_goal": "think",
    "exit_plan_mode": "switch_mode",
    "plan": "switch_mode",  # the Coordinator's "execute this plan?" question
}
_VERBS = {"read": "Read", "edit": "Edit", "delete": "Delete from", "move": "Move",
          "search": "Search", "fetch": "Fetch", "execute": "Run"}  # fmt: skip
_PATH_KEYS = ("path", "file_path", "notebook_path", "source_path", "destination_path")
_TEXT_LIMIT = 16384  # a tool result shown in the editor; the model saw its own copy


def _absolute(path: str, cwd: Path) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _locations(name: str, args: dict[str, Any], cwd: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value and "\x00" not in value:
            loc: dict[str, Any] = {"path": _absolute(value, cwd)}
            offset = args.get("offset")
            if name == "read_file" and isinstance(offset, int) and not isinstance(offset, bool):
                loc["line"] = max(0, offset) + 1  # ACP lines are 1-based
            out.append(loc)
    return out


def _title(name: str, kind: str, args: dict[str, Any], cwd: Path) -> str:
    if name == "bash" and isinstance(args.get("command"), str):
        return f"Run `{' '.join(args['command'].split())[:200]}`"
    subject = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
    if subject is None:
        for key in ("pattern", "query", "url", "job_id"):
            if isinstance(args.get(key), str):
                subject = args[key]
                break
    if name == "todo_write":
        return "Update the plan"
    verb = _VERBS.get(kind)
    if verb and subject:
        return f"{verb} {subject}"
    return f"{name} {subject}" if subject else name


def describe(name: str, arguments: str, cwd: Path) -> dict[str, Any]:
    """ACP ``ToolCall`` fields for one call (without id and status)."""
    args = arguments_object(arguments)
    kind = KINDS.get(name, "other")
    return {
        "title": _title(name, kind, args, cwd),
        "kind": kind,
        "locations": _locations(name, args, cwd),
        "rawInput": args,
    }


def text_content(text: str) -> dict[str, Any]:
    """A ``content`` item holding plain text (long text is cut for display)."""
    if len(text) > _TEXT_LIMIT:
        text = text[:_TEXT_LIMIT] + f"\n[… {len(text) - _TEXT_LIMIT} more characters]"
    return {"type": "content", "content": {"type": "text", "text": text}}


def diff_content(change: FileChange) -> dict[str, Any]:
    """A ``diff`` content item (``oldText`` null for a new file)."""
    return {
        "type": "diff",
        "path": str(change.path),
        "oldText": change.old_text,
        "newText": change.new_text,
    }


class CallBoard:
    """Which calls the editor knows about, plus what tool ports attached to them.

    Every method takes our call id (the provider's); the board maps it to the
    ACP ``toolCallId``, which must be unique in the session while providers
    may repeat ids across replies (``call_0`` in every step). A new mapping
    starts with each model request (:meth:`begin_step`), before that step's
    tools run.

    ``send`` is the session's ``session/update`` sender. Terminals may be
    created before the turn thread has announced their call (the worker runs
    ahead of the event queue); their content is then folded into the
    announcement instead of being sent first.
    """

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._ids: dict[str, str] = {}  # this step: our id -> ACP id
        self._used: set[str] = set()  # every ACP id of the session
        self._announced: set[str] = set()
        self._terminals: dict[str, str] = {}
        self._changes: dict[str, list[FileChange]] = {}

    def set_sender(self, send: Callable[[dict[str, Any]], None]) -> None:
        """Point the board at its session's sender (the session exists after the ports)."""
        self._send = send

    def begin_step(self) -> None:
        """A new model request: its calls get fresh ACP ids."""
        with self._lock:
            self._ids.clear()

    def _acp(self, call_id: str) -> str:
        acp = self._ids.get(call_id)
        if acp is None:
            acp, n = call_id, 1
            while acp in self._used:
                n += 1
                acp = f"{call_id}-{n}"
            self._ids[call_id] = acp
            self._used.add(acp)
        return acp

    def acp_id(self, call_id: str) -> str:
        """The ACP ``toolCallId`` of our call ``call_id`` in this step."""
        with self._lock:
            return self._acp(call_id)

    def known(self, call_id: str) -> bool:
        """True once the call was announced."""
        with self._lock:
            return self._acp(call_id) in self._announced

    def announce(self, call_id: str, fields: dict[str, Any]) -> None:
        """Send ``tool_call`` for a new call (terminal content already attached included)."""
        with self._lock:
            acp = self._acp(call_id)
            if acp in self._announced:
                return
            self._announced.add(acp)
            update = {"sessionUpdate": "tool_call", "toolCallId": acp, **fields}
            terminal = self._terminals.get(acp)
            if terminal is not None:
                update["content"] = [*update.get("content", []), _terminal(terminal)]
            self._send(update)

    def update(self, call_id: str, fields: dict[str, Any]) -> None:
        """Send ``tool_call_update`` for a known call."""
        with self._lock:
            acp = self._acp(call_id)
            self._send({"sessionUpdate": "tool_call_update", "toolCallId": acp, **fields})

    def attach_terminal(self, call_id: str, terminal_id: str) -> None:
        """A terminal runs this call's command: show it live (now, or with the announcement)."""
        with self._lock:
            acp = self._acp(call_id)
            self._terminals[acp] = terminal_id
            if acp in self._announced:
                content = [_terminal(terminal_id)]
                self._send({"sessionUpdate": "tool_call_update", "toolCallId": acp,
                            "content": content})  # fmt: skip

    def terminal_of(self, call_id: str) -> str | None:
        """The terminal that ran this call, if any."""
        with self._lock:
            return self._terminals.get(self._acp(call_id))

    def record_change(self, call_id: str, change: FileChange) -> None:
        """A file tool of this call wrote a file (the ``on_change`` port)."""
        with self._lock:
            self._changes.setdefault(self._acp(call_id), []).append(change)

    def take_changes(self, call_id: str) -> list[FileChange]:
        """The changes recorded for this call (each is handed out once)."""
        with self._lock:
            return self._changes.pop(self._acp(call_id), [])

    def forget_turn(self) -> None:
        """Drop per-turn state that is no longer needed (used ids stay reserved)."""
        with self._lock:
            self._ids.clear()
            self._terminals.clear()
            self._changes.clear()


def _terminal(terminal_id: str) -> dict[str, Any]:
    return {"type": "terminal", "terminalId": terminal_id}
