"""Where the real MCP servers used by the tests live, and how to run them.

Installed by .ci/run (and by hand on a laptop)::

    npm install --prefix .ci/cache/node @modelcontextprotocol/server-everything \\
        @modelcontextprotocol/server-filesystem
    .venv/bin/pip install mcp mcp-server-time

A test that needs a missing one skips with a loud reason naming that command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / ".ci" / "cache" / "node" / "node_modules" / "@modelcontextprotocol"
EVERYTHING_JS = NODE_MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM_JS = NODE_MODULES / "server-filesystem" / "dist" / "index.js"
SERVERS_DIR = Path(__file__).resolve().parent / "servers"
SDK_SERVER = SERVERS_DIR / "sdk_server.py"
NPM_HINT = (
    "npm install --prefix .ci/cache/node @modelcontextprotocol/server-everything "
    "@modelcontextprotocol/server-filesystem"
)
PIP_HINT = ".venv/bin/pip install mcp mcp-server-time"


def node() -> str:
    """The node binary, or skip loudly."""
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("MISSING node: the npm MCP servers need Node.js (apt-get install nodejs)")
    return exe


def need_npm(path: Path) -> str:
    """The path of an npm server script, or skip loudly."""
    if not path.exists():
        pytest.skip(f"MISSING {path.parent.parent.name}: run `{NPM_HINT}`")
    return str(path)


def need_module(name: str) -> None:
    """Skip loudly unless the Python module ``name`` imports."""
    try:
        __import__(name)
    except ImportError:
        pytest.skip(f"MISSING python package for {name}: run `{PIP_HINT}`")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait (bounded) until ``port`` accepts connections."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port} within {timeout}s")


@contextlib.contextmanager
def http_server(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[int]:
    """Run ``argv`` (which listens on ``port``) for the duration of the block."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=full_env,
        start_new_session=True,
    )
    try:
        wait_port(port, proc)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def sdk_argv(*mode: str) -> list[str]:
    """Command line of our mcp-SDK test server in ``mode``."""
    return [sys.executable, str(SDK_SERVER), *mode]
