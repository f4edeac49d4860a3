"""MCP tools on demand (issue 37): the cached catalogue, the defer decision, the search.

* **Catalogue cache** — every successful ``tools/list`` of a server is written to
  ``<state>/mcp/catalog/<key>.json``, the key a digest of the server's declaration
  (name, transport, command, args, env, url, headers, unexpanded). A later session
  knows the server's tools without starting it; the first-ever use of a
  declaration has to start the server to learn them. The file also records
  whether the server offers prompts or resources, which a session may need at once.
* **Decision** — :func:`should_defer`: ``defer_tools = "auto"`` defers when the
  schemas would take more than 10 % of the context window or exceed 40 tools.
* **Search** — :class:`ToolSearch` ranks every known tool (running or not) by its
  name, description and parameter names with an injected ranker (boot passes the
  agent's BM25; the plugin layer may not import it); a plain term-overlap score
  stands in when none is given.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.model import McpServerConfig

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DEFER_RATIO",
    "DEFER_TOOLS",
    "Catalogue",
    "Ranker",
    "ToolSearch",
    "catalogue_key",
    "load_catalogue",
    "save_catalogue",
    "schema_text",
    "should_defer",
]

DEFER_RATIO = 0.10  # of the context window
DEFER_TOOLS = 40
FORMAT = 1  # bump when the file layout changes; an older file is ignored

# documents -> search(query, k) giving the indexes of the best documents, best first
Ranker = Callable[[Sequence[str]], Callable[[str, int], list[int]]]


@dataclass(frozen=True)
class Catalogue:
    """What a server offered when it last started."""

    tools: list[dict[str, Any]]
    prompts: bool = False
    resources: bool = False


def catalogue_key(server: McpServerConfig) -> str:
    """A digest of what decides the server's tools (its unexpanded declaration)."""
    ident = [server.name, server.type, server.command, server.args, sorted(server.env.items()),
             server.url, sorted(server.headers.items())]  # fmt: skip
    raw = json.dumps(ident, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def _path(folder: Path, server: McpServerConfig) -> Path:
    return folder / f"{catalogue_key(server)}.json"


def load_catalogue(folder: Path, server: McpServerConfig) -> Catalogue | None:
    """The cached catalogue of ``server``, or None (never cached, unreadable, other format)."""
    try:
        data = json.loads(_path(folder, server).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    tools = data.get("tools")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return None
    return Catalogue(tools, bool(data.get("prompts")), bool(data.get("resources")))


def save_catalogue(folder: Path, server: McpServerConfig, catalogue: Catalogue) -> None:
    """Write the catalogue atomically; a failure only costs a start next session."""
    data = {
        "format": FORMAT,
        "server": server.name,
        "tools": catalogue.tools,
        "prompts": catalogue.prompts,
        "resources": catalogue.resources,
    }
    target = _path(folder, server)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
        os.replace(tmp, target)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def schema_text(spec: dict[str, Any]) -> str:
    """The bytes a tool would add to a request (name, description, input schema)."""
    entry = {
        "name": spec.get("name"),
        "description": spec.get("description") or "",
        "parameters": spec.get("inputSchema") or {},
    }
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def should_defer(
    mode: str,
    specs: Sequence[dict[str, Any]],
    window_tokens: int,
    estimate: Callable[[str], int] | None = None,
) -> bool:
    """Whether MCP tool schemas go behind ``use_capability``'s search.

    ``auto``: more than :data:`DEFER_TOOLS` tools, or schemas estimated above
    :data:`DEFER_RATIO` of ``window_tokens`` (0 = unknown window: the count alone).
    """
    if mode in ("always", "never"):
        return mode == "always"
    if len(specs) > DEFER_TOOLS:
        return True
    if window_tokens <= 0:
        return False
    count = estimate or _bytes_estimate
    tokens = sum(count(schema_text(s)) for s in specs)
    return tokens > DEFER_RATIO * window_tokens


def _bytes_estimate(text: str) -> int:
    # JSON schemas run at about 4 bytes a token; boot passes the real estimator.
    return len(text.encode("utf-8")) // 4


def _terms(text: str) -> list[str]:
    """Lower-cased alphanumeric words; ``_`` and punctuation split (fallback ranker only)."""
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()


def overlap_rank(docs: Sequence[str]) -> Callable[[str, int], list[int]]:
    """A term-overlap ranking for when no BM25 ranker was injected."""
    terms = [_terms(doc) for doc in docs]

    def search(query: str, k: int) -> list[int]:
        wanted = set(_terms(query))
        scored = []
        for i, words in enumerate(terms):
            score = sum(1 for t in words if t in wanted)
            if score:
                scored.append((-score, i))
        return [i for _, i in sorted(scored)[:k]]

    return search


def search_document(server: str, spec: dict[str, Any]) -> str:
    """What a search matches: server, tool name, description, parameter names."""
    schema = spec.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    params = " ".join(str(p) for p in props) if isinstance(props, dict) else ""
    name = str(spec.get("name") or "")
    words = name.replace("-", " ").replace(".", " ")
    desc = str(spec.get("description") or spec.get("title") or "")
    return f"{server} {name} {words} {desc} {params}"


class ToolSearch:
    """Ranks ``(server, spec)`` pairs; the index is rebuilt only when a catalogue changes."""

    def __init__(self, ranker: Ranker | None = None) -> None:
        self._rank = ranker or overlap_rank
        self._lock = threading.Lock()
        self._lists: list[list[dict[str, Any]]] = []
        self._pairs: list[tuple[str, dict[str, Any]]] = []
        self._find: Callable[[str, int], list[int]] | None = None

    def search(
        self, catalogues: Sequence[tuple[str, list[dict[str, Any]]]], query: str, k: int
    ) -> list[tuple[str, dict[str, Any]]]:
        """The ``k`` best ``(server, spec)`` for ``query``, best first."""
        # A runtime replaces its tools list on (re)start or refresh, so the
        # identities of the lists say whether the documents are still current.
        lists = [tools for _, tools in catalogues]
        with self._lock:
            same = len(lists) == len(self._lists) and all(
                a is b for a, b in zip(lists, self._lists, strict=True)
            )
            if not same:
                self._pairs = [(server, spec) for server, tools in catalogues for spec in tools]
                docs = [search_document(server, spec) for server, spec in self._pairs]
                self._find = self._rank(docs) if docs else None
                self._lists = lists
            pairs, find = self._pairs, self._find
        if find is None or not query.strip():
            return []
        return [pairs[i] for i in find(query, k)]
