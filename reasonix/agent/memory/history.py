"""Searching past conversations (MEM-1) and paging full tool results (CTX-5).

``history`` is a read-only tool over session transcripts: ``scope="session"``
searches the current transcript, ``"project"`` every session of this
workspace, ``"global"`` also every other workspace's sessions and
``<state>/archive/``. ``operation="around"`` returns a bounded window of
messages around a hit id (``<session-id>#<record>``). Compaction never
deletes canonical records, so everything ever said stays findable here.

:func:`tool_result_page` serves the ``session:tool_result`` capability: a
tool message keeps its full local ``raw_content`` next to the bounded
``content`` the provider saw, and the model may page through the full text
on explicit request (8000 code points per page, which stays within the
32 KiB content bound even for 4-byte characters).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reasonix.agent.lazy_records import LazyRecord
from reasonix.agent.memory.bm25 import tokenize
from reasonix.agent.memory.history_index import Doc, TranscriptIndex, message_text, search
from reasonix.agent.session import read_records
from reasonix.errors import SessionError, ToolError
from reasonix.tool import ToolContext
from reasonix.tool.base import FunctionTool

from .declared import PAGE_CHARS, SESSION_TOOL_RESULT, TOOL_RESULT_SCHEMA

__all__ = [
    "PAGE_CHARS",
    "SESSION_TOOL_RESULT",
    "TOOL_RESULT_SCHEMA",
    "HistorySource",
    "history_tool",
    "session_tool_result_tool",
    "tool_result_page",
]

_SNIPPET = 240
_AROUND_MAX = 6
_AROUND_CHARS = 800


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        return read_records(path)
    except (SessionError, OSError):
        return []  # vanished or unreadable: search what is there


class HistorySource:
    """Where ``history`` looks: the live transcript plus folders of ``*.jsonl`` files.

    Each transcript keeps a :class:`~.history_index.TranscriptIndex` across
    searches: the live one is extended by the records appended since the last
    search, a file is re-read only when its (size, mtime) changed and then
    only its new records are tokenised. The first search builds what it
    needs; nothing is built before one is asked for. With ``live_dir`` (the
    folder of the live transcript) the live index is also kept beside the
    transcript (:mod:`.history_store`) whenever ``save_every`` more messages
    were indexed, so the next process loads it instead of building it.
    """

    save_every = 1000  # messages indexed since the last save (a small session rebuilds fast)

    def __init__(
        self,
        current: Callable[[], tuple[str, Sequence[Mapping[str, Any]]]] | None = None,
        project_dirs: Sequence[Path] = (),
        global_dirs: Sequence[Path] = (),
        live_dir: Path | None = None,
    ) -> None:
        self.current = current
        self.project_dirs = list(project_dirs)
        self.global_dirs = list(global_dirs)
        self.live_dir = live_dir
        self._files: dict[Path, tuple[tuple[int, float], TranscriptIndex]] = {}
        self._live: TranscriptIndex | None = None
        self._live_saved = 0  # documents of the live index when it was last saved or loaded
        # One search at a time: an index is extended in place.
        self._lock = threading.Lock()

    @classmethod
    def for_workspace(
        cls,
        workspace: Path,
        current: Callable[[], tuple[str, Sequence[Mapping[str, Any]]]] | None = None,
    ) -> HistorySource:
        """The standard layout: ``<state>/sessions/<slug>``, ``<state>/sessions``, ``archive``."""
        from reasonix.config.paths import sessions_dir, state_dir

        return cls(
            current,
            project_dirs=[sessions_dir(workspace)],
            global_dirs=[state_dir() / "sessions", state_dir() / "archive"],
            live_dir=sessions_dir(workspace),
        )

    def _indexed(
        self, old: TranscriptIndex | None, session: str, records: Sequence[Mapping[str, Any]]
    ) -> TranscriptIndex:
        """``old`` extended by ``records``' new tail, or a new index when it does not fit."""
        ix = old if old is not None and old.session == session else None
        if ix is None or not ix.current_for(records):
            ix = TranscriptIndex(session)
        ix.extend(records)
        return ix

    def _live_index(self, session: str, records: Sequence[Mapping[str, Any]]) -> TranscriptIndex:
        """The live session's index: kept, else loaded from beside its transcript, else built."""
        transcript = None
        if self.live_dir is not None and session and "/" not in session:
            transcript = self.live_dir / f"{session}.jsonl"
        old = self._live
        if old is None or old.session != session:
            old, self._live_saved = None, 0
            if transcript is not None:
                from reasonix.agent.memory import history_store

                old = history_store.load(transcript, session, records)
                self._live_saved = len(old.docs) if old is not None else 0
        ix = self._indexed(old, session, records)
        if ix is not old:
            self._live_saved = 0  # built afresh
        if transcript is not None and len(ix.docs) - self._live_saved >= self.save_every:
            from reasonix.agent.memory import history_store

            history_store.save(ix, transcript, records)
            self._live_saved = len(ix.docs)
        return ix

    def _file_index(self, path: Path) -> TranscriptIndex | None:
        try:
            st = path.stat()
        except OSError:
            return None
        key = (st.st_size, st.st_mtime)
        hit = self._files.get(path)
        if hit and hit[0] == key:
            return hit[1]
        ix = self._indexed(hit[1] if hit else None, path.stem, _read_jsonl(path))
        self._files[path] = (key, ix)
        return ix

    def _indexes(self, scope: str) -> list[TranscriptIndex]:
        """The indexes of ``scope``, in the order the documents rank on ties (lock held)."""
        out: list[TranscriptIndex] = []
        live = ""
        if self.current is not None:
            live, records = self.current()
            self._live = self._live_index(live, records)
            out.append(self._live)
        if scope == "session":
            return out
        dirs = self.project_dirs + (self.global_dirs if scope == "global" else [])
        seen: set[Path] = set()
        for folder in dirs:
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*.jsonl")):
                real = path.resolve()
                if real in seen or path.stem == live:
                    continue
                seen.add(real)
                ix = self._file_index(path)
                if ix is not None:
                    out.append(ix)
        return out

    def search(self, query: str, scope: str, limit: int) -> list[Doc]:
        """The ``limit`` best messages of ``scope`` for ``query``, best first (BM25)."""
        with self._lock:
            return search(self._indexes(scope), query, limit)

    def documents(self, scope: str) -> list[Doc]:
        """Every searchable message of ``scope`` (session | project | global)."""
        with self._lock:
            docs = [d for ix in self._indexes(scope) for d in ix.docs]
        return [d if d.text else Doc(d.session, d.index, d.role, self.text_of(d)) for d in docs]

    def text_of(self, doc: Doc) -> str:
        """The text of ``doc``; one a resumed session left on disk is read back now."""
        if doc.text:
            return doc.text
        return message_text(self.records_of(doc.session)[doc.index]) or ""

    def records_of(self, session: str) -> Sequence[Mapping[str, Any]]:
        """The records of one session by id (live one first)."""
        if self.current is not None:
            live, records = self.current()
            if live == session:
                return records
        for folder in self.project_dirs + self.global_dirs:
            if folder.is_dir():
                for path in folder.rglob(f"{session}.jsonl"):
                    return _read_jsonl(path)
        raise ToolError(f"no session {session!r}")


def _snippet(text: str, terms: set[str]) -> str:
    flat = " ".join(text.split())
    low = flat.lower()
    pos = min((p for t in terms if (p := low.find(t)) >= 0), default=0)
    start = max(0, pos - _SNIPPET // 3)
    piece = flat[start : start + _SNIPPET]
    return ("…" if start else "") + piece + ("…" if start + _SNIPPET < len(flat) else "")


def history_tool(source: HistorySource) -> FunctionTool:
    """The read-only ``history`` tool over ``source``."""

    def run(args: dict[str, Any], ctx: ToolContext) -> str:
        if args["operation"] == "around":
            return _around(source, str(args.get("id") or ""), int(args["window"]))
        query = str(args.get("query") or "")
        if not query.strip():
            raise ToolError("search needs a query")
        terms = set(tokenize(query))
        lines = []
        for d in source.search(query, str(args["scope"]), int(args["limit"])):
            lines.append(f"{d.session}#{d.index} [{d.role}] {_snippet(source.text_of(d), terms)}")
        return "\n".join(lines) if lines else "(no matches)"

    return FunctionTool(
        name="history",
        description=(
            "Search earlier conversation history (also what compaction summarised away) with "
            "BM25. scope: session (this one), project (this workspace), global (all, incl. "
            "archives). operation=around with a hit id (session#record) shows nearby messages."
        ),
        schema={
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": ["search", "around"], "default": "search"},
                "query": {"type": "string"},
                "scope": {
                    "type": "string",
                    "enum": ["session", "project", "global"],
                    "default": "project",
                },
                "id": {"type": "string"},
                "limit": {"type": "integer", "default": 8},
                "window": {"type": "integer", "default": 3},
            },
            "required": [],
        },
        fn=run,
        read_only=True,
    )


def _around(source: HistorySource, hit: str, window: int) -> str:
    session, sep, index_text = hit.rpartition("#")
    if not sep or not index_text.isdigit():
        raise ToolError("around needs an id of the form <session>#<record> from a search")
    records = source.records_of(session)
    center = int(index_text)
    window = max(1, min(window, _AROUND_MAX))
    # a lazy record is a message record (read back only for the lines shown)
    positions = [
        i for i, r in enumerate(records) if isinstance(r, LazyRecord) or message_text(r) is not None
    ]
    if center not in positions:
        raise ToolError(f"{hit} is not a message record")
    at = positions.index(center)
    lines = []
    for i in positions[max(0, at - window) : at + window + 1]:
        rec = records[i]
        text = message_text(rec) or ""
        if len(text) > _AROUND_CHARS:
            text = text[:_AROUND_CHARS] + "…"
        mark = ">" if i == center else " "
        lines.append(f"{mark} {session}#{i} [{rec['message'].get('role', '')}] {text}")
    return "\n".join(lines)


def tool_result_page(records: Sequence[Mapping[str, Any]], tool_call_id: str, page: int = 1) -> str:
    """Page ``page`` (1-based) of the full local result of ``tool_call_id``.

    Uses the record's ``raw_content`` when present (the full original),
    otherwise its bounded ``content``. The header says how many pages exist.
    """
    for rec in reversed(records):
        msg = rec.get("message") if rec.get("type") == "message" else None
        if isinstance(msg, Mapping) and msg.get("tool_call_id") == tool_call_id:
            full = str(rec.get("raw_content") or msg.get("content") or "")
            pages = max(1, -(-len(full) // PAGE_CHARS))
            if not 1 <= page <= pages:
                raise ToolError(f"page must be between 1 and {pages}")
            body = full[(page - 1) * PAGE_CHARS : page * PAGE_CHARS]
            head = f"[tool result {tool_call_id}: page {page} of {pages}, {len(full)} characters]"
            return f"{head}\n{body}"
    raise ToolError(f"no tool result with id {tool_call_id!r} in this session")


def session_tool_result_tool(
    records: Callable[[], Sequence[Mapping[str, Any]]],
) -> FunctionTool:
    """``session:tool_result`` as a plain tool (for a registry without ``use_capability``).

    The ``use_capability`` proxy can instead call :func:`tool_result_page`
    directly under the capability name :data:`SESSION_TOOL_RESULT`.
    """

    def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return tool_result_page(records(), str(args["tool_call_id"]), int(args["page"]))

    return FunctionTool(
        name="session_tool_result",
        description=(
            "Read the full local text of an earlier tool result that was shortened for the "
            "context, one page at a time. Only use it when the shortened result is not enough."
        ),
        schema=dict(TOOL_RESULT_SCHEMA),
        fn=run,
        read_only=True,
    )
