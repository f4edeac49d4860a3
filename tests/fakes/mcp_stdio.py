"""A loopback stdio MCP server with many generated tools (issue 37: tools on demand).

    python mcp_stdio.py --name weather --tools 30 [--pid-dir DIR] [--delay S]

Speaks the handshake era (``initialize`` → ``tools/list`` / ``tools/call``),
one JSON-RPC message a line, standard library only. ``--name`` picks a domain
(weather, calendar, github, docker, billing, mail, maps, notes, music, crm;
any other name reuses weather's nouns) whose tools are ``<verb>_<noun>`` with
realistic descriptions and input schemas (~500 bytes each). With ``--pid-dir``
the process writes ``<DIR>/<name>.pid`` on start, so a test can tell which
servers were ever started; ``--delay`` makes the start slow. ``tools/call``
answers ``<server>.<tool> ok: <args>``.
It declares neither prompts nor resources.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

DOMAINS: dict[str, tuple[str, ...]] = {
    "weather": ("forecast", "station", "alert", "radar", "observation"),
    "calendar": ("event", "invite", "reminder", "room", "attendee"),
    "github": ("issue", "pull_request", "branch", "release", "workflow"),
    "docker": ("container", "image", "volume", "network", "compose_stack"),
    "billing": ("invoice", "payment", "refund", "subscription", "coupon"),
    "mail": ("message", "thread", "label", "draft", "attachment"),
    "maps": ("route", "place", "geocode", "traffic", "elevation"),
    "notes": ("note", "notebook", "tag", "checklist", "snippet"),
    "music": ("track", "playlist", "album", "artist", "lyrics"),
    "crm": ("contact", "deal", "company", "lead", "pipeline"),
}
SERVERS = tuple(DOMAINS)
VERBS = ("get", "list", "create", "update", "delete", "search")


def tool_specs(server: str, count: int) -> list[dict[str, Any]]:
    """The ``count`` tools of ``server`` (deterministic)."""
    nouns = DOMAINS.get(server, DOMAINS["weather"])
    out: list[dict[str, Any]] = []
    for i in range(count):
        verb, noun = VERBS[i // len(nouns) % len(VERBS)], nouns[i % len(nouns)]
        name = f"{verb}_{noun}" if i < len(VERBS) * len(nouns) else f"{verb}_{noun}_{i}"
        label = noun.replace("_", " ")
        out.append(
            {
                "name": name,
                "description": (
                    f"{verb.capitalize()} a {label} in the {server} service. Use it when the "
                    f"user asks to {verb} {label}s; returns the {label} as JSON with its id, "
                    "owner and timestamps."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        f"{noun}_id": {"type": "string", "description": f"id of the {label}"},
                        "owner": {"type": "string", "description": "account that owns it"},
                        "fields": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "fields to return (all when empty)",
                        },
                        "dry_run": {"type": "boolean", "description": "validate only"},
                        "limit": {"type": "integer", "description": "most items to return"},
                    },
                    "required": [f"{noun}_id"],
                },
                "annotations": {"readOnlyHint": verb in ("get", "list", "search")},
            }
        )
    return out


def server_toml(name: str, tools: int, *extra: str) -> str:
    """A ``[[mcp.servers]]`` table that runs this fake as server ``name`` with ``tools``
    tools; ``extra`` are more of its flags (``--pid-dir DIR``, ``--delay S``)."""
    args = [str(Path(__file__).resolve()), "--name", name, "--tools", str(tools), *extra]
    return (
        f'[[mcp.servers]]\nname = "{name}"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = {json.dumps(args)}\n"
    )


def _reply(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def handle(server: str, tools: list[dict[str, Any]], message: dict[str, Any]) -> Any:
    """The reply to one message (None for notifications)."""
    msg_id, method = message.get("id"), message.get("method")
    if msg_id is None:
        return None
    params = message.get("params") or {}
    if method == "initialize":
        return _reply(msg_id, {
            "protocolVersion": params.get("protocolVersion") or "2025-06-18",
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": f"fake-{server}", "version": "1.0.0"},
        })  # fmt: skip
    if method == "ping":
        return _reply(msg_id, {})
    if method == "tools/list":
        return _reply(msg_id, {"tools": tools})
    if method == "tools/call":
        name = params.get("name")
        if not any(t["name"] == name for t in tools):
            return {"jsonrpc": "2.0", "id": msg_id,
                    "error": {"code": -32602, "message": f"unknown tool {name!r}"}}  # fmt: skip
        args = json.dumps(params.get("arguments") or {}, sort_keys=True)
        text = f"{server}.{name} ok: {args}"
        return _reply(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
    return {"jsonrpc": "2.0", "id": msg_id,
            "error": {"code": -32601, "message": f"method not found: {method}"}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Serve stdin/stdout until stdin closes."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", default="weather")
    ap.add_argument("--tools", type=int, default=30)
    ap.add_argument("--pid-dir", default="")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before answering")
    opts = ap.parse_args(argv)
    if opts.pid_dir:
        Path(opts.pid_dir).mkdir(parents=True, exist_ok=True)
        (Path(opts.pid_dir) / f"{opts.name}.pid").write_text(str(os.getpid()))
    tools = tool_specs(opts.name, opts.tools)
    time.sleep(opts.delay)  # a slow start (npx fetching a package …)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = handle(opts.name, tools, message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
