"""McpManager: every configured MCP server of one session, for the agent layer.

Usage (``reasonix run`` / the TUI wire it like this)::

    mgr = McpManager(cfg.mcp_servers, workspace=root,
                     env_lookup=chain_lookup(cfg.project_env, environ_lookup),
                     startup_timeout=cfg.tools.mcp_startup_timeout_seconds,
                     call_timeout=cfg.tools.mcp_call_timeout_seconds,
                     debug_log=args.mcp_debug)      # Path or None (--mcp-debug FILE)
    mgr.start()                 # background threads, returns at once
    mgr.wait_ready(3.0)         # D21: at most 3 s before the first model request
    for tool in mgr.tools():    # direct tools of ready servers + use_capability;
        registry.add(tool)      # frozen at the first call: the schema never changes
    for text in mgr.drain_notices(): ui.notice(text)   # ERR-6 / MCP-27
    ...
    mgr.capability_tool(allow=...)                      # a sub-agent's own frontend
    McpManager(..., local=[LocalCapability(...)])       # in-process targets (session:tool_result)
    mgr.status(counts=True)                             # /mcp: tools/prompts/resources
    mgr.reconnect(server)                               # start a failed server again
    mgr.disable(server); mgr.enable(server)             # /mcp disable | enable NAME
    mgr.prompts(); mgr.get_prompt(server, name, args)   # /mcp__server__prompt
    mgr.resources(); mgr.read_resource(server, uri)     # @server:uri
    mgr.close()

Tools on demand (issue 37): with ``defer_tools="auto"|"always"`` a server
whose catalogue is cached from an earlier session stays ``dormant`` (no
process) and :meth:`tools` offers, when the decision is to defer, only
``use_capability`` (whose ``search`` action finds tools) plus the direct tools
of ``always_load`` servers. A server with no cached catalogue is started to
learn it; one that offers prompts or resources starts at once, because the
session's slash commands and ``@`` references need them. The decision is taken
once, at the first :meth:`wait_ready` or :meth:`tools`, and never revisited.

A server that fails to start is skipped with a notice; it never stops the
others or the session. ``${VAR}`` expansion (D22) happens per server at start,
so an unset variable fails only the server that uses it. The variables
``REASONIX_WORKSPACE_ROOT`` and ``CLAUDE_PROJECT_DIR`` expand to the
workspace and outrank the environment (MCP-10).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.config.expand import Lookup, chain_lookup, environ_lookup
from reasonix.config.model import McpServerConfig
from reasonix.config.paths import state_dir
from reasonix.errors import PluginError
from reasonix.lazy import dataclass, field
from reasonix.plugin.mcp.catalog import Ranker, ToolSearch, load_catalogue, should_defer
from reasonix.plugin.mcp.connect import ConnectOptions
from reasonix.plugin.mcp.debug import DebugLog
from reasonix.plugin.mcp.httpwire import AuthHook
from reasonix.plugin.mcp.render import render_prompt, render_resource, tool_id
from reasonix.plugin.mcp.runtime import ServerRuntime, ServerStatus
from reasonix.plugin.mcp.tools import LocalCapability, McpTool, UseCapabilityTool
from reasonix.tool import Tool

if TYPE_CHECKING:
    from typing import Any

    from reasonix.plugin.mcp.tools import Allow

__all__ = ["McpManager", "PromptInfo", "ResourceInfo"]

START_WAIT_SECONDS = 3.0  # D21


@dataclass
class PromptInfo:
    """An MCP prompt, offered as the slash command ``/<command>``."""

    server: str
    name: str
    description: str = ""
    arguments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def command(self) -> str:
        """``mcp__<server>__<prompt>`` (CMD-6)."""
        return tool_id(self.server, self.name)


@dataclass
class ResourceInfo:
    """An MCP resource, referenced in chat as ``@<server>:<uri>``."""

    server: str
    uri: str
    name: str = ""
    mime_type: str = ""
    description: str = ""


class McpManager:
    """Owns one :class:`ServerRuntime` per enabled server."""

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        *,
        workspace: Path | None = None,
        env_lookup: Lookup | None = None,
        startup_timeout: float = 30.0,
        call_timeout: float = 300.0,
        log_dir: Path | None = None,
        debug_log: Path | None = None,
        auth_for: Callable[[McpServerConfig], AuthHook | None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        era: str = "auto",
        local: Sequence[LocalCapability] = (),
        defer_tools: str = "never",
        window_tokens: int = 0,
        estimate: Callable[[str], int] | None = None,
        ranker: Ranker | None = None,
        catalog_dir: Path | None = None,
    ) -> None:
        self.defer_tools = defer_tools  # "auto" | "always" | "never" (issue 37)
        self.window_tokens = window_tokens
        self._estimate = estimate
        self._search = ToolSearch(ranker)
        # None until decided; then fixed for the session (the tool list depends on it)
        self._defer: bool | None = None
        self.catalog_dir = (
            catalog_dir if catalog_dir is not None else state_dir() / "mcp" / "catalog"
        )
        self.workspace = workspace.resolve() if workspace is not None else None
        self.local = list(local)  # use_capability's in-process targets (CTX-5)
        self._notices: list[str] = []
        self._notice_lock = threading.Lock()
        self._on_notice = on_notice
        self._debug = DebugLog(debug_log) if debug_log is not None else None
        ws_vars: dict[str, str] = {}
        if self.workspace is not None:
            ws_vars = {"REASONIX_WORKSPACE_ROOT": str(self.workspace)}
            ws_vars["CLAUDE_PROJECT_DIR"] = str(self.workspace)
        lookup = chain_lookup(ws_vars, env_lookup or environ_lookup)
        logs = log_dir if log_dir is not None else state_dir() / "logs" / "mcp"
        self.runtimes: dict[str, ServerRuntime] = {}
        for server in servers:
            if not server.enabled:
                continue
            options = ConnectOptions(
                workspace=self.workspace,
                log_dir=logs,
                debug=self._debug,
                auth=auth_for(server) if auth_for is not None else None,
                era=era,
            )
            self.runtimes[server.name] = ServerRuntime(
                server,
                lookup=lookup,
                options=options,
                startup_timeout=startup_timeout,
                call_timeout=call_timeout,
                notice=self.notice,
                catalog_dir=self.catalog_dir,
            )
        self._frozen: list[Tool] | None = None

    # -- notices -------------------------------------------------------------
    def notice(self, text: str) -> None:
        """Record a notice for the UI (and pass it on to ``on_notice``)."""
        with self._notice_lock:
            self._notices.append(text)
        if self._on_notice is not None:
            self._on_notice(text)

    def drain_notices(self) -> list[str]:
        """Notices since the last call."""
        with self._notice_lock:
            out, self._notices = self._notices, []
        return out

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        """Start the servers in the background; with deferral possible, only those needed.

        Needed: ``always_load`` servers, servers with no cached catalogue (the
        only way to learn their tools) and servers offering prompts or resources.
        """
        if self.defer_tools == "never":
            for rt in self.runtimes.values():
                rt.start()
            return
        unknown = False
        for rt in self.runtimes.values():
            cat = load_catalogue(self.catalog_dir, rt.config)
            if cat is None or rt.config.always_load or cat.prompts or cat.resources:
                unknown = unknown or cat is None
                rt.start()
            else:
                rt.make_dormant(cat)
        if not unknown:  # every catalogue known: decide now, start the rest if not deferring
            self._decide()

    def wait_ready(self, timeout: float = START_WAIT_SECONDS) -> list[str]:
        """Wait up to ``timeout`` for starts to finish; the names of ready servers.

        Takes the defer decision when :meth:`start` could not; when it is not to
        defer, the dormant servers start and are waited for in the time left.
        """
        end = time.monotonic() + timeout
        for rt in self.runtimes.values():
            rt.wait(max(0.0, end - time.monotonic()))
        if self._defer is None and self._decide():
            for rt in self.runtimes.values():
                rt.wait(max(0.0, end - time.monotonic()))
        return [name for name, rt in self.runtimes.items() if rt.state == "ready"]

    @property
    def deferred(self) -> bool:
        """Whether MCP tools are offered through ``use_capability``'s search (decides once)."""
        if self._defer is None:
            self._decide()
        return bool(self._defer)

    @property
    def search_index(self) -> ToolSearch | None:
        """The shared tool search when tools are deferred (for other frontends), else None."""
        return self._search if self.deferred else None

    def _decide(self) -> bool:
        """Fix the defer decision; True when servers were woken (not deferring)."""
        specs = [spec for rt in self.runtimes.values() for spec in rt.tools]
        # A server still starting has tools of unknown size: on demand, so that its tools
        # (when it connects) are found by a search instead of missing from a fixed list.
        late = self.defer_tools == "auto" and any(
            rt.state == "starting" for rt in self.runtimes.values()
        )
        self._defer = late or should_defer(
            self.defer_tools, specs, self.window_tokens, self._estimate
        )
        if self._defer:
            if self.defer_tools == "auto":
                self.notice(
                    f"MCP: {len(specs)} tools are offered on demand through use_capability "
                    '(search); set [mcp] defer_tools = "never" to list them all'
                )
            return False
        woken = [rt for rt in self.runtimes.values() if rt.state == "dormant"]
        for rt in woken:
            rt.wake()
        return bool(woken)

    def close(self) -> None:
        """Close every connection (in parallel: each may wait out a grace period)."""
        threads = [threading.Thread(target=rt.close, daemon=True) for rt in self.runtimes.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=15.0)
        if self._debug is not None:
            self._debug.close()

    def __enter__(self) -> McpManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tools -----------------------------------------------------------------
    def tools(self) -> list[Tool]:
        """Direct tools of the servers ready now, plus ``use_capability``.

        The list is computed once and then returned unchanged, so the schema
        the provider sees stays stable for the whole session (D21); servers
        that become ready later are reached through ``use_capability``. When
        tools are deferred only ``always_load`` servers give direct tools.
        """
        if self._frozen is None:
            deferred = self.deferred
            out: list[Tool] = []
            for rt in self.runtimes.values():
                if rt.state == "ready" and (not deferred or rt.config.always_load):
                    out.extend(McpTool(rt, spec) for spec in rt.tools)
            out.append(self.capability_tool())
            self._frozen = out
        return list(self._frozen)

    def capability_tool(
        self,
        allow: Allow | None = None,
        *,
        strict: bool = False,
        local: Sequence[LocalCapability] | None = None,
    ) -> Tool:
        """A ``use_capability`` frontend over the shared connections (SUB-26).

        ``allow(tool_id, spec)`` returns None to permit a target or the reason
        to refuse it; it is asked at dispatch time, every time. ``strict`` judges
        a target before any server process starts or restarts (SUB-15).
        ``local`` replaces the in-process targets (a sub-agent pages its own session).
        """
        own = self.local if local is None else local
        return UseCapabilityTool(  # search: fixed once decided (a stable schema)
            lambda: self.runtimes, allow=allow, local=own, strict=strict, search=self.search_index
        )

    def status(self, *, counts: bool = False) -> list[ServerStatus]:
        """A snapshot of every server; ``counts`` also asks for prompt/resource counts (/mcp)."""
        out = [rt.status() for rt in self.runtimes.values()]
        if counts:
            by_name = {s.name: s for s in out}
            for server, _ in self._collect("prompts", "prompts/list", "prompts", None):
                by_name[server].prompts += 1
            for server, _ in self._collect("resources", "resources/list", "resources", None):
                by_name[server].resources += 1
        return out

    def reconnect(self, server: str, timeout: float = START_WAIT_SECONDS) -> str:
        """Start a server that failed again (``/mcp auth`` just got it tokens); its state.

        A ready or still-starting server is left alone. Tools of a server that
        comes up now are reached through ``use_capability`` (the schema is frozen).
        """
        rt = self._runtime(server)
        if rt.state == "failed" and rt.client is None:
            rt.start()
            rt.wait(timeout)
        return rt.state

    # -- /mcp disable | enable -----------------------------------------------------
    def disable(self, server: str) -> bool:
        """Stop ``server`` and refuse its tools for the rest of this process; False when
        it was disabled already. The tool list is not touched (it is frozen): its direct
        tools answer with an error and ``use_capability`` no longer finds them.
        """
        rt = self._runtime(server)
        if rt.state == "disabled":
            return False
        rt.disable()
        return True

    def enable(self, server: str) -> bool:
        """Undo :meth:`disable`; False when ``server`` was not disabled.

        With tools on demand the server stays dormant until a search or call
        needs it (its catalogue is known); otherwise it starts in the background.
        """
        rt = self._runtime(server)
        if rt.state != "disabled":
            return False
        rt.enable(dormant=self.deferred and not rt.config.always_load)
        return True

    def disabled(self) -> list[str]:
        """The servers disabled now, in configuration order."""
        return [name for name, rt in self.runtimes.items() if rt.state == "disabled"]

    def _runtime(self, server: str) -> ServerRuntime:
        rt = self.runtimes.get(server)
        if rt is None:
            raise PluginError(f"no MCP server named {server!r}")
        return rt

    # -- prompts and resources ---------------------------------------------------
    def _collect(
        self, capability: str, method: str, key: str, cancel: Cancel | None
    ) -> list[tuple[str, dict[str, Any]]]:
        """(server, item) for every item a ready server lists; failures become notices."""
        out: list[tuple[str, dict[str, Any]]] = []
        for rt in self.runtimes.values():
            client = rt.client
            if rt.state != "ready" or client is None or not client.supports(capability):
                continue
            try:
                items = client.list_all(method, key, cancel=cancel, timeout=rt.call_timeout)
            except PluginError as exc:
                self.notice(f"MCP server {rt.name}: {method} failed: {exc}")
                continue
            out.extend((rt.name, item) for item in items)
        return out

    def prompts(self, cancel: Cancel | None = None) -> list[PromptInfo]:
        """Prompts of every ready server that offers them."""
        out: list[PromptInfo] = []
        for server, p in self._collect("prompts", "prompts/list", "prompts", cancel):
            args = p.get("arguments")
            out.append(
                PromptInfo(
                    server,
                    str(p.get("name", "")),
                    str(p.get("description") or ""),
                    args if isinstance(args, list) else [],
                )
            )
        return out

    def get_prompt(
        self,
        server: str,
        name: str,
        arguments: dict[str, str] | None = None,
        cancel: Cancel | None = None,
    ) -> str:
        """The text of prompt ``name`` (``prompts/get``); raises PluginError."""
        result = self._runtime(server).request(
            "prompts/get", {"name": name, "arguments": dict(arguments or {})}, cancel or Cancel()
        )
        return render_prompt(result)

    def resources(self, cancel: Cancel | None = None) -> list[ResourceInfo]:
        """Resources of every ready server that offers them."""
        return [
            ResourceInfo(
                server,
                str(r.get("uri", "")),
                str(r.get("name") or ""),
                str(r.get("mimeType") or ""),
                str(r.get("description") or ""),
            )
            for server, r in self._collect("resources", "resources/list", "resources", cancel)
        ]

    def read_resource(self, server: str, uri: str, cancel: Cancel | None = None) -> str:
        """The text of resource ``uri`` on ``server`` (for ``@server:uri``); raises PluginError."""
        result = self._runtime(server).request("resources/read", {"uri": uri}, cancel or Cancel())
        return render_resource(result)
