"""A tiny reference MCP server over stdio: two tools, a prompt and a resource (DOC-6).

It shows the whole plugin contract in one readable file and needs nothing but
the standard library, so anyone can try MCP with no installs::

    reasonix mcp add example -- python3 reasonix.pyz mcp example-server

Protocol: one JSON-RPC 2.0 message per line on stdin/stdout, the handshake era
(``initialize`` → ``notifications/initialized`` → ``tools/list`` /
``tools/call``, ``prompts/list`` / ``prompts/get``, ``resources/list`` /
``resources/read``). The prompt ``explain`` becomes the slash command
``/mcp__example__explain TOPIC`` and the resource is attached in chat with
``@example:example://readme``. Unknown methods, including the stateless era's
``server/discover``, get a method-not-found error, which tells a client to use
the handshake instead. Logging goes to stderr; stdout carries only protocol.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["PROMPTS", "RESOURCES", "TOOLS", "handle", "serve"]

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602
_PARSE_ERROR = -32700


def _echo(args: dict[str, Any]) -> str:
    return str(args.get("text", ""))


def _wordcount(args: dict[str, Any]) -> str:
    text = str(args.get("text", ""))
    return json.dumps({"words": len(text.split()), "lines": len(text.splitlines()),
                       "characters": len(text)})  # fmt: skip


TOOLS: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any]], str]]] = {
    "echo": (
        {
            "name": "echo",
            "description": "Return the given text unchanged.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to echo"}},
                "required": ["text"],
            },
            "annotations": {"readOnlyHint": True},
        },
        _echo,
    ),
    "wordcount": (
        {
            "name": "wordcount",
            "description": "Count the words, lines and characters of a text (JSON answer).",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to count"}},
                "required": ["text"],
            },
            "annotations": {"readOnlyHint": True},
        },
        _wordcount,
    ),
}


PROMPTS: dict[str, dict[str, Any]] = {
    "explain": {
        "name": "explain",
        "description": "Ask for an explanation of a topic at a chosen level.",
        "arguments": [
            {"name": "topic", "description": "What to explain", "required": True},
            {"name": "level", "description": "beginner or expert", "required": False},
        ],
    },
}

RESOURCES: dict[str, tuple[dict[str, Any], str]] = {
    "example://readme": (
        {
            "uri": "example://readme",
            "name": "readme",
            "description": "What this example server offers.",
            "mimeType": "text/plain",
        },
        "The example server offers the tools echo and wordcount, the prompt explain "
        "and this resource.\n",
    ),
}


def _prompt(params: dict[str, Any]) -> dict[str, Any] | None:
    if params.get("name") not in PROMPTS:
        return None
    args = params.get("arguments") or {}
    topic = str(args.get("topic", "")).strip() or "something"
    level = str(args.get("level", "")).strip() or "beginner"
    text = f"Explain {topic} to a {level}, in three short paragraphs."
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to one incoming message (None for notifications)."""
    method = message.get("method")
    msg_id = message.get("id")
    if msg_id is None:
        return None  # notifications (initialized, cancelled …) need no answer
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[0]
        return _result(
            msg_id,
            {
                "protocolVersion": version,
                "capabilities": {
                    "tools": {"listChanged": False},
                    "prompts": {"listChanged": False},
                    "resources": {},
                },
                "serverInfo": {"name": "reasonix-example", "version": "1.0.0"},
            },
        )
    if method == "ping":
        return _result(msg_id, {})
    if method == "tools/list":
        return _result(msg_id, {"tools": [schema for schema, _ in TOOLS.values()]})
    if method == "tools/call":
        entry = TOOLS.get(str(params.get("name")))
        args = params.get("arguments") or {}
        if entry is None or not isinstance(args, dict):
            return _error(msg_id, _INVALID_PARAMS, f"unknown tool {params.get('name')!r}")
        text = entry[1](args)
        return _result(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
    if method == "prompts/list":
        return _result(msg_id, {"prompts": list(PROMPTS.values())})
    if method == "prompts/get":
        prompt = _prompt(params)
        if prompt is None:
            return _error(msg_id, _INVALID_PARAMS, f"unknown prompt {params.get('name')!r}")
        return _result(msg_id, prompt)
    if method == "resources/list":
        return _result(msg_id, {"resources": [info for info, _ in RESOURCES.values()]})
    if method == "resources/read":
        uri = str(params.get("uri"))
        if uri not in RESOURCES:
            return _error(msg_id, _INVALID_PARAMS, f"unknown resource {uri!r}")
        text = RESOURCES[uri][1]
        return _result(msg_id, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]})
    return _error(msg_id, _METHOD_NOT_FOUND, f"method not found: {method}")


def serve(stdin: IO[str], stdout: IO[str]) -> int:
    """Answer messages from ``stdin`` until it closes; returns the exit code."""
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as err:
            reply: dict[str, Any] | None = _error(None, _PARSE_ERROR, f"parse error: {err}")
        else:
            reply = handle(message) if isinstance(message, dict) else None
        if reply is not None:
            stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
            stdout.flush()
    return 0
