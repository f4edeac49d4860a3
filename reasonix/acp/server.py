"""The ACP agent: method routing and the handlers of protocol version 1.

Requests that may take long (building a runtime, a prompt turn, a model
switch) run on their own threads so the reader keeps reading: a
``session/cancel`` or the client's answer to our ``session/request_permission``
must get through while a turn runs. Quick requests and notifications are
handled on the reader thread. Unknown methods are ``-32601``; a notification
never gets an answer, whatever happens to it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import UsageError

from .modes import check_mode, config_options, set_config_option
from .params import absolute_path, as_object, opt_list, opt_object, req_str
from .rpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    Connection,
    Incoming,
    Reply,
    RpcError,
)
from .session import AcpSession, Defaults

__all__ = ["PROTOCOL_VERSION", "AcpServer"]

PROTOCOL_VERSION = 1  # the stable ACP major version this agent speaks
AUTH_METHOD = "provider-key"


if TYPE_CHECKING:
    from typing import Any

    Handler = Callable[[dict[str, Any], Incoming], Any]


class AcpServer:
    """Routes incoming messages to handlers; owns the sessions of this process."""

    def __init__(self, conn: Connection, defaults: Defaults, version: str) -> None:
        self.conn, self.defaults, self.version = conn, defaults, version
        self.client_caps: dict[str, Any] = {}
        self.sessions: dict[str, AcpSession] = {}
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        # method -> (handler, runs on its own thread)
        self._requests: dict[str, tuple[Handler, bool]] = {
            "initialize": (self._initialize, False),
            "authenticate": (self._authenticate, True),
            "session/new": (self._new, True),
            "session/load": (self._load, True),
            "session/prompt": (self._prompt, True),
            "session/set_mode": (self._set_mode, False),
            "session/set_config_option": (self._set_config, True),
            "session/close": (self._close, True),
        }

    # -- routing ------------------------------------------------------------------
    def dispatch(self, incoming: Incoming) -> None:
        """Handle one valid request or notification."""
        if not incoming.is_request:
            self.conn.answer(incoming, lambda p: self._notification(incoming.method, p))
            return
        entry = self._requests.get(incoming.method)
        if entry is None:
            self.conn.respond_error(
                incoming.id,
                RpcError(METHOD_NOT_FOUND, f"method not found: {incoming.method[:200]}"),
            )
            return
        handler, threaded = entry

        def run() -> None:
            self.conn.answer(incoming, lambda p: handler(as_object(p), incoming))

        if not threaded:
            run()
            return
        thread = threading.Thread(target=self._tracked(run), name=f"acp {incoming.method}")
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _tracked(self, fn: Callable[[], None]) -> Callable[[], None]:
        def wrapper() -> None:
            try:
                fn()
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())

        return wrapper

    def _notification(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "session/cancel":
            session = self.sessions.get(str(params.get("sessionId")))
            if session is not None:
                session.cancel()
        elif method == "$/cancel_request":  # only a running prompt can be cancelled
            for session in list(self.sessions.values()):
                if session.busy and session.prompt_request == params.get("requestId"):
                    session.cancel()
        else:
            self.conn.log(f"ignored notification {method[:100]!r}")

    def _session(self, params: dict[str, Any]) -> AcpSession:
        session_id = req_str(params, "sessionId")
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(RESOURCE_NOT_FOUND, f"no active session {session_id!r} (new or load it)")
        return session

    # -- handlers -----------------------------------------------------------------
    def _initialize(self, params: dict[str, Any], _: Incoming) -> dict[str, Any]:
        version = params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            raise RpcError(INVALID_PARAMS, "invalid params: protocolVersion must be an integer")
        self.client_caps = opt_object(params, "clientCapabilities")
        return {
            "protocolVersion": PROTOCOL_VERSION,  # ours, when the client asks for another
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": True},
                "sessionCapabilities": {"close": {}},
            },
            "agentInfo": {"name": "reasonix", "title": "Reasonix", "version": self.version},
            "authMethods": [
                {
                    "id": AUTH_METHOD,
                    "name": "Provider API key",
                    "description": "Put the model provider's key into <home>/.env "
                    "(e.g. DEEPSEEK_API_KEY=...), then retry.",
                }
            ],
        }

    def _authenticate(self, params: dict[str, Any], _: Incoming) -> dict[str, Any]:
        """Reasonix reads its keys itself: check that the default provider now has one."""
        if req_str(params, "methodId") != AUTH_METHOD:
            raise RpcError(INVALID_PARAMS, f"invalid params: the auth method is {AUTH_METHOD!r}")
        from reasonix import config
        from reasonix.config import require_api_key

        cfg = config.load(Path.cwd(), {"default_model": self.defaults.model})
        require_api_key(cfg.default_resolved().provider)  # MissingAPIKey: auth required
        return {}

    def _register(self, session: AcpSession) -> AcpSession:
        with self._lock:
            self.sessions[session.id] = session
        return session

    def _new(self, params: dict[str, Any], _: Incoming) -> Reply:
        cwd = _directory(params)
        servers = opt_list(params, "mcpServers")
        session = self._register(
            AcpSession.open(self.conn, self.client_caps, cwd, servers, self.defaults)
        )
        return Reply({"sessionId": session.id, **session.setup_result()}, session.announce_commands)

    def _load(self, params: dict[str, Any], _: Incoming) -> Reply:
        session_id = req_str(params, "sessionId")
        cwd = _directory(params)
        servers = opt_list(params, "mcpServers")
        from reasonix.agent.session import list_sessions

        path = next(
            (i.path for i in list_sessions(Path(cwd).resolve()) if i.id == session_id), None
        )
        if path is None:
            raise RpcError(RESOURCE_NOT_FOUND, f"no stored session {session_id!r} for {cwd}")
        old = self.sessions.get(session_id)
        if old is not None:
            if old.busy:
                raise RpcError(INVALID_REQUEST, "that session is running a prompt")
            with self._lock:
                self.sessions.pop(session_id, None)
            old.close()
        session = AcpSession.open(
            self.conn, self.client_caps, cwd, servers, self.defaults, resume=str(path)
        )
        self._register(session)
        session.replay()  # every update is sent before the answer, as the protocol asks
        return Reply(session.setup_result(), session.announce_commands)

    def _prompt(self, params: dict[str, Any], incoming: Incoming) -> dict[str, Any]:
        return self._session(params).prompt(params.get("prompt"), incoming.id)

    def _set_mode(self, params: dict[str, Any], _: Incoming) -> dict[str, Any]:
        session = self._session(params)
        session.set_mode(check_mode(req_str(params, "modeId")))
        return {}

    def _set_config(self, params: dict[str, Any], _: Incoming) -> dict[str, Any]:
        session = self._session(params)
        if params.get("configId") == "model" and session.busy:
            # the running turn keeps its agent; a new one would miss that turn's messages
            raise RpcError(INVALID_REQUEST, "the model can change once the running prompt ends")
        changed = set_config_option(session.rt, params)
        if changed == "mode":
            session.send({"sessionUpdate": "current_mode_update", "currentModeId": session.rt.mode})
        return {"configOptions": config_options(session.rt)}

    def _close(self, params: dict[str, Any], _: Incoming) -> dict[str, Any]:
        session = self._session(params)
        with self._lock:
            self.sessions.pop(session.id, None)
        session.close()
        return {}

    # -- the end ------------------------------------------------------------------
    def shutdown(self, wait: float = 15.0) -> None:
        """Input ended: cancel every turn, let every handler finish, close every session."""
        for session in list(self.sessions.values()):
            session.cancel()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(wait)
        for session in list(self.sessions.values()):
            session.close(wait=1.0)
        self.sessions.clear()


def _directory(params: dict[str, Any]) -> str:
    """The session's ``cwd``: absolute and an existing directory."""
    cwd = absolute_path(params, "cwd")
    if not Path(cwd).is_dir():
        raise UsageError(f"cwd {cwd} is not a directory")
    return cwd
