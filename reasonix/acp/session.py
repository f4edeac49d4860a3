"""One ACP session: a runtime built by boot, one cancel token per turn, its tool ports.

Every session's runtime comes from :func:`reasonix.boot.build_runtime` with
``interactive=True`` (the editor answers approvals), the session's ``cwd`` as
the workspace, the client's ``mcpServers`` as extra MCP servers and the tool
ports the client's capabilities allow. Our transcript id is the ACP session
id, so ``session/load`` finds the same file in a later process.

At most one turn runs per session; ``session/cancel`` fires that turn's
token, and the turn answers its ``session/prompt`` with ``cancelled``.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.boot import Runtime, RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.config.model import McpServerConfig
from reasonix.lazy import dataclass, field

from .client_io import SessionLink, ports_for
from .commands import (
    CommandRegistryLike,
    advertised,
    editor_owned,
    interrupt,
    load_registry,
    render,
)
from .modes import config_options, mode_state
from .prompt import prompt_text
from .relay import TurnRelay, chunk
from .replay import replay_updates
from .rpc import INVALID_PARAMS, INVALID_REQUEST, Connection, RpcError
from .toolcalls import CallBoard

if TYPE_CHECKING:
    from typing import Any

__all__ = ["AcpSession", "Defaults", "mcp_configs"]


@dataclass
class Defaults:
    """What ``reasonix acp`` was started with, applied to every session it opens."""

    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    mcp_debug: str | None = None


def _pairs(items: Any, what: str) -> dict[str, str]:
    if not isinstance(items, list):
        raise RpcError(INVALID_PARAMS, f"invalid params: {what} must be an array")
    out: dict[str, str] = {}
    for item in items:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("value"), str)
        ):
            raise RpcError(
                INVALID_PARAMS, f"invalid params: every {what} entry needs name and value"
            )
        out[item["name"]] = item["value"]
    return out


def mcp_configs(servers: list[Any]) -> list[McpServerConfig]:
    """The client's ``mcpServers`` as our server configs (stdio, http, sse)."""
    out = []
    for raw in servers:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
            raise RpcError(INVALID_PARAMS, "invalid params: every MCP server needs a name")
        kind = raw.get("type", "stdio")
        if kind == "stdio":
            command, args = raw.get("command"), raw.get("args", [])
            if not isinstance(command, str) or not command:
                raise RpcError(
                    INVALID_PARAMS, f"invalid params: MCP server {raw['name']!r}: command"
                )
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise RpcError(INVALID_PARAMS, f"invalid params: MCP server {raw['name']!r}: args")
            env = _pairs(raw.get("env", []), "env")
            out.append(
                McpServerConfig(raw["name"], "stdio", command, list(args), env, source="acp")
            )
        elif kind in ("http", "sse"):
            url = raw.get("url")
            if not isinstance(url, str) or not url:
                raise RpcError(INVALID_PARAMS, f"invalid params: MCP server {raw['name']!r}: url")
            headers = _pairs(raw.get("headers", []), "headers")
            out.append(McpServerConfig(raw["name"], kind, url=url, headers=headers, source="acp"))
        else:
            raise RpcError(INVALID_PARAMS, f"invalid params: unknown MCP transport {kind!r}")
    return out


class AcpSession:
    """A live session: its runtime, command registry and the turn in flight."""

    def __init__(self, conn: Connection, rt: Runtime, link: SessionLink) -> None:
        self.conn, self.rt, self.link = conn, rt, link
        self.id = rt.session.id
        link.session_id = self.id
        self.commands: CommandRegistryLike | None = load_registry(
            rt, lambda text: self.send(chunk("agent_message_chunk", text + "\n"))
        )
        self._turn = threading.Lock()
        self.prompt_request: Any = None  # JSON-RPC id of the running session/prompt
        self.options: RuntimeOptions | None = None  # what built ``rt`` (a trust rebuild reuses it)
        self._trust_asked = False

    @classmethod
    def open(
        cls,
        conn: Connection,
        client_caps: dict[str, Any],
        cwd: str,
        mcp_servers: list[Any],
        defaults: Defaults,
        resume: str | None = None,
    ) -> AcpSession:
        """Build the runtime for ``cwd`` (a new session, or ``resume`` = a transcript path)."""
        servers = mcp_configs(mcp_servers)
        board = CallBoard(lambda update: None)
        link = SessionLink(conn, board)
        options = RuntimeOptions(
            workspace=cwd,
            interactive=True,
            resume=resume,
            model=defaults.model,
            permission_mode=defaults.permission_mode,
            allowed_tools=list(defaults.allowed_tools),
            mcp_debug=defaults.mcp_debug,
            mcp_servers=servers,
            ports=ports_for(link, client_caps),
        )
        rt = build_runtime(options)
        try:
            session = cls(conn, rt, link)
        except BaseException:
            rt.close()
            raise
        session.options = options
        board.set_sender(session.send)
        return session

    # -- output -------------------------------------------------------------------
    def send(self, update: dict[str, Any]) -> None:
        """One ``session/update`` notification for this session."""
        self.conn.notify("session/update", {"sessionId": self.id, "update": update})

    def setup_result(self) -> dict[str, Any]:
        """Modes and config options, as ``session/new`` and ``session/load`` return them."""
        return {"modes": mode_state(self.rt), "configOptions": config_options(self.rt)}

    def announce_commands(self) -> None:
        """``available_commands_update`` (sent after the session/new or load answer)."""
        if self.commands is not None:
            self.send(
                {"sessionUpdate": "available_commands_update",
                 "availableCommands": advertised(self.commands)}
            )  # fmt: skip
        notes = [*self.rt.notices, *(self.commands.notices if self.commands else [])]
        for note in notes:
            self.send(chunk("agent_thought_chunk", f"[{note}]\n"))

    def replay(self) -> None:
        """Stream the stored conversation to the editor (``session/load``)."""
        for update in replay_updates(self.rt.session.messages(), Path(self.rt.workspace)):
            self.send(update)

    # -- turns --------------------------------------------------------------------
    def prompt(self, blocks: Any, request_id: Any) -> dict[str, Any]:
        """Run one ``session/prompt`` to its end; ``{"stopReason": …}``."""
        if not self._turn.acquire(blocking=False):
            raise RpcError(INVALID_REQUEST, "a prompt is already running in this session")
        try:
            self.link.cancel = cancel = Cancel()
            self.prompt_request = request_id
            self._settle_trust(cancel)
            mcp = self.rt.mcp
            reader = (lambda s, u: str(mcp.read_resource(s, u, cancel))) if mcp else None
            text, notices = prompt_text(blocks, self.rt.tool_ctx, reader)
            for note in notices:
                self.send(chunk("agent_thought_chunk", f"[{note}]\n"))
            if self.commands is not None and self.commands.is_command(text.strip()):
                return {"stopReason": self._command(text.strip(), cancel)}
            return {"stopReason": self._relay().run(text, cancel)}
        finally:
            self.prompt_request = None
            self._turn.release()

    def _settle_trust(self, cancel: Cancel) -> None:
        """The workspace trust question (acp/trust.py), once, on the first prompt.

        A yes rebuilds the runtime on the same transcript with the workspace trusted,
        so its hooks, servers, providers and rules apply from this prompt on.
        """
        state = self.rt.config.trust
        if self._trust_asked or state.trusted or not state.items or self.options is None:
            return
        self._trust_asked = True
        from reasonix.lazy import replace

        from .trust import ask_trust

        workspace = Path(self.rt.workspace)
        if not ask_trust(self.conn.request, self.id, workspace, state.items, cancel):
            return
        options = replace(self.options, resume=str(self.rt.session.path), trust=True)
        self.rt.close()
        self.rt = build_runtime(options)
        self.options = options
        self.commands = load_registry(
            self.rt, lambda text: self.send(chunk("agent_message_chunk", text + "\n"))
        )

    def _relay(self) -> TurnRelay:
        return TurnRelay(self.rt, self.id, self.send, self.conn.request, self.link.board)

    def _command(self, line: str, cancel: Cancel) -> str:
        assert self.commands is not None
        if editor_owned(line):
            self.send(chunk("agent_message_chunk", "Use the editor to start or switch sessions."))
            return "end_turn"
        result = self.commands.run(line)
        if result.prompt is not None and not result.error:
            return self._relay().run(result.prompt, cancel, result.turn)
        self.send(chunk("agent_message_chunk", render(result)))
        return "end_turn"

    def cancel(self) -> None:
        """``session/cancel``: end the running turn or command (a no-op when idle)."""
        self.link.cancel.cancel("cancelled by the client")
        interrupt(self.commands)

    @property
    def busy(self) -> bool:
        """True while a turn runs."""
        return self._turn.locked()

    def set_mode(self, mode: str) -> None:
        """Change the permission posture and tell the editor in both vocabularies."""
        self.rt.set_mode(mode)
        self.send({"sessionUpdate": "current_mode_update", "currentModeId": self.rt.mode})
        self.send({"sessionUpdate": "config_option_update",
                   "configOptions": config_options(self.rt)})  # fmt: skip

    def close(self, wait: float = 10.0) -> None:
        """Cancel the turn, wait for it to end, stop MCP servers, release the transcript."""
        self.cancel()
        locked = self._turn.acquire(timeout=wait)
        try:
            with contextlib.suppress(Exception):
                self.rt.close()
        finally:
            if locked:
                self._turn.release()
