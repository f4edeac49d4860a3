"""The MCP client lifecycle on top of a :class:`~reasonix.plugin.mcp.session.Session`.

Two protocol eras, chosen by discovery as the 2026-07-28 revision describes:

* **stateless (2026-07-28)** — ``server/discover`` is sent first; when the
  server lists a version we speak, every later request carries the ``_meta``
  envelope (protocol version, client capabilities, client info) and no
  handshake happens. A result with ``resultType: "input_required"`` is
  answered (``roots/list``) and the request retried with ``inputResponses``.
* **handshake (2024-11-05 … 2025-11-25)** — when discovery fails (method not
  found, an HTTP 4xx, or silence within a short probe), ``initialize`` offers
  our newest version, the server's answer is accepted when we support it, and
  ``notifications/initialized`` follows.

Either way ``tools/list`` completes the start, and the same request methods
(tools, prompts, resources) work afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix import __version__
from reasonix.cancel import Cancel
from reasonix.errors import PluginError
from reasonix.plugin.mcp.elicit import ElicitHook, parse_request, result_json
from reasonix.plugin.mcp.errors import HttpStatusError, McpTimeout, RpcError
from reasonix.plugin.mcp.jsonrpc import (
    INVALID_PARAMS,
    UNSUPPORTED_PROTOCOL_VERSION,
    Notification,
    Request,
)
from reasonix.plugin.mcp.session import ProgressCallback, Session
from reasonix.plugin.mcp.transport import Transport

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "HANDSHAKE_VERSIONS",
    "STATELESS_VERSIONS",
    "McpClient",
    "choose_version",
    "roots_result",
]

HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
STATELESS_VERSIONS = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "reasonix", "version": __version__}
PROBE_TIMEOUT = 5.0  # a handshake-era stdio server may ignore server/discover; don't wait longer
MAX_INPUT_ROUNDS = 8  # input-required retries of one request before we call it a loop
MAX_PAGES = 100  # list pagination bound (a cursor that never ends is a server bug)


def choose_version(offered: Sequence[str]) -> str | None:
    """The newest version in ``offered`` that we speak (stateless ones first)."""
    for version in (*STATELESS_VERSIONS, *HANDSHAKE_VERSIONS):
        if version in offered:
            return version
    return None


def roots_result(roots: Sequence[Path]) -> dict[str, Any]:
    """The ``roots/list`` result for ``roots`` (D1: the workspace as file URIs)."""
    return {"roots": [{"uri": p.resolve().as_uri(), "name": p.name or str(p)} for p in roots]}


class McpClient:
    """One connected MCP server: lifecycle plus typed-ish request helpers."""

    def __init__(
        self,
        transport: Transport,
        *,
        roots: Sequence[Path] = (),
        on_notice: Callable[[str], None] | None = None,
        on_list_changed: Callable[[str], None] | None = None,
        on_log: Callable[[dict[str, Any]], None] | None = None,
        allow_stateless: bool = True,
        on_elicit: ElicitHook | None = None,
        name: str = "",
    ) -> None:
        self.transport = transport
        self.name = name
        self.on_elicit = on_elicit
        self.roots = list(roots)
        self.on_notice = on_notice
        self.on_list_changed = on_list_changed
        self.on_log = on_log
        self.allow_stateless = allow_stateless
        self.protocol_version = ""
        self.stateless = False
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions = ""
        handlers = {"roots/list": self._roots, "ping": lambda _req: {}}
        if on_elicit is not None:
            handlers["elicitation/create"] = self._elicit
        self.session = Session(
            transport,
            handlers=handlers,
            on_notification=self._on_notification,
            on_notice=on_notice,
            # A person may take minutes to answer: never on the reader thread.
            threaded=("elicitation/create",),
        )

    # -- lifecycle ---------------------------------------------------------
    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What we advertise: roots when a workspace exists (MCP-12), form elicitation
        when a frontend answers it (``on_elicit``), nothing else."""
        caps: dict[str, Any] = {}
        if self.roots:
            caps["roots"] = {"listChanged": False}
        if self.on_elicit is not None:
            caps["elicitation"] = {"form": {}}
        return caps

    def connect(self, cancel: Cancel) -> None:
        """Start the transport, pick the era, and finish the handshake.

        Raises PluginError (incl. HttpStatusError from an ``initialize`` POST,
        which the caller may answer by falling back to legacy SSE).
        """
        self.transport.start(cancel)
        self.session.start()
        if self.allow_stateless and self._discover(cancel):
            return
        timeout = cancel.remaining()  # what discovery left of the startup budget
        result = self.session.request(
            "initialize",
            {
                "protocolVersion": HANDSHAKE_VERSIONS[0],
                "capabilities": self.client_capabilities,
                "clientInfo": CLIENT_INFO,
            },
            cancel=cancel,
            timeout=timeout,
        )
        version = result.get("protocolVersion")
        if not isinstance(version, str) or version not in HANDSHAKE_VERSIONS:
            raise PluginError(f"the server answered with unsupported protocol version {version!r}")
        self.protocol_version = version
        self._absorb(result)
        self.session.notify("notifications/initialized")

    def _discover(self, cancel: Cancel) -> bool:
        """Try the stateless era; False means: use the handshake."""
        probe = PROBE_TIMEOUT
        remaining = cancel.remaining()
        if remaining is not None:
            probe = min(probe, remaining)
        version = STATELESS_VERSIONS[0]
        for _ in range(2):  # at most one re-pick after UnsupportedProtocolVersion
            try:
                result = self.session.request(
                    "server/discover",
                    {"_meta": self._envelope(version)},
                    cancel=cancel,
                    timeout=probe,
                )
            except RpcError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(exc.data, dict):
                    picked = choose_version(exc.data.get("supported") or [])
                    if picked in STATELESS_VERSIONS and picked != version:
                        version = picked
                        continue
                return False  # METHOD_NOT_FOUND and friends: a handshake-era server
            except (HttpStatusError, McpTimeout):
                return False
            offered = result.get("supportedVersions") or []
            picked = choose_version(offered if isinstance(offered, list) else [])
            if picked is None or picked not in STATELESS_VERSIONS:
                return False  # a modern server that also speaks a handshake version
            self.protocol_version, self.stateless = picked, True
            self._absorb(result)
            return True
        return False

    def _absorb(self, result: dict[str, Any]) -> None:
        caps = result.get("capabilities")
        info = result.get("serverInfo")
        if not isinstance(info, dict):
            # Some stateless servers carry their identity in the result's _meta instead.
            meta = result.get("_meta")
            info = (
                meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
            )
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.server_info = info if isinstance(info, dict) else {}
        self.instructions = str(result.get("instructions") or "")

    def close(self) -> None:
        """End the connection (the transport does the protocol-specific goodbye)."""
        self.session.close()

    @property
    def alive(self) -> bool:
        """False once the connection ended."""
        return self.session.alive

    # -- requests ----------------------------------------------------------
    def _envelope(self, version: str) -> dict[str, Any]:
        return {
            META_VERSION: version,
            META_CAPABILITIES: self.client_capabilities,
            META_CLIENT_INFO: CLIENT_INFO,
        }

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        cancel: Cancel | None = None,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """One request in the connection's era (envelope and input-required rounds)."""
        params = dict(params or {})
        if not self.stateless:
            return self.session.request(
                method, params, cancel=cancel, timeout=timeout, progress=progress
            )
        meta = dict(params.get("_meta") or {})
        meta.update(self._envelope(self.protocol_version))
        params["_meta"] = meta
        for _ in range(MAX_INPUT_ROUNDS):
            result = self.session.request(
                method, params, cancel=cancel, timeout=timeout, progress=progress
            )
            if result.get("resultType") != "input_required":
                return result
            params = dict(params)
            params["inputResponses"] = self._answer_inputs(result.get("inputRequests") or {})
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise PluginError(f"{method}: the server kept asking for input")

    def _answer_inputs(self, requests: Any) -> dict[str, Any]:
        if not isinstance(requests, dict):
            raise PluginError("malformed inputRequests from the server")
        answers: dict[str, Any] = {}
        for key, req in requests.items():
            method = req.get("method") if isinstance(req, dict) else None
            if method == "roots/list":
                answers[key] = roots_result(self.roots)
            elif method == "elicitation/create" and self.on_elicit is not None:
                answers[key] = self.elicit(req.get("params"))
            else:
                raise PluginError(
                    f"the server asked for {method or 'unknown'} input, which Reasonix does not "
                    "provide here (no sampling; elicitation only with a frontend that answers it)"
                )
        return answers

    def list_all(
        self, method: str, key: str, *, cancel: Cancel | None = None, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Every item of a paginated list method (``tools/list`` → ``tools``)."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            result = self.request(method, params, cancel=cancel, timeout=timeout)
            page = result.get(key)
            if isinstance(page, list):
                items.extend(i for i in page if isinstance(i, dict))
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str) or not nxt:
                return items
            cursor = nxt
        return items

    def supports(self, capability: str) -> bool:
        """Whether the server advertised ``capability`` (tools, prompts, resources …)."""
        return capability in self.capabilities

    # -- server → client -----------------------------------------------------
    def _roots(self, _req: Request) -> dict[str, Any]:
        return roots_result(self.roots)

    def elicit(self, params: Any) -> dict[str, Any]:
        """Answer an ``elicitation/create`` through ``on_elicit`` (defaults applied, checked)."""
        if self.on_elicit is None:
            raise PluginError("elicitation is not supported by this client")
        request = parse_request(self.name, params)
        return result_json(request, self.on_elicit(request))

    def _elicit(self, req: Request) -> dict[str, Any]:
        try:
            return self.elicit(req.params)
        except PluginError as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from exc

    def _on_notification(self, note: Notification) -> None:
        method = note.method
        if method.endswith("/list_changed") and self.on_list_changed is not None:
            self.on_list_changed(method.split("/")[1])
        elif method == "notifications/message" and self.on_log is not None:
            self.on_log(note.params or {})
