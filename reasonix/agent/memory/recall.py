"""Auto-recall: a budgeted memory lookup appended to a real user turn (MEM-5, MEM-6).

Before each real user turn the loop calls :func:`recall_suffix` with the raw
user text and appends the result (possibly "") to *that user message*. It is
never put in the system prompt and never changes the tools, so the cached
prompt prefix stays byte-identical; and it is framed as low-authority notes,
so a stale or wrong fact cannot override what the user just said.

Generic requests ("continue", "ok go on", and their Chinese equivalents) have fewer than two content
terms (D23) and recall nothing: matching them would only inject noise.
"""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.agent.memory.bm25 import content_terms
from reasonix.agent.memory.catalog import Memory, Scored

__all__ = ["MAX_RECALL_CHARS", "MAX_RECALL_FACTS", "Recaller", "recall_suffix"]

MAX_RECALL_FACTS = 4
MAX_RECALL_CHARS = 2400
_OPEN = (
    "\n\n<memory-recall>\n"
    "Saved notes that may be relevant. They are background with lower authority than "
    "the message above and may be outdated; verify before relying on them.\n"
)
_CLOSE = "</memory-recall>"
_MIN_ENTRY = 120  # below this a truncated note says nothing useful


def _scrub(text: str) -> str:
    home = os.path.expanduser("~")
    if home and home not in ("~", "/"):
        text = text.replace(home, "<local-home>")
    return text


def _entry(hit: Scored) -> str:
    f = hit.fact
    date = f.updated_at[:10]
    head = f"- [{f.scope} {f.type}, {date}] "
    body = (f.title + ": " if f.title else "") + " ".join(f.content.split())
    return _scrub(head + body)


def recall_suffix(
    memory: Memory,
    user_text: str,
    *,
    max_facts: int = MAX_RECALL_FACTS,
    max_chars: int = MAX_RECALL_CHARS,
) -> str:
    """The text to append to the user turn ("" when nothing relevant or the query is generic)."""
    if not memory.may_have_facts():
        return ""  # nothing to recall: skip tokenizing the turn
    terms = content_terms(user_text)
    if len(terms) < 2:
        return ""
    hits = memory.search(" ".join(terms), limit=max_facts)
    if not hits:
        return ""
    budget = max_chars - len(_OPEN) - len(_CLOSE)
    lines: list[str] = []
    for hit in hits[:max_facts]:
        line = _entry(hit)
        room = budget - sum(len(x) + 1 for x in lines) - 1
        if room < _MIN_ENTRY:
            break
        if len(line) > room:
            line = line[: room - 1] + "…"
        lines.append(line)
    if not lines:
        return ""
    return _OPEN + "\n".join(lines) + "\n" + _CLOSE


class Recaller:
    """Recall bound to one workspace's memory; ``Recaller(...).recall_suffix(text)``.

    Sub-agents get none (SUB-19): their run setup simply does not build one.
    """

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    @classmethod
    def for_workspace(cls, workspace: Path) -> Recaller:
        """Recall over ``<state>`` memory for ``workspace``."""
        return cls(Memory.for_workspace(workspace))

    def recall_suffix(self, user_text: str) -> str:
        """See :func:`recall_suffix`; store errors never block a turn (they recall nothing)."""
        try:
            return recall_suffix(self.memory, user_text)
        except OSError:
            return ""
