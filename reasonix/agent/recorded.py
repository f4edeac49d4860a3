"""Tool calls read back from transcripts, for the rule simulator and replay.

A call "ran" when its result is not a refusal (``blocked: …`` — denied, or
asked and not approved — or an unknown tool). Damaged records are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.session import read_records
from reasonix.config.paths import sessions_dir, state_dir
from reasonix.errors import SessionError
from reasonix.permission.simulate import RecordedCall

if TYPE_CHECKING:
    from typing import Any

__all__ = ["calls_in", "project_sessions", "recorded_calls"]


def project_sessions(workspace: Path, all_projects: bool = False) -> list[Path]:
    """Transcript files of this project (or of every project), oldest first."""
    root = state_dir() / "sessions" if all_projects else sessions_dir(workspace)
    if not root.is_dir():
        return []
    pattern = "*/*.jsonl" if all_projects else "*.jsonl"
    return sorted(root.glob(pattern), key=lambda p: (p.stat().st_mtime, p.name))


def _read_only_tools() -> frozenset[str]:
    from reasonix.tool import Registry, builtin

    builtin.load_all()
    reg = Registry.from_builtins()
    return frozenset(n for n in reg.names() if getattr(reg.get(n), "read_only", False))


def calls_in(records: Iterable[dict[str, Any]], session: str, read_only: frozenset[str]
             ) -> list[RecordedCall]:  # fmt: skip
    """The tool calls of one transcript's records, each with whether it ran."""
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    out: list[RecordedCall] = []
    for rec in records:
        msg = rec.get("message") if rec.get("type") == "message" else None
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                try:
                    args = json.loads(str(call.get("arguments") or "{}"))
                except ValueError:
                    args = {}
                name = str(call.get("name", ""))
                pending[str(call.get("id"))] = (name, args if isinstance(args, dict) else {})
        elif msg.get("role") == "tool" and str(msg.get("tool_call_id")) in pending:
            name, args = pending.pop(str(msg.get("tool_call_id")))
            text = str(msg.get("content", ""))
            ran = not (text.startswith("blocked:") or text.startswith("unknown tool"))
            out.append(RecordedCall(name, args, ran, session, name in read_only))
    return out


def recorded_calls(paths: Iterable[Path]) -> list[RecordedCall]:
    """Every recorded call in ``paths`` (unreadable transcripts are skipped)."""
    read_only = _read_only_tools()
    out: list[RecordedCall] = []
    for path in paths:
        try:
            records = read_records(path)
        except (SessionError, OSError):
            continue
        out += calls_in(records, path.stem, read_only)
    return out
