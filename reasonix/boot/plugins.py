"""Start the configured MCP servers for a runtime and add their tools."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.model import Config
from reasonix.plugin.mcp.tools import LocalCapability, UseCapabilityTool
from reasonix.tool import Registry

if TYPE_CHECKING:
    from typing import Any

__all__ = ["start_plugins"]


def start_plugins(
    cfg: Config,
    registry: Registry,
    workspace: Path,
    notices: list[str],
    debug_log: Path | None = None,
    local: Sequence[LocalCapability] = (),
    window_tokens: int = 0,
) -> Any:
    """Start the configured MCP servers and add their tools; returns the manager or None.

    Waits at most 3 s for servers (D21); slower ones stay reachable through the
    ``use_capability`` proxy, so the tool list never changes mid-session.
    ``use_capability`` is added even without servers when ``local`` capabilities
    (``session:tool_result``, CTX-5) need it. ``[mcp] defer_tools`` and
    ``window_tokens`` (the model's context window, 0 = unknown) decide whether
    MCP tools are offered on demand through its ``search`` action (issue 37).
    """
    if not any(s.enabled for s in cfg.mcp_servers):
        if local:
            registry.add(UseCapabilityTool(dict, local=local))
        return None
    from reasonix.agent.tokens import estimate_text
    from reasonix.config.expand import chain_lookup, environ_lookup
    from reasonix.plugin.mcp import McpManager
    from reasonix.plugin.mcp.oauth import auth_for, prune_store

    with contextlib.suppress(Exception):  # stale OAuth state is only tidied, never fatal
        prune_store({s.name: s.url for s in cfg.mcp_servers if s.url})
    lookup = chain_lookup(cfg.project_env, environ_lookup)
    mgr = McpManager(
        cfg.mcp_servers,
        workspace=workspace,
        env_lookup=lookup,
        startup_timeout=cfg.tools.mcp_startup_timeout_seconds,
        call_timeout=cfg.tools.mcp_call_timeout_seconds,
        auth_for=lambda server: auth_for(server, lookup=lookup),
        debug_log=debug_log,
        local=local,
        defer_tools=cfg.mcp.defer_tools,
        window_tokens=window_tokens,
        estimate=estimate_text,
        ranker=bm25_ranker,
    )
    try:
        mgr.start()
        mgr.wait_ready()
        for tool in mgr.tools():
            registry.add(tool)
    except BaseException:
        mgr.close()
        raise
    notices.extend(mgr.drain_notices())
    return mgr


def bm25_ranker(docs: Sequence[str]) -> Callable[[str, int], list[int]]:
    """``use_capability`` search over MCP tools with the memory layer's BM25 (issue 37)."""
    from reasonix.agent.memory.bm25 import BM25Index

    index = BM25Index()
    for i, doc in enumerate(docs):
        index.add(i, doc)

    def search(query: str, k: int) -> list[int]:
        return [int(hit.key) for hit in index.search(query, k)]  # type: ignore[call-overload]

    return search
