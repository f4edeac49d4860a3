"""``/mcp disable|enable NAME`` (issue 37, item 2): a server stopped and restored mid-session.

Real parts: loopback stdio MCP servers (tests/fakes/mcp_stdio.py) with their
pid files, the manager and its ``use_capability`` proxy, the composition root
with the loopback OpenAI-format provider, the slash-command registry.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from fakes.mcp_stdio import tool_specs

from reasonix.agent.prompt import mcp_update, typed_text
from reasonix.cancel import Cancel
from reasonix.config.model import McpServerConfig
from reasonix.plugin.mcp import McpManager
from reasonix.plugin.mcp.catalog import Catalogue, save_catalogue
from reasonix.tool import ToolContext

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "mcp_stdio.py"
DISABLED = "MCP server weather is disabled (/mcp enable weather)"


def _server(name: str, pids: Path, tools: int = 3) -> McpServerConfig:
    args = [str(FAKE), "--name", name, "--tools", str(tools), "--pid-dir", str(pids)]
    return McpServerConfig(name, command=sys.executable, args=args)


def _gone(pid: int, within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # reap it if it is our child (a zombie still answers kill 0)
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


def test_disable_stops_the_process_refuses_calls_and_enable_restores(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    with McpManager(
        [_server("weather", pids)], catalog_dir=tmp_path / "cats", log_dir=tmp_path
    ) as mgr:
        mgr.start()
        assert mgr.wait_ready(10.0) == ["weather"]
        frozen = mgr.tools()
        direct, proxy = frozen[0], frozen[-1]
        assert direct.name == "mcp__weather__get_forecast"
        ctx = ToolContext(workspace=tmp_path)
        args = '{"forecast_id": "f1"}'
        assert direct.execute(args, ctx).content == 'weather.get_forecast ok: {"forecast_id": "f1"}'
        pid = int((pids / "weather.pid").read_text())
        (pids / "weather.pid").unlink()

        assert mgr.disable("weather") and not mgr.disable("weather")
        assert mgr.disabled() == ["weather"] and mgr.status()[0].state == "disabled"
        assert _gone(pid), "the server's process still runs"
        refused = direct.execute(args, ctx)
        assert refused.is_error and refused.content == DISABLED
        call = {"action": "call", "tool": "mcp__weather__get_forecast", "arguments": {}}
        via_proxy = proxy.execute(json.dumps(call), ctx)
        assert via_proxy.is_error and via_proxy.content == DISABLED
        listing = proxy.execute('{"action": "list"}', ctx).content
        assert "weather [disabled]" in listing and "get_forecast" not in listing
        assert mgr.tools() == frozen  # the tool list is frozen: nothing changes
        assert not pids.exists() or not any(pids.iterdir())  # nothing was started again

        assert mgr.enable("weather") and not mgr.enable("weather")
        assert mgr.wait_ready(10.0) == ["weather"]  # not deferred: it starts at once
        assert direct.execute(args, ctx).content == 'weather.get_forecast ok: {"forecast_id": "f1"}'
        assert (pids / "weather.pid").exists()


def test_a_disabled_server_drops_out_of_search_and_comes_back_dormant(tmp_path: Path) -> None:
    pids, cats = tmp_path / "pids", tmp_path / "cats"
    servers = [_server("weather", pids, 30), _server("billing", pids, 30)]
    for server, name in zip(servers, ("weather", "billing"), strict=True):
        save_catalogue(cats, server, Catalogue(tool_specs(name, 30)))
    with McpManager(servers, defer_tools="always", catalog_dir=cats, log_dir=tmp_path) as mgr:
        mgr.start()
        mgr.wait_ready(0.5)
        (proxy,) = mgr.tools()
        ctx = ToolContext(workspace=tmp_path)
        search = json.dumps({"action": "search", "query": "weather forecast"})
        assert "mcp__weather__get_forecast" in proxy.execute(search, ctx).content
        mgr.disable("weather")
        hits = proxy.execute(search, ctx).content
        assert hits == "no MCP tool matches 'weather forecast'; try other words or list", hits
        billing = json.dumps({"action": "search", "query": "create a refund"})
        assert "mcp__billing__create_refund" in proxy.execute(billing, ctx).content
        inspect = {"action": "inspect", "server": "weather", "tool": "get_forecast"}
        assert proxy.execute(json.dumps(inspect), ctx).content == DISABLED
        mgr.enable("weather")
        assert mgr.status()[0].state == "dormant"  # deferred: it starts when a call needs it
        assert "mcp__weather__get_forecast" in proxy.execute(search, ctx).content


def test_the_note_says_what_changed_and_the_display_drops_it() -> None:
    note = mcp_update(["weather"], ["billing"])
    assert note.startswith("<mcp-servers>\n") and note.endswith("</mcp-servers>")
    assert "disabled MCP server weather" in note and "mcp__weather__*" in note
    assert "enabled MCP server billing again" in note
    assert mcp_update([], []) == ""
    assert typed_text(note + "\n\nhello") == "hello"


# -- through the composition root and the command registry --------------------------------


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("REASONIX_TRUST_WORKSPACE", "1")  # the test wrote the workspace
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "rx"))
    d = tmp_path / "ws"
    d.mkdir()
    return d


def test_the_command_notes_only_the_net_change_at_the_next_user_message(
    ws: Path, tmp_path: Path
) -> None:
    from reasonix.boot import RuntimeOptions, build_runtime
    from reasonix.boot.commands import build_commands

    pids = tmp_path / "pids"
    script = [Turn.text_only("one"), Turn.text_only("two"), Turn.text_only("three")]
    with FakeServer("openai", script) as srv:
        args = [str(FAKE), "--name", "weather", "--tools", "3", "--pid-dir", str(pids)]
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
            f'[[mcp.servers]]\nname = "weather"\ncommand = {json.dumps(sys.executable)}\n'
            f"args = {json.dumps(args)}\n"
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, permission_mode="bypassPermissions"))
        try:
            reg = build_commands(rt)
            complete = next(c for c in reg.commands() if c.name == "mcp").complete_args
            assert complete is not None
            assert [c.text for c in complete("dis")] == ["disable "]
            assert [c.text for c in complete("enable w")] == ["enable weather"]
            list(rt.runner.run("first", Cancel()))
            unknown = reg.run("/mcp disable nope")
            assert (
                unknown.error and "no MCP server named 'nope' (configured: weather)" in unknown.text
            )
            assert "disabled" in reg.run("/mcp disable weather").text
            assert "<mcp-servers>" in rt.agent.turn_prefix
            assert "already enabled" not in reg.run("/mcp enable weather").text
            assert rt.agent.turn_prefix == ""  # undone before any message: no note
            reg.run("/mcp disable weather")
            list(rt.runner.run("second", Cancel()))
            reg.run("/mcp enable weather")
            list(rt.runner.run("third", Cancel()))
        finally:
            rt.close()
        users = [
            [m["content"] for m in r.json["messages"] if m["role"] == "user"][-1]
            for r in srv.requests
        ]
    assert users[0].endswith("first") and "<mcp-servers>" not in users[0]
    assert users[1] == mcp_update(["weather"], []) + "\n\nsecond"
    assert users[2] == mcp_update([], ["weather"]) + "\n\nthird"


def test_a_change_before_the_first_message_reaches_it_after_the_instructions(
    ws: Path, tmp_path: Path
) -> None:
    """The first user turn carries the instruction files; a /mcp change made before it is
    told there too (it used to be dropped, and the model learnt it from a refusal)."""
    from reasonix.boot import RuntimeOptions, build_runtime
    from reasonix.boot.commands import build_commands

    pids = tmp_path / "pids"
    with FakeServer("openai", [Turn.text_only("one")]) as srv:
        args = [str(FAKE), "--name", "weather", "--tools", "3", "--pid-dir", str(pids)]
        (ws / "AGENTS.md").write_text("Use tabs.\n")
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
            f'[[mcp.servers]]\nname = "weather"\ncommand = {json.dumps(sys.executable)}\n'
            f"args = {json.dumps(args)}\n"
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, permission_mode="bypassPermissions"))
        try:
            reg = build_commands(rt)
            reg.run("/mcp disable weather")
            list(rt.runner.run("first", Cancel()))
        finally:
            rt.close()
        (first,) = [m["content"] for m in srv.requests[0].json["messages"] if m["role"] == "user"]
    assert "Use tabs." in first
    assert first.endswith(mcp_update(["weather"], []) + "\n\nfirst")
