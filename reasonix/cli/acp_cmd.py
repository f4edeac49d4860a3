"""``reasonix acp``: run as an Agent Client Protocol agent on stdio (for editors).

stdout belongs to the protocol alone. At entry the real stdout and stdin are
taken over as private descriptors for the protocol; file descriptor 1 (and
``sys.stdout``) then points at stderr and descriptor 0 at /dev/null, so a
stray print, a library warning or a child process can never write a
non-protocol byte to the client or steal its input. Logs go to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["configure", "execute"]

PERMISSION_MODES = ("ask", "acceptEdits", "auto", "plan", "dontAsk", "bypassPermissions")


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the flags; each one applies to every session the editor opens."""
    parser.description = (
        "Agent Client Protocol agent on stdin/stdout, for editors such as Zed. "
        "Configure the editor to run `reasonix acp`; sessions use the editor's "
        "working directory and ./reasonix.toml as usual."
    )
    add = parser.add_argument
    add("--model", help="model reference for new sessions (provider, provider/model or a name)")
    add("--permission-mode", choices=PERMISSION_MODES, help="starting approval posture")
    add("--allowed-tools", "--allowedTools", dest="allowed_tools", action="append", default=[],
        metavar="RULES", help='extra allow rules, e.g. "Read,Bash(git diff:*)"')  # fmt: skip
    add("--mcp-debug", metavar="FILE", help="log MCP JSON-RPC traffic to FILE")


def _take_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own stdin/stdout; fd 1 becomes stderr, fd 0 /dev/null."""
    sys.stdout.flush()
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def execute(args: argparse.Namespace) -> int:
    """Serve the protocol until the client closes stdin; exit code 0."""
    from reasonix import __version__
    from reasonix.acp.session import Defaults
    from reasonix.acp.stdio import serve

    defaults = Defaults(
        model=args.model,
        permission_mode=args.permission_mode,
        allowed_tools=list(args.allowed_tools),
        mcp_debug=args.mcp_debug,
    )
    proto_in, proto_out = _take_stdio()
    try:
        return serve(proto_in, proto_out, sys.stderr, defaults, __version__)
    finally:
        for stream in (proto_in, proto_out):
            try:
                stream.close()
            except OSError:
                pass
