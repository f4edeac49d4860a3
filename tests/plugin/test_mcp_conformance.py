"""The conformance matrix: one test body over every transport of every real server.

Servers written by others (npm server-everything and server-filesystem, the
PyPI ``mcp`` SDK running our small server, PyPI mcp-server-time), reached
through the public McpManager API: call a tool, read a resource, get a
prompt, receive progress, answer roots/list — where the server can.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import (
    EVERYTHING_JS,
    FILESYSTEM_JS,
    free_port,
    http_server,
    need_module,
    need_npm,
    node,
    sdk_argv,
)

from reasonix.config.model import McpServerConfig
from reasonix.plugin.mcp import McpManager
from reasonix.tool import ToolContext

pytestmark = pytest.mark.interop


@dataclass
class Case:
    """What one server/transport combination can do, and how to check it."""

    make: Callable[[dict[str, Any]], McpServerConfig]
    tool: tuple[str, dict[str, Any], str]  # name, arguments, expected substring
    era: str = "auto"
    expect_version: str = ""
    resource: tuple[str, str] | None = None  # uri, expected substring
    prompt: tuple[str, dict[str, str], str] | None = None
    progress: tuple[str, dict[str, Any]] | None = None
    roots: str | None = None  # tool whose answer lists the roots
    needs: list[str] = field(default_factory=list)


def _everything(kind: str) -> Callable[[dict[str, Any]], McpServerConfig]:
    def make(urls: dict[str, Any]) -> McpServerConfig:
        if kind == "stdio":
            return McpServerConfig(
                "everything", command=node(), args=[need_npm(EVERYTHING_JS), "stdio"]
            )
        if kind == "fallback":  # a legacy SSE server declared as http: initialize 404 → SSE
            return McpServerConfig("everything", type="http", url=urls["everything-sse"])
        return McpServerConfig("everything", type=kind, url=urls[f"everything-{kind}"])

    return make


def _sdk(kind: str) -> Callable[[dict[str, Any]], McpServerConfig]:
    def make(urls: dict[str, Any]) -> McpServerConfig:
        need_module("mcp")
        if kind == "stdio":
            return McpServerConfig("sdk", command=sys.executable, args=sdk_argv("stdio")[1:])
        return McpServerConfig("sdk", type="sse" if kind == "sse" else "http", url=urls[kind])

    return make


def _time(urls: dict[str, Any]) -> McpServerConfig:
    need_module("mcp_server_time")
    return McpServerConfig("time", command=sys.executable, args=["-m", "mcp_server_time"])


def _filesystem(urls: dict[str, Any]) -> McpServerConfig:
    return McpServerConfig("fs", command=node(), args=[need_npm(FILESYSTEM_JS)])


EV_TOOL = ("echo", {"message": "hi there"}, "Echo: hi there")
EV_RESOURCE = ("demo://resource/static/document/architecture.md", "Architecture")
EV_PROMPT = ("simple-prompt", {}, "simple prompt")
EV_PROGRESS = ("trigger-long-running-operation", {"duration": 0.2, "steps": 2})
SDK_TOOL = ("echo", {"text": "hi there"}, "echo: hi there")
SDK_RESOURCE = ("test://hello", "hello from the resource")
SDK_PROMPT = ("greet", {"name": "Ada"}, "greet Ada")
SDK_PROGRESS = ("progress", {"steps": 3})


def _ev(kind: str) -> Case:
    return Case(
        _everything(kind),
        EV_TOOL,
        resource=EV_RESOURCE,
        prompt=EV_PROMPT,
        progress=EV_PROGRESS,
        roots="get-roots-list",
    )


def _sdk_case(kind: str, era: str, *, progress: bool = True, roots: bool = True) -> Case:
    return Case(
        _sdk(kind),
        SDK_TOOL,
        era=era,
        expect_version="2025-11-25" if era == "handshake" else "2026-07-28",
        resource=SDK_RESOURCE,
        prompt=SDK_PROMPT,
        progress=SDK_PROGRESS if progress else None,  # a JSON reply cannot carry notifications
        roots="roots" if roots else None,
    )


CASES: dict[str, Case] = {
    "everything-stdio": _ev("stdio"),
    "everything-http": _ev("http"),
    "everything-sse": _ev("sse"),
    "everything-sse-fallback": _ev("fallback"),
    "sdk-stdio": _sdk_case("stdio", "auto"),
    "sdk-stdio-handshake": _sdk_case("stdio", "handshake"),
    "sdk-sse": _sdk_case("sse", "auto"),
    "sdk-sse-handshake": _sdk_case("sse", "handshake"),
    "sdk-http": _sdk_case("http", "auto"),
    "sdk-http-handshake": _sdk_case("http", "handshake"),
    "sdk-http-json": _sdk_case("json", "auto", progress=False),
    "sdk-http-json-handshake": _sdk_case("json", "handshake", progress=False),
    "sdk-http-stateless": _sdk_case("stateless", "auto"),
    # A stateless handshake-era server has no back-channel for roots/list.
    "sdk-http-stateless-handshake": _sdk_case("stateless", "handshake", roots=False),
    "time-stdio": Case(_time, ("get_current_time", {"timezone": "UTC"}, "UTC")),
    "filesystem-stdio": Case(
        _filesystem, ("list_allowed_directories", {}, ""), roots="list_allowed_directories"
    ),
}


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    """Start every HTTP server once for the module (skipping the missing ones lazily)."""
    out: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        have_mcp = True
        try:
            import mcp  # noqa: F401
        except ImportError:
            have_mcp = False
        if have_mcp:
            for key, mode, path in [
                ("sse", ("sse",), "/sse"),
                ("http", ("http",), "/mcp"),
                ("json", ("http", "json"), "/mcp"),
                ("stateless", ("http", "stateless"), "/mcp"),
            ]:
                port = free_port()
                stack.enter_context(http_server(sdk_argv(mode[0], str(port), *mode[1:]), port))
                out[key] = f"http://127.0.0.1:{port}{path}"
        if EVERYTHING_JS.exists() and (exe := shutil.which("node")):
            for kind, path in [("http", "/mcp"), ("sse", "/sse")]:
                port = free_port()
                argv = [exe, str(EVERYTHING_JS), "streamableHttp" if kind == "http" else "sse"]
                stack.enter_context(http_server(argv, port, {"PORT": str(port)}))
                out[f"everything-{kind}"] = f"http://127.0.0.1:{port}{path}"
        yield out


def _call(tools: dict[str, Any], name: str, args: dict[str, Any], ctx: ToolContext) -> str:
    assert name in tools, f"{name} not offered; have {sorted(tools)}"
    result = tools[name].execute(json.dumps(args), ctx)
    assert not result.is_error, result.content
    return str(result.content)


@pytest.mark.parametrize("case_id", list(CASES))
def test_mcp_conformance(case_id: str, urls: dict[str, str], tmp_path: Path) -> None:
    case = CASES[case_id]
    if case_id.startswith("everything") and "everything-http" not in urls:
        need_npm(EVERYTHING_JS)
        node()
    server = case.make(urls)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "note.txt").write_text("a note\n")
    progress: list[str] = []
    ctx = ToolContext(workspace=workspace, progress=progress.append)
    with McpManager(
        [server],
        workspace=workspace,
        era=case.era,
        log_dir=tmp_path / "logs",
        startup_timeout=30,
        call_timeout=30,
    ) as mgr:
        mgr.start()
        assert mgr.wait_ready(30) == [server.name], mgr.drain_notices()
        status = mgr.status()[0]
        if case.expect_version:
            assert status.protocol_version == case.expect_version
        tools = {t.name: t for t in mgr.tools()}
        assert "use_capability" in tools
        name, args, expected = case.tool
        assert expected in _call(tools, f"mcp__{server.name}__{name}", args, ctx)
        if case.resource:
            uri, text = case.resource
            assert text in mgr.read_resource(server.name, uri)
            assert any(r.uri == uri for r in mgr.resources())
        if case.prompt:
            pname, pargs, ptext = case.prompt
            assert ptext in mgr.get_prompt(server.name, pname, pargs)
            assert any(p.command == f"mcp__{server.name}__{pname}" for p in mgr.prompts())
        if case.progress:
            pname, pargs = case.progress
            _call(tools, f"mcp__{server.name}__{pname}", pargs, ctx)
            assert progress, "no progress notification arrived"
        if case.roots:
            roots_tool = f"mcp__{server.name}__{case.roots}"
            # server-filesystem fetches roots right after initialized; poll (bounded).
            end = time.monotonic() + 10
            while True:
                text = _call(tools, roots_tool, {}, ctx)
                if str(workspace) in text or workspace.as_uri() in text or time.monotonic() > end:
                    break
                time.sleep(0.1)
            assert str(workspace) in text or workspace.as_uri() in text, text
