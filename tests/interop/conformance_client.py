"""Adapter that lets the official MCP conformance suite drive Reasonix's MCP client.

The suite (npm ``@modelcontextprotocol/conformance``) runs
``python tests/interop/conformance_client.py <server-url>``, with the scenario
name in ``MCP_CONFORMANCE_SCENARIO`` (and scenario data as JSON in
``MCP_CONFORMANCE_CONTEXT``). We connect exactly as ``reasonix run`` would,
list the tools and call each one (``add_numbers`` with numbers, the rest with
no arguments), then close. The exit code is 0 when the scenario's steps ran;
the suite itself judges conformance from the traffic it saw.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from reasonix.cancel import Cancel  # noqa: E402 - after the path set-up above
from reasonix.config.model import McpServerConfig  # noqa: E402
from reasonix.errors import ReasonixError  # noqa: E402
from reasonix.plugin.mcp.connect import ConnectOptions, open_client  # noqa: E402

ARGUMENTS = {"add_numbers": {"a": 5, "b": 3}}


def run(url: str, scenario: str) -> int:
    """Drive one scenario against ``url``; 0 on success."""
    notices: list[str] = []
    server = McpServerConfig("conformance", type="http", url=url)
    opts = ConnectOptions(workspace=Path.cwd(), on_notice=notices.append)
    client = open_client(server, opts, Cancel.with_timeout(30))
    try:
        tools = client.list_all("tools/list", "tools", timeout=30)
        for tool in tools:
            name = str(tool.get("name"))
            try:
                client.request(
                    "tools/call",
                    {"name": name, "arguments": ARGUMENTS.get(name, {})},
                    timeout=30,
                )
            except ReasonixError as exc:
                print(f"{scenario}: {name} failed: {exc}", file=sys.stderr)
    finally:
        client.close()
    for text in notices:
        print(f"notice: {text}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    """Entry point: the server URL is the last argument."""
    if not argv:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        return run(argv[-1], scenario)
    except ReasonixError as exc:
        print(f"{scenario}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
