"""Issue 12 item 4: no child we start outlives us.

Children (MCP stdio servers, bash commands) sit in their own process group,
killed on close/cancel/timeout — a server still starting included — and on
Linux carry the parent-death signal, so even a SIGKILL of Reasonix takes them
(and, for the group kill, their grandchildren) down. The signal is armed from
a long-lived spawner thread: a child started from a short-lived thread (an MCP
start thread, a tool worker) must survive that thread's end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

from reasonix.config.model import McpServerConfig
from reasonix.plugin.mcp import McpManager

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
pytestmark = pytest.mark.timeout(90)

# A stdio "server" that never answers: it records its pid and a grandchild's, then sleeps.
MUTE = textwrap.dedent(
    """
    import os, subprocess, sys, time
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(sys.argv[1], "a") as fh:
        fh.write(f"{os.getpid()} {kid.pid}\\n")
    time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _gone(pids: list[int], within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _pids(path: Path, within: float = 15.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if path.exists() and path.read_text().endswith("\n"):
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def _reap(pids: list[int]) -> None:
    for pid in pids:  # only our own children's pids, never by name
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _mute(tmp_path: Path) -> tuple[Path, Path]:
    server, pids = tmp_path / "mute.py", tmp_path / "pids"
    server.write_text(MUTE)
    return server, pids


@pytest.mark.parametrize("after", [0.0, 0.5])
def test_closing_a_manager_kills_a_server_still_starting(tmp_path: Path, after: float) -> None:
    server, pid_file = _mute(tmp_path)
    cfg = McpServerConfig("mute", command=sys.executable, args=[str(server), str(pid_file)])
    mgr = McpManager([cfg], workspace=tmp_path, log_dir=tmp_path / "logs", startup_timeout=60)
    mgr.start()
    pids = _pids(pid_file)
    time.sleep(after)
    assert mgr.status()[0].state == "starting"
    mgr.close()
    try:
        assert _gone(pids), "server or its grandchild survived close()"
    finally:
        _reap(pids)


def test_a_startup_timeout_kills_the_server_and_its_group(tmp_path: Path) -> None:
    server, pid_file = _mute(tmp_path)
    cfg = McpServerConfig("mute", command=sys.executable, args=[str(server), str(pid_file)])
    with McpManager(
        [cfg], workspace=tmp_path, log_dir=tmp_path / "logs", startup_timeout=1.0
    ) as mgr:
        mgr.start()
        pids = _pids(pid_file)
        mgr.wait_ready(10)
        status = mgr.status()[0]
        assert status.state == "failed"
        assert status.error == "no answer within the startup timeout (1s)"
        try:
            assert _gone(pids), "a timed-out server was left running"
        finally:
            _reap(pids)


SPAWN_FROM_A_THREAD = textwrap.dedent(
    """
    import sys, threading, time
    from reasonix.tool.children import popen
    box = []
    t = threading.Thread(target=lambda: box.append(popen(["sleep", "600"])))
    t.start(); t.join()
    print(box[0].pid, flush=True)
    time.sleep(600)
    """
)


@linux_only
def test_a_child_outlives_its_spawning_thread_but_not_a_sigkill() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    parent = subprocess.Popen([sys.executable, "-c", SPAWN_FROM_A_THREAD], env=env,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        time.sleep(0.5)
        assert _alive(child), "the child died with the thread that started it"
        parent.kill()
        parent.wait()
        assert _gone([child]), "the child outlived a SIGKILL of its parent"
    finally:
        _reap([child, parent.pid])
        parent.stdout.close()


def _project(tmp_path: Path, url: str, extra: str = "") -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n' + extra
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), REASONIX_HOME=str(tmp_path / "rx"),
               FAKE_PROVIDER_KEY="k")  # fmt: skip
    return ws, env


def _start_run(ws: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "reasonix", "run", "--json", "go"]
    return subprocess.Popen(
        argv, cwd=ws, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@linux_only
def test_sigkill_of_a_run_takes_down_a_starting_mcp_server(tmp_path: Path) -> None:
    server, pid_file = _mute(tmp_path)
    extra = (
        f'\n[[mcp.servers]]\nname = "mute"\ntype = "stdio"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(server))}, {json.dumps(str(pid_file))}]\n"
    )
    ws, env = _project(tmp_path, "http://127.0.0.1:9", extra)
    run = _start_run(ws, env)
    pids = _pids(pid_file)
    try:
        run.kill()
        run.wait()
        assert _gone(pids), "the MCP server (or its grandchild) outlived a SIGKILLed run"
    finally:
        _reap(pids)


def _processes_with(arg: bytes) -> list[int]:
    """Pids whose command line has ``arg`` as one argument (found in /proc: bash may run
    in a PID namespace, where its own ``$$`` means nothing out here)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if arg in fh.read().split(b"\0") and _alive(int(entry)):
                        found.append(int(entry))
            except OSError:
                continue
    return found


@linux_only
@pytest.mark.parametrize("sandbox", ["off", "auto"])  # bwrap has --die-with-parent; off has not
def test_sigkill_of_a_run_takes_down_its_bash_command(tmp_path: Path, sandbox: str) -> None:
    token = f"600.{os.getpid()}{time.monotonic_ns() % 100000}"  # this test's sleep, no other
    # A grandchild in the background too: the group kill must reach it.
    command = f"sleep {token} & sleep {token}; echo not reached"
    script = [Turn.tools([ToolSpec("bash", json.dumps({"command": command}))]),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        extra = f'\n[permissions]\nmode = "bypassPermissions"\n[sandbox]\nbash = "{sandbox}"\n'
        ws, env = _project(tmp_path, srv.url, extra)
        run = _start_run(ws, env)
        end = time.monotonic() + 30
        while len(_processes_with(token.encode())) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        pids = _processes_with(token.encode())
        assert pids, "the bash command never ran"
        try:
            run.kill()
            run.wait()
            assert _gone(pids), "the bash command outlived a SIGKILLed run"
        finally:
            _reap(pids)
