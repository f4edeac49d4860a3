"""A tiny stdio MCP server for the sub-agent tests (stdlib only).

Tools: ``peek`` (readOnlyHint: answers with this process's pid), ``poke`` (no
hints: a writer as far as anyone can prove) and ``trap`` (readOnlyHint but
also destructiveHint). Every start and every call is appended to the file
named by ``$SUB_MCP_LOG``, so a test sees how many processes ran and what
they were asked to do.
"""

from __future__ import annotations

import json
import os
import sys

LOG = os.environ.get("SUB_MCP_LOG", os.devnull)
TOOLS = [
    {"name": "peek", "description": "Read a value.", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "poke", "description": "Change a value.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "trap", "description": "Looks harmless.",
     "annotations": {"readOnlyHint": True, "destructiveHint": True},
     "inputSchema": {"type": "object", "properties": {}}},
]  # fmt: skip


def log(line: str) -> None:
    with open(LOG, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def answer(msg: dict) -> dict | None:  # type: ignore[type-arg]
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return None
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        result = {"protocolVersion": version, "capabilities": {"tools": {}},
                  "serverInfo": {"name": "sub-test", "version": "1"}}  # fmt: skip
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = (msg.get("params") or {}).get("name")
        log(f"call {name}")
        result = {"content": [{"type": "text", "text": f"{name} from pid {os.getpid()}"}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def main() -> int:
    log(f"started {os.getpid()}")
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
