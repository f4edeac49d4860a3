"""One configured server at run time: start in the background, call, restart, close.

States: ``starting`` → ``ready`` | ``failed``; ``closed`` at the end;
``disabled`` between ``/mcp disable`` and ``/mcp enable`` (no process, calls
refused, the known tools kept so the refusal can name them). A
server whose tools are known from the catalogue cache may instead begin
``dormant`` (no process, issue 37) and start on its first call. The
startup (launch, discovery/initialize, ``tools/list``) runs on its own thread
under the startup timeout; a call waits for it only as long as that startup
may still take, then gets its own call timeout, counted from readiness
(MCP-19). A server that dies is restarted once, lazily, by the next call.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.config.expand import Lookup
from reasonix.config.mcp import expand_server
from reasonix.config.model import McpServerConfig
from reasonix.errors import Cancelled, ConfigError, PluginError
from reasonix.lazy import dataclass, field
from reasonix.plugin.mcp.catalog import Catalogue, save_catalogue
from reasonix.plugin.mcp.client import McpClient
from reasonix.plugin.mcp.connect import ConnectOptions, open_client
from reasonix.plugin.mcp.errors import ConnectionLost, McpTimeout, RpcError
from reasonix.plugin.mcp.gate import Gate, default_concurrency
from reasonix.plugin.mcp.render import render_tool_result
from reasonix.tool import ToolResult

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ServerRuntime", "ServerStatus"]

ProgressSink = Callable[[float, "float | None", "str | None"], None]


@dataclass
class ServerStatus:
    """A snapshot for ``/mcp``, ``reasonix mcp list --check`` and use_capability."""

    name: str
    type: str
    state: str
    error: str = ""
    protocol_version: str = ""
    tools: list[str] = field(default_factory=list)
    prompts: int = 0
    resources: int = 0
    concurrency: str = "parallel"


class ServerRuntime:
    """Lifecycle and calls of one server."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        lookup: Lookup,
        options: ConnectOptions,
        startup_timeout: float,
        call_timeout: float,
        notice: Callable[[str], None],
        catalog_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.catalog_dir = catalog_dir  # where tools/list is cached (None: not cached)
        self.name = config.name
        self.lookup = lookup
        self.options = options
        self.startup_timeout = config.startup_timeout_seconds or startup_timeout
        # MCP-20: per-server and per-tool caps, read defensively because the
        # declaration may not carry these optional keys; 0 means "the default".
        self.call_timeout = float(getattr(config, "call_timeout_seconds", 0) or call_timeout)
        tool_caps = getattr(config, "tool_timeout_seconds", None)
        self.tool_timeouts: dict[str, float] = (
            dict(tool_caps) if isinstance(tool_caps, dict) else {}
        )
        self.notice = notice
        self.gate = Gate(default_concurrency(config.name, config.concurrency))
        self.state = "starting"
        self.error = ""
        self.client: McpClient | None = None
        self.tools: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._deadline = 0.0
        self._thread: threading.Thread | None = None
        self._restarted = False
        self._closed = False
        self._start_cancel: Cancel | None = None  # lets close() abort a start in progress
        self._wake_lock = threading.Lock()  # one start for concurrent first calls

    # -- dormant (issue 37) ------------------------------------------------
    def make_dormant(self, catalogue: Catalogue) -> None:
        """Know the tools from the cache and start nothing until a call needs the server."""
        self.tools = list(catalogue.tools)
        self.state = "dormant"

    def wake(self) -> None:
        """Start a dormant server in the background (a no-op in any other state)."""
        with self._wake_lock:
            if self.state == "dormant" and not self._closed:
                self.start()

    # -- /mcp disable | enable ----------------------------------------------
    def disable(self) -> None:
        """Stop the process (or a start in progress) and refuse calls until :meth:`enable`."""
        self.close()
        with self._lock:
            self.state, self.error = "disabled", ""

    def enable(self, *, dormant: bool) -> None:
        """Undo :meth:`disable`: start again, or (``dormant``, tools known) wait for a call."""
        with self._lock:
            if self.state != "disabled":
                return
            self._closed, self._restarted, self.client = False, False, None
        if dormant and self.tools:
            self.state = "dormant"
        else:
            self.start()

    def disabled_message(self) -> str:
        """What a call of a disabled server's tool answers."""
        return f"MCP server {self.name} is disabled (/mcp enable {self.name})"

    # -- start -------------------------------------------------------------
    def start(self) -> None:
        """Begin the background start (returns at once)."""
        self._deadline = time.monotonic() + self.startup_timeout
        self._done.clear()
        self.state = "starting"
        self._thread = threading.Thread(
            target=self._run, name=f"mcp-start {self.name}", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        cancel = self._start_cancel = Cancel(deadline=self._deadline)
        try:
            server = expand_server(self.config, self.lookup)
            client = open_client(server, self._options(), cancel)
        except (PluginError, ConfigError, Cancelled) as exc:
            self._fail(_startup_message(exc, self.startup_timeout))
            return
        try:
            tools = client.list_all(
                "tools/list", "tools", cancel=cancel, timeout=cancel.remaining()
            )
        except (PluginError, Cancelled) as exc:
            client.close()
            self._fail(f"tools/list failed: {_startup_message(exc, self.startup_timeout)}")
            return
        with self._lock:
            if self._closed:
                client.close()
                return
            self.client, self.tools, self.state, self.error = client, tools, "ready", ""
        self._done.set()
        self._remember(client, tools)

    def _remember(self, client: McpClient, tools: list[dict[str, Any]]) -> None:
        """Cache what the server offers, so a later session need not start it to know."""
        if self.catalog_dir is None:
            return
        caps = client.capabilities
        catalogue = Catalogue(tools, "prompts" in caps, "resources" in caps)
        save_catalogue(self.catalog_dir, self.config, catalogue)

    def _options(self) -> ConnectOptions:
        opts = self.options

        def notice(text: str) -> None:
            self.notice(f"MCP server {self.name}: {text}")

        def list_changed(kind: str) -> None:
            if kind == "tools":
                threading.Thread(target=self._refresh_tools, daemon=True).start()

        def log(params: dict[str, Any]) -> None:
            # notifications/message: kept beside the server's stderr, not shown in the UI.
            if opts.log_dir is None:
                return
            level = params.get("level", "info")
            line = f"[{level}] {params.get('logger') or ''} {json.dumps(params.get('data'))}\n"
            try:
                opts.log_dir.mkdir(parents=True, exist_ok=True)
                with open(opts.log_dir / f"{self.name}.messages.log", "a", encoding="utf-8") as fh:
                    fh.write(line)
            except OSError:
                pass

        return ConnectOptions(
            workspace=opts.workspace,
            log_dir=opts.log_dir,
            debug=opts.debug,
            auth=opts.auth,
            on_notice=notice,
            on_list_changed=list_changed,
            on_log=opts.on_log or log,
            era=opts.era,
        )

    def _refresh_tools(self) -> None:
        client = self.client
        if client is None:
            return
        try:
            self.tools = client.list_all("tools/list", "tools", timeout=self.call_timeout)
        except (PluginError, Cancelled) as exc:
            self.notice(f"MCP server {self.name}: refreshing tools failed: {exc}")
            return
        self._remember(client, self.tools)

    def _fail(self, message: str) -> None:
        with self._lock:
            closing = self._closed
            if not closing:
                self.state, self.error = "failed", message
        if not closing:  # a start aborted by close() is no news
            self.notice(f"MCP server {self.name} skipped: {message}")
        self._done.set()

    def wait(self, timeout: float | None, cancel: Cancel | None = None) -> bool:
        """Wait until the start finished (ready or failed); True when it has.

        A dormant or disabled server has no start in progress: True at once.
        """
        if self.state in ("dormant", "disabled"):
            return True
        end = None if timeout is None else time.monotonic() + timeout
        while not self._done.is_set():
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return False
            step = 0.1 if left is None else min(0.1, left)
            if cancel is not None and cancel.wait(step):
                return False
            if cancel is None:
                self._done.wait(step)
        return True

    def settle(self, cancel: Cancel) -> None:
        """Wait for a start in progress to finish (bounded by its startup deadline)."""
        if self.state == "starting":
            self.wait(max(0.0, self._deadline - time.monotonic()) + 0.5, cancel)

    # -- calls -------------------------------------------------------------
    def ensure_ready(self, cancel: Cancel) -> McpClient:
        """The live client, starting a dormant server, waiting for a start in progress
        or restarting a dead one."""
        if self.state == "disabled":
            raise PluginError(self.disabled_message())
        if self.state == "dormant":
            self.wake()
        if self.state == "starting":
            self.wait(max(0.0, self._deadline - time.monotonic()) + 0.5, cancel)
            cancel.raise_if_cancelled()
        client = self.client
        if self.state == "ready" and client is not None and not client.alive:
            self._restart(client.session.closed_reason, cancel)
            client = self.client
        if self.state != "ready" or client is None:
            # One wording for a server that never got ready, however it is reached.
            raise PluginError(self.error or _startup_message(McpTimeout(""), self.startup_timeout))
        return client

    def _restart(self, reason: str, cancel: Cancel) -> None:
        with self._lock:
            if self._restarted or self._closed:
                self.state, self.error = "failed", f"the server stopped ({reason})"
                return
            self._restarted = True
            old, self.client = self.client, None
        if old is not None:
            old.close()
        self.notice(f"MCP server {self.name} stopped ({reason}); restarting it once")
        self.start()
        self.wait(self.startup_timeout + 0.5, cancel)

    def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        cancel: Cancel,
        progress: ProgressSink | None = None,
    ) -> ToolResult:
        """Call ``tool``; every failure becomes an error result naming the server."""
        if self.state == "disabled":  # /mcp disable: refused without touching a process
            return ToolResult.error(self.disabled_message())
        try:
            client = self.ensure_ready(cancel)
            self.gate.acquire(cancel)
        except Cancelled as exc:
            return ToolResult.error(f"MCP call {self.name}/{tool} cancelled: {exc}")
        except PluginError as exc:
            return ToolResult.error(f"MCP server {self.name} is unavailable: {exc}")
        timeout = float(self.tool_timeouts.get(tool) or self.call_timeout)
        try:
            result = client.request(
                "tools/call",
                {"name": tool, "arguments": arguments},
                cancel=cancel,
                timeout=timeout,
                progress=progress,
            )
        except Cancelled as exc:
            return ToolResult.error(f"MCP call {self.name}/{tool} cancelled: {exc}")
        except McpTimeout:
            return ToolResult.error(f"MCP call {self.name}/{tool} timed out after {timeout:g}s")
        except RpcError as exc:
            return ToolResult.error(f"MCP server {self.name} rejected {tool}: {exc}")
        except ConnectionLost as exc:
            return ToolResult.error(f"MCP server {self.name} stopped during {tool}: {exc}")
        except PluginError as exc:
            return ToolResult.error(f"MCP call {self.name}/{tool} failed: {exc}")
        finally:
            self.gate.release()
        text, is_error = render_tool_result(result)
        if is_error:
            return ToolResult(content=text or f"{tool} failed", is_error=True)
        return ToolResult(content=text)

    def request(self, method: str, params: dict[str, Any], cancel: Cancel) -> dict[str, Any]:
        """A plain request (prompts, resources) under the call timeout; raises PluginError."""
        client = self.ensure_ready(cancel)
        return client.request(method, params, cancel=cancel, timeout=self.call_timeout)

    def status(self) -> ServerStatus:
        """A snapshot of this server."""
        client = self.client
        return ServerStatus(
            name=self.name,
            type=self.config.type,
            state=self.state,
            error=self.error,
            protocol_version=client.protocol_version if client else "",
            tools=[str(t.get("name")) for t in self.tools],
            concurrency="serial" if self.gate.serial else "parallel",
        )

    def close(self) -> None:
        """Close the connection (and stop a start in progress from publishing one)."""
        with self._lock:
            self._closed = True
            client, self.client = self.client, None
            self.state = "closed"
        if self._start_cancel is not None:
            self._start_cancel.cancel("the session is closing")
        if client is not None:
            client.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            # A cancelled start unwinds at once; the deadline bounds it anyway.
            self._thread.join(timeout=max(0.0, self._deadline - time.monotonic()) + 1.0)


def _startup_message(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, (McpTimeout, Cancelled)):
        return f"no answer within the startup timeout ({timeout:g}s)"
    return str(exc)
