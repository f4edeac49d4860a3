"""Failure cases, concurrency and use_capability through the public McpManager.

Each failure must give a clear tool error within its timeout while the
manager and the other servers keep working.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_servers import SERVERS_DIR, need_module, sdk_argv

from reasonix.cancel import Cancel
from reasonix.config.model import McpServerConfig
from reasonix.plugin.mcp import McpManager
from reasonix.tool import CONTENT_LIMIT_BYTES, Tool, ToolContext

pytestmark = pytest.mark.interop


def sdk(name: str, **kw: object) -> McpServerConfig:
    return McpServerConfig(name, command=sys.executable, args=sdk_argv("stdio")[1:], **kw)  # type: ignore[arg-type]


def script(name: str, file: str) -> McpServerConfig:
    return McpServerConfig(name, command=sys.executable, args=[str(SERVERS_DIR / file)])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def manager(servers: list[McpServerConfig], ws: Path, **kw: object) -> McpManager:
    need_module("mcp")
    opts: dict[str, object] = {"startup_timeout": 20.0, "call_timeout": 20.0}
    opts.update(kw)
    return McpManager(servers, workspace=ws, log_dir=ws.parent / "logs", **opts)  # type: ignore[arg-type]


def by_name(mgr: McpManager) -> dict[str, Tool]:
    return {t.name: t for t in mgr.tools()}


def run(tool: Tool, args: dict[str, object], ctx: ToolContext | None = None):  # type: ignore[no-untyped-def]
    return tool.execute(json.dumps(args), ctx or ToolContext())


@pytest.fixture
def two(workspace: Path) -> Iterator[McpManager]:
    with manager([sdk("a"), sdk("b")], workspace) as mgr:
        mgr.start()
        assert mgr.wait_ready(20) == ["a", "b"]
        yield mgr


def test_killed_mid_call_gives_error_and_others_keep_working(two: McpManager) -> None:
    tools = by_name(two)
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(run(tools["mcp__a__slow"], {"seconds": 30})))
    start = time.monotonic()
    t.start()
    time.sleep(0.5)
    rt = two.runtimes["a"]
    assert rt.client is not None
    transport = rt.client.transport
    transport.kill()  # type: ignore[attr-defined]
    t.join(10)
    (result,) = out
    assert result.is_error and "stopped during slow" in result.content  # type: ignore[attr-defined]
    assert time.monotonic() - start < 10
    assert run(tools["mcp__b__echo"], {"text": "still"}).content == "echo: still"
    # The dead server is restarted once, lazily, by the next call.
    again = run(tools["mcp__a__echo"], {"text": "back"})
    assert again.content == "echo: back", again.content
    assert any("restarting" in n for n in two.drain_notices())


def test_never_answers_initialize(workspace: Path) -> None:
    with manager(
        [script("mute", "silent_server.py"), sdk("ok", startup_timeout_seconds=20.0)],
        workspace,
        startup_timeout=1.5,
    ) as mgr:
        start = time.monotonic()
        mgr.start()
        assert mgr.wait_ready(10) == ["ok"]
        assert time.monotonic() - start < 6
        status = {s.name: s for s in mgr.status()}
        assert status["mute"].state == "failed"
        assert "startup timeout (1.5s)" in status["mute"].error
        notices = mgr.drain_notices()
        assert any("MCP server mute skipped" in n for n in notices)
        tools = by_name(mgr)
        assert not any(n.startswith("mcp__mute__") for n in tools)
        res = run(tools["use_capability"], {"action": "call", "server": "mute", "tool": "x"})
        assert res.is_error and "unavailable" in res.content
        assert run(tools["mcp__ok__echo"], {"text": "1"}).content == "echo: 1"


def test_garbage_on_stdout_is_reported_and_skipped(workspace: Path) -> None:
    with manager([script("noisy", "noisy_start.py")], workspace) as mgr:
        mgr.start()
        assert mgr.wait_ready(20) == ["noisy"], mgr.drain_notices()
        tools = by_name(mgr)
        assert run(tools["mcp__noisy__echo"], {"text": "ok"}).content == "echo: ok"
        notices = mgr.drain_notices()
        assert any("Starting up" in n for n in notices)
        assert any("{broken json" in n for n in notices)
        assert any("relay: between messages" in n for n in notices)


def test_ten_megabyte_result_is_clipped_with_raw_kept(two: McpManager) -> None:
    size = 10 * 1024 * 1024
    start = time.monotonic()
    res = run(by_name(two)["mcp__a__big"], {"size": size})
    assert not res.is_error
    assert len(res.content.encode()) <= CONTENT_LIMIT_BYTES
    assert "omitted" in res.content
    assert len(res.raw_content) >= size
    assert time.monotonic() - start < 20
    assert run(by_name(two)["mcp__a__echo"], {"text": "x"}).content == "echo: x"


def test_call_timeout_and_cancel(workspace: Path) -> None:
    debug = workspace.parent / "traffic.log"
    with manager([sdk("s")], workspace, call_timeout=0.5, debug_log=debug) as mgr:
        mgr.start()
        assert mgr.wait_ready(20) == ["s"]
        tool = by_name(mgr)["mcp__s__slow"]
        res = run(tool, {"seconds": 10})
        assert res.is_error and "timed out after 0.5s" in res.content
        ctx = ToolContext(cancel=Cancel())
        threading.Timer(0.2, ctx.cancel.cancel, ("user",)).start()
        start = time.monotonic()
        res = run(tool, {"seconds": 10}, ctx)
        assert res.is_error and "cancelled" in res.content
        assert time.monotonic() - start < 2
    text = debug.read_text()
    assert "notifications/cancelled" in text and " -> " in text and " <- " in text


def _timed_pair(mgr: McpManager, name: str, seconds: float) -> float:
    tool = by_name(mgr)[f"mcp__{name}__slow"]
    start = time.monotonic()
    threads = [threading.Thread(target=run, args=(tool, {"seconds": seconds})) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    return time.monotonic() - start


def test_serial_versus_parallel(workspace: Path) -> None:
    servers = [sdk("my-browser"), sdk("par"), sdk("forced", concurrency="serial")]
    with manager(servers, workspace) as mgr:
        mgr.start()
        assert len(mgr.wait_ready(20)) == 3
        modes = {s.name: s.concurrency for s in mgr.status()}
        assert modes == {"my-browser": "serial", "par": "parallel", "forced": "serial"}
        assert _timed_pair(mgr, "par", 1.0) < 1.8  # overlapped
        assert _timed_pair(mgr, "my-browser", 1.0) >= 2.0  # one after the other
        # A queued call still honours its own cancellation.
        tool = by_name(mgr)["mcp__forced__slow"]
        first = threading.Thread(target=run, args=(tool, {"seconds": 1.5}))
        first.start()
        time.sleep(0.2)
        ctx = ToolContext(cancel=Cancel())
        threading.Timer(0.2, ctx.cancel.cancel, ("user",)).start()
        start = time.monotonic()
        res = run(tool, {"seconds": 0.1}, ctx)
        assert res.is_error and "cancelled" in res.content
        assert time.monotonic() - start < 0.9
        first.join(10)


def test_use_capability_and_the_start_wait(workspace: Path) -> None:
    late = script("late", "silent_server.py")
    late.startup_timeout_seconds = 30.0
    servers = [sdk("fast"), late]
    with manager(servers, workspace) as mgr:
        start = time.monotonic()
        mgr.start()
        assert mgr.wait_ready(3.0) == ["fast"]  # D21: at most 3 s
        tools = by_name(mgr)
        assert "mcp__fast__echo" in tools and tools["mcp__fast__echo"].read_only
        assert not tools["mcp__fast__add"].read_only
        assert not any(n.startswith("mcp__late__") for n in tools)
        cap = tools["use_capability"]
        listing = run(cap, {"action": "list"}).content
        assert "fast [ready]" in listing and "late [starting]" in listing and "- echo" in listing
        spec = json.loads(run(cap, {"action": "inspect", "server": "fast", "tool": "add"}).content)
        assert spec["inputSchema"]["required"] == ["a", "b"]
        assert (
            run(
                cap,
                {"action": "call", "server": "fast", "tool": "add", "arguments": {"a": 2, "b": 3}},
            ).content
            == "5"
        )
        assert (
            run(
                cap, {"action": "call", "tool": "mcp__fast__echo", "arguments": {"text": "q"}}
            ).content
            == "echo: q"
        )
        assert run(cap, {"action": "call", "server": "nope", "tool": "x"}).is_error
        assert (
            "has no tool"
            in run(cap, {"action": "inspect", "server": "fast", "tool": "zzz"}).content
        )
        # The schema the provider sees never changes: tools() is frozen.
        assert [t.name for t in mgr.tools()] == list(tools)
        assert run(cap, {"action": "bogus"}).is_error
    assert time.monotonic() - start < 10  # closing aborted the start still in progress


def test_unset_variable_fails_only_that_server(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RX_TEST_UNSET", raising=False)
    bad = McpServerConfig("needs-var", command="${RX_TEST_UNSET}", args=[])
    good = sdk("good", env={"ROOT": "${REASONIX_WORKSPACE_ROOT}", "X": "${RX_TEST_UNSET:-dflt}"})
    with manager([bad, good], workspace) as mgr:
        mgr.start()
        assert mgr.wait_ready(20) == ["good"]
        err = {s.name: s.error for s in mgr.status()}["needs-var"]
        assert "RX_TEST_UNSET" in err and "needs-var" in err


def test_progress_reaches_tool_context(two: McpManager) -> None:
    events: list[str] = []
    res = run(by_name(two)["mcp__a__progress"], {"steps": 2}, ToolContext(progress=events.append))
    assert res.content == "done after 2 steps"
    assert events == ["mcp__a__progress: 1/2 step 1", "mcp__a__progress: 2/2 step 2"]


def test_is_error_result(two: McpManager) -> None:
    res = run(by_name(two)["mcp__a__fail"], {})
    assert res.is_error and "fail" in res.content
    bad = by_name(two)["mcp__a__echo"].execute("not json", ToolContext())
    assert bad.is_error and "not valid JSON" in bad.content


def test_capability_frontend_filter_and_counts(two: McpManager) -> None:
    def read_only(tool_id: str, spec: dict[str, object]) -> str | None:
        hints = spec.get("annotations") or {}
        return None if isinstance(hints, dict) and hints.get("readOnlyHint") else "not read-only"

    planner = two.capability_tool(allow=read_only)
    listing = run(planner, {"action": "list", "server": "a"}).content
    assert "- echo" in listing and "- add" not in listing
    refused = run(
        planner, {"action": "call", "server": "a", "tool": "add", "arguments": {"a": 1, "b": 2}}
    )
    assert refused.is_error and "refused mcp__a__add: not read-only" in refused.content
    assert (
        run(
            planner, {"action": "call", "server": "a", "tool": "echo", "arguments": {"text": "r"}}
        ).content
        == "echo: r"
    )
    counts = {s.name: (len(s.tools), s.prompts, s.resources) for s in two.status(counts=True)}
    assert counts["a"] == (8, 1, 1)
