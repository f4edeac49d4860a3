"""A small raw-JSON ACP client for in-process tests of ``reasonix.acp.stdio.serve``.

The agent runs on a thread with real OS pipes for stdin/stdout; this client
writes JSON lines, reads every message the agent sends, answers the agent's
requests (permission, fs, terminal) through handler functions, and records
everything for assertions. No part of the agent is replaced.
"""

from __future__ import annotations

import io
import json
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reasonix.acp.session import Defaults
from reasonix.acp.stdio import serve

Handler = Callable[[dict[str, Any]], Any]


def project(ws: Path, url: str, extra: str = "") -> None:
    """``ws/reasonix.toml`` pointing at a fake openai-style provider at ``url``."""
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model", "other-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n' + extra
    )


class AgentProcess:
    """``serve()`` on a thread, spoken to over pipes."""

    def __init__(
        self, handlers: dict[str, Handler] | None = None, defaults: Defaults | None = None
    ):
        self.handlers = dict(handlers or {})
        in_r, self._in_w = os.pipe()
        out_r, out_w = os.pipe()
        self._stdin = os.fdopen(in_r, "rb", buffering=0)
        self._stdout = os.fdopen(out_w, "wb", buffering=0)
        self._reader = os.fdopen(out_r, "rb")
        self.log = io.StringIO()
        self.messages: list[dict[str, Any]] = []  # everything the agent sent, in order
        self.requests: list[dict[str, Any]] = []  # the agent's requests to us
        self.raw: list[bytes] = []
        self._responses: dict[Any, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self._ids = 100
        self.exit_code: int | None = None
        self._agent = threading.Thread(target=self._run, args=(defaults,), daemon=True)
        self._agent.start()
        self._pump = threading.Thread(target=self._read_loop, daemon=True)
        self._pump.start()
        self._calls: queue.Queue[tuple[dict[str, Any], Handler]] = queue.Queue()
        self._worker = threading.Thread(target=self._answer_loop, daemon=True)
        self._worker.start()

    def _run(self, defaults: Defaults | None) -> None:
        try:
            self.exit_code = serve(self._stdin, self._stdout, self.log, defaults, "test")
        finally:
            self._stdout.close()
            self._stdin.close()

    def _read_loop(self) -> None:
        for line in self._reader:
            self.raw.append(line)
            message = json.loads(line)
            with self._arrived:
                self.messages.append(message)
                if "method" in message and "id" in message:
                    self.requests.append(message)
                elif "id" in message:
                    self._responses[message["id"]] = message
                self._arrived.notify_all()
            if "method" in message and "id" in message:
                handler = self.handlers.get(message["method"])
                if handler is not None:
                    self._calls.put((message, handler))
                else:
                    self.reply_error(message["id"], -32601, "not handled by the test client")
        self._reader.close()

    def _answer_loop(self) -> None:
        """Answer each agent request on its own thread, as real clients do."""
        threads: list[threading.Thread] = []
        while True:
            message, handler = self._calls.get()
            if handler is None:  # type: ignore[comparison-overlap]
                for t in threads:
                    t.join(30)
                return
            t = threading.Thread(target=self._answer, args=(message, handler), daemon=True)
            t.start()
            threads.append(t)

    def _answer(self, message: dict[str, Any], handler: Handler) -> None:
        try:
            result = handler(message["params"])
        except LookupError as err:
            self.reply_error(message["id"], -32002, str(err))
            return
        try:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        except OSError:
            pass  # the agent is gone already

    # -- talking ------------------------------------------------------------------
    def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        os.write(self._in_w, data)

    def reply_error(self, request_id: Any, code: int, text: str) -> None:
        try:
            self.send(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}
            )
        except OSError:
            pass  # the agent is gone already

    def request(self, method: str, params: dict[str, Any], timeout: float = 30.0) -> Any:
        """Send a request and wait for its response (the whole message)."""
        request_id = self.start(method, params)
        return self.wait_response(request_id, timeout)

    def start(self, method: str, params: dict[str, Any]) -> int:
        self._ids += 1
        self.send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        return self._ids

    def wait_response(self, request_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while request_id not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no response to {request_id}; log:\n{self.log.getvalue()}")
                self._arrived.wait(left)
            return self._responses[request_id]

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not any(predicate(m) for m in self.messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the expected message never came")
                self._arrived.wait(left)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Every ``session/update`` payload (for one session, when given)."""
        return [
            m["params"]["update"]
            for m in list(self.messages)
            if m.get("method") == "session/update"
            and (session_id is None or m["params"]["sessionId"] == session_id)
        ]

    def initialize(self, caps: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": caps or {}}
        )
        return dict(response["result"])

    def new_session(self, cwd: Path, servers: list[Any] | None = None) -> str:
        response = self.request("session/new", {"cwd": str(cwd), "mcpServers": servers or []})
        assert "result" in response, response
        return str(response["result"]["sessionId"])

    def prompt(self, session_id: str, text: str, timeout: float = 60.0) -> dict[str, Any]:
        return self.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
            timeout,
        )

    def close(self, timeout: float = 30.0) -> int | None:
        """Close the agent's stdin (the editor went away) and wait for it to end."""
        os.close(self._in_w)
        self._agent.join(timeout)
        self._pump.join(timeout)
        self._calls.put(({}, None))  # type: ignore[arg-type]
        self._worker.join(timeout)
        assert not self._agent.is_alive(), "the agent did not end after stdin closed"
        return self.exit_code


def allow(option: str) -> Handler:
    """A permission handler that always picks ``option``."""
    return lambda params: {"outcome": {"outcome": "selected", "optionId": option}}
