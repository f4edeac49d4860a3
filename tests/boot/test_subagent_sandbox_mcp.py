"""SUB-14…16, SUB-26, PERM-16: bash rebound to the claim (real bubblewrap) and MCP only
through the child's strict ``use_capability`` (a real stdio MCP server)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from subagent_kit import call, calls, project, run, tool_names
from subagent_kit import tool_results as results

from reasonix.boot import RuntimeOptions, build_runtime

SERVER = Path(__file__).resolve().parent / "servers" / "sub_mcp_server.py"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    (d / "src").mkdir(parents=True)
    return d


def _bwrap() -> None:
    exe = shutil.which("bwrap")
    if exe is None:
        pytest.skip("MISSING bwrap: apt-get install bubblewrap")
    probe = subprocess.run([exe, "--ro-bind", "/", "/", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"MISSING a working bwrap here: {probe.stderr.decode()[:200]}")


def test_bash_stays_only_rebound_to_the_claim(ws: Path) -> None:
    _bwrap()
    command = "echo in > src/in.txt; echo out > top.txt; echo finished"
    script = [
        calls(call("task", prompt="run it", write_paths=["src"])),
        calls(call("bash", command=command)),
        Turn.text_only("ran"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url}, extra='[sandbox]\nbash = "auto"\n')
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "go")
        finally:
            rt.close()
        child = srv.requests[1]
        receipts = results(srv.requests[3])[-1]
    assert "bash" in tool_names(child)
    assert (ws / "src" / "in.txt").read_text() == "in\n"
    assert not (ws / "top.txt").exists()  # the workspace outside the claim is read-only
    assert "Read-only file system" in results(srv.requests[2])[-1]
    assert f"- ran: `{command}` → exit 0" in receipts


def test_without_an_os_sandbox_a_claimed_child_loses_bash(ws: Path) -> None:
    script = [
        calls(call("task", prompt="a", write_paths=["src"])),
        Turn.text_only("a"),
        calls(call("task", prompt="b")),  # no claim: the whole workspace keeps bash
        Turn.text_only("b"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url}, extra='[sandbox]\nbash = "off"\n')
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "go")
        finally:
            rt.close()
        claimed, whole = srv.requests[1], srv.requests[3]
        receipts = results(srv.requests[2])[-1]
    assert "bash" not in tool_names(claimed) and "bash" in tool_names(whole)
    assert "- tools removed: bash: the OS sandbox for bash is off" in receipts
    assert "kill_shell" not in tool_names(claimed)  # a writer the host cannot scope


def _mcp(ws: Path, url: str, log: Path) -> None:
    extra = (
        '[sandbox]\nbash = "off"\n[[mcp.servers]]\nname = "sub"\n'
        f'command = "{sys.executable}"\nargs = ["{SERVER}"]\n'
        f'env = {{ SUB_MCP_LOG = "{log}" }}\n'
    )
    project(ws, {"p": url}, extra=extra)


def _use(tool: str) -> object:
    return call("use_capability", action="call", server="sub", tool=tool, arguments={})


def test_children_reach_mcp_only_through_a_strict_frontend(ws: Path, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    script = [
        calls(call("read_only_task", prompt="peek")),
        calls(_use("peek"), _use("poke"), _use("trap")),  # type: ignore[arg-type]
        Turn.text_only("peeked"),
        calls(call("task", prompt="claimed", write_paths=["src"])),
        calls(_use("peek"), _use("poke")),  # type: ignore[arg-type]
        Turn.text_only("claimed done"),
        calls(call("task", prompt="whole workspace")),
        calls(_use("poke")),  # type: ignore[arg-type]
        Turn.text_only("poked"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        _mcp(ws, srv.url, log)
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "go")
        finally:
            rt.close()
        ro, claimed, whole = srv.requests[1], srv.requests[4], srv.requests[7]
        ro_results, claimed_results = results(srv.requests[2]), results(srv.requests[5])
        whole_results = results(srv.requests[8])
    for child in (ro, claimed, whole):
        assert not any(n.startswith("mcp__") for n in tool_names(child))  # only the frontend
        assert "use_capability" in tool_names(child)
    started = [line for line in log.read_text().splitlines() if line.startswith("started")]
    pid = started[0].split()[1]
    assert len(started) == 1  # SUB-26: one shared process for the parent and every child
    assert ro_results[0] == f"peek from pid {pid}" and claimed_results[0] == ro_results[0]
    assert "refused" in ro_results[1] and "proven read-only" in ro_results[1]
    assert "refused" in ro_results[2]  # PERM-16: readOnlyHint with destructiveHint
    assert "refused" in claimed_results[1]
    assert whole_results[0] == f"poke from pid {pid}"  # an unclaimed writer is not strict
    calls_made = [line for line in log.read_text().splitlines() if line.startswith("call")]
    assert calls_made == ["call peek", "call peek", "call poke"]


def test_a_strict_child_never_restarts_a_dead_server(ws: Path, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    script = [calls(call("read_only_task", prompt="peek")), calls(_use("peek")),  # type: ignore[arg-type]
              Turn.text_only("could not"), Turn.text_only("ok")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        _mcp(ws, srv.url, log)
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            pid = int(log.read_text().split()[1])
            os.kill(pid, signal.SIGKILL)
            client = rt.mcp.runtimes["sub"].client
            deadline = time.monotonic() + 10
            while client.alive and time.monotonic() < deadline:
                time.sleep(0.05)
            run(rt, "go")
        finally:
            rt.close()
        refusal = results(srv.requests[2])[-1]
    assert "is not running" in refusal and "starts no server" in refusal
    assert sum(line.startswith("started") for line in log.read_text().splitlines()) == 1
