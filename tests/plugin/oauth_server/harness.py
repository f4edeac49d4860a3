"""Run ``server.py`` in a subprocess and play the user's browser against it."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import select
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

SERVER = Path(__file__).resolve().parent / "server.py"
START_TIMEOUT = 30.0


@dataclass
class OAuthServer:
    """A running test AS/RS."""

    proc: subprocess.Popen[str]
    base: str

    @property
    def mcp_url(self) -> str:
        return self.base + "/mcp"

    @property
    def other_url(self) -> str:
        return self.base + "/other/mcp"

    @property
    def scoped_url(self) -> str:
        return self.base + "/scoped/mcp"

    def log(self) -> list[dict[str, Any]]:
        """Every request the MCP endpoints saw (path, authorization, method)."""
        with _direct().open(self.base + "/_log", timeout=10) as resp:
            return list(json.load(resp)["mcp"])


@contextlib.contextmanager
def running(*args: str) -> Iterator[OAuthServer]:
    """Start the server with ``args``; stop it afterwards (skip loudly without the SDK)."""
    for module in ("mcp", "uvicorn", "starlette"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"MISSING python package {module}: run `.venv/bin/pip install mcp`")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("PORT "):
            raise RuntimeError(f"the OAuth test server did not start: {line!r}")
        yield OAuthServer(proc, f"http://127.0.0.1:{int(line.split()[1])}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()


def _direct() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class Browser:
    """Opens authorization URLs the way a user's browser would, on a thread.

    The AS auto-approves and redirects to our loopback listener; urllib
    follows that redirect. ``urls`` keeps every URL opened, ``landed`` the
    final URL (the callback with its ``code``), ``statuses`` the answers.
    """

    urls: list[str] = field(default_factory=list)
    landed: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    def __call__(self, url: str) -> None:
        self.urls.append(url)
        t = threading.Thread(target=self._visit, args=(url,), daemon=True)
        self.threads.append(t)
        t.start()

    def _visit(self, url: str) -> None:
        try:
            with _direct().open(url, timeout=20) as resp:
                self.landed.append(resp.geturl())
                self.statuses.append(resp.status)
        except urllib.error.HTTPError as exc:
            self.landed.append(exc.geturl())
            self.statuses.append(exc.code)
            exc.close()

    def query(self, index: int = -1) -> dict[str, str]:
        """The query parameters of an opened authorization URL."""
        return {k: v[0] for k, v in parse_qs(urlsplit(self.urls[index]).query).items()}

    def join(self) -> None:
        for t in self.threads:
            t.join(timeout=20)
