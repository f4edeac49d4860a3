"""Human-facing memory and compaction actions, shared by ``reasonix memory`` and ``/memory``.

Every function takes the catalog (or the context manager) plus plain
arguments and returns the text to show; they never print. The user typing
them *is* the human confirmation, so no write policy applies here.
:data:`SLASH_MEMORY` maps ``/memory`` sub-commands to handlers taking the
argument words; the chat view wires ``/memory …`` and ``/compact`` to
:func:`run_memory_command` and :func:`compact_command`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reasonix.agent.context import ContextManager
from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.facts import FactError, FactStore
from reasonix.agent.memory.recall import recall_suffix
from reasonix.agent.memory.tools import describe_fact
from reasonix.cancel import Cancel

__all__ = [
    "SLASH_MEMORY",
    "archived",
    "compact_command",
    "forget",
    "instructions",
    "list_facts",
    "recall_preview",
    "recover",
    "restore",
    "revisions",
    "run_memory_command",
    "search",
    "show",
]


def list_facts(memory: Memory, scope: str = "all") -> str:
    """Every active fact of ``scope``."""
    facts = memory.facts(scope)
    lines = [describe_fact(f) for f in facts] or ["(no facts)"]
    for store in memory.stores(scope):
        lines += [f"(skipped damaged fact file {p}: {why})" for p, why in store.damaged.items()]
    return "\n".join(lines)


def search(memory: Memory, query: str, scope: str = "all") -> str:
    """Facts ranked for ``query``."""
    hits = memory.search(query, scope=scope)
    return "\n".join(f"{h.score:6.2f}  {describe_fact(h.fact)}" for h in hits) or "(no facts)"


def show(memory: Memory, fact_id: str) -> str:
    """One fact in full."""
    return describe_fact(memory.find(fact_id)[1], full=True)


def _store_with(memory: Memory, fact_id: str) -> FactStore:
    for s in memory.stores():
        try:
            s.revisions(fact_id)
        except FactError:
            continue
        return s
    raise FactError(f"no fact {fact_id!r}")


def revisions(memory: Memory, fact_id: str) -> str:
    """Every revision of a fact, oldest first (works for archived facts too)."""
    revs = _store_with(memory, fact_id).revisions(fact_id)
    return "\n".join(describe_fact(f) for f in revs)


def restore(memory: Memory, fact_id: str, revision: int) -> str:
    """Make an old revision current (as a new revision)."""
    store, _ = memory.find(fact_id)
    return "restored " + describe_fact(store.restore(fact_id, revision))


def archived(memory: Memory) -> str:
    """Forgotten facts with the archive file name to pass to ``recover``."""
    rows = [
        f"{path.name}  [{store.scope}] {describe_fact(fact)}"
        for store in memory.stores()
        for path, fact in store.archived()
    ]
    return "\n".join(rows) if rows else "(no archived facts)"


def recover(memory: Memory, path: str) -> str:
    """Bring an archived fact back; ``path`` is a name from :func:`archived` or a path."""
    name = Path(path).name
    for store in memory.stores():
        if (store.root / ".archive" / name).exists() or Path(path).is_absolute():
            try:
                return "recovered " + describe_fact(store.recover(path))
            except FactError:
                if not Path(path).is_absolute():
                    raise
    raise FactError(f"{path} is not in any memory archive")


def forget(memory: Memory, fact_id: str) -> str:
    """Archive a fact."""
    store, _ = memory.find(fact_id)
    return f"forgot {fact_id}; archived as {store.forget(fact_id).name}"


def instructions(memory: Memory) -> str:
    """How memory works here, and where it lives."""
    project = memory.project_store.root if memory.project_store else "(none)"
    return (
        "Memory keeps short durable facts between sessions.\n"
        f"  project facts: {project}\n"
        f"  global facts:  {memory.global_store.root}\n"
        "The model saves them with `remember` (project/reference facts without asking; "
        "everything else asks you) and removes them with `forget` (always asks). Before each "
        "of your messages up to 4 matching facts (2400 characters) are attached to it as "
        "low-authority notes; generic messages such as 'continue' recall nothing.\n"
        "Commands: /memory [list|search Q|show ID|revisions ID|restore ID REV|archived|"
        "recover NAME|forget ID|recall TEXT|instructions]"
    )


def recall_preview(memory: Memory, text: str) -> str:
    """What auto-recall would attach to a message ``text``."""
    return recall_suffix(memory, text).strip() or "(nothing would be recalled)"


def _need(words: list[str], n: int, usage: str) -> None:
    if len(words) < n:
        raise FactError(f"usage: /memory {usage}")


def _restore(m: Memory, w: list[str]) -> str:
    _need(w, 2, "restore ID REV")
    if not w[1].isdigit():
        raise FactError("REV must be a revision number")
    return restore(m, w[0], int(w[1]))


def _one(usage: str, fn: Callable[[Memory, str], str]) -> Callable[[Memory, list[str]], str]:
    def handler(m: Memory, w: list[str]) -> str:
        _need(w, 1, usage)
        return fn(m, w[0])

    return handler


SLASH_MEMORY: dict[str, Callable[[Memory, list[str]], str]] = {
    "list": lambda m, w: list_facts(m, w[0] if w else "all"),
    "search": lambda m, w: search(m, " ".join(w)) if w else "usage: /memory search QUERY",
    "show": _one("show ID", show),
    "revisions": _one("revisions ID", revisions),
    "restore": _restore,
    "archived": lambda m, w: archived(m),
    "recover": _one("recover NAME", recover),
    "forget": _one("forget ID", forget),
    "recall": lambda m, w: recall_preview(m, " ".join(w)),
    "instructions": lambda m, w: instructions(m),
}


def run_memory_command(memory: Memory, argument_text: str) -> str:
    """Run ``/memory ARGS``; no arguments lists the facts. Errors come back as text."""
    words = argument_text.split()
    name, rest = (words[0], words[1:]) if words else ("list", [])
    handler = SLASH_MEMORY.get(name)
    if handler is None:
        return f"unknown /memory command {name!r}; try /memory instructions"
    try:
        return handler(memory, rest)
    except FactError as err:
        return str(err)


def compact_command(ctx: ContextManager, cancel: Cancel, focus: str = "") -> str:
    """``/compact [FOCUS]``: prune and summarise now, even below the trigger or when blocked."""
    r = ctx.compact(cancel, focus=focus)
    if r.status != "ok":
        pruned = f"; {r.pruned} tool results pruned" if r.pruned else ""
        return f"no summary ({r.status}): {r.detail}{pruned}"
    if not r.pruned and not r.summaries:
        return "nothing to compact"
    return (
        f"compacted: {r.tokens_before} → {r.tokens_after} tokens "
        f"({r.pruned} tool results pruned, {r.summaries} summary; generation {r.generation})"
    )
