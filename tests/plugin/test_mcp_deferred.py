"""Issue 37: MCP tools on demand behind ``use_capability``'s search, servers started lazily.

Real parts: ten loopback stdio MCP servers (tests/fakes/mcp_stdio.py, 300 tools
in all), the loopback OpenAI-format provider (its recorded request bytes), the
composition root, real catalogue files in the per-test state dir.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Fault, Turn
from fakes.mcp_stdio import SERVERS, server_toml, tool_specs

from reasonix.agent.events import Done
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.plugins import bm25_ranker
from reasonix.cancel import Cancel
from reasonix.config import load
from reasonix.config.model import McpServerConfig
from reasonix.errors import ConfigError
from reasonix.plugin.mcp.catalog import (
    Catalogue,
    ToolSearch,
    catalogue_key,
    load_catalogue,
    save_catalogue,
    should_defer,
)

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "mcp_stdio.py"

# -- the decision ------------------------------------------------------------------


def _spec(name: str, desc: str = "d") -> dict[str, object]:
    return {"name": name, "description": desc, "inputSchema": {"type": "object"}}


def test_auto_defers_above_forty_tools_or_a_tenth_of_the_window() -> None:
    few = [_spec(f"t{i}") for i in range(40)]
    assert not should_defer("auto", few, 0)
    assert should_defer("auto", [*few, _spec("one_more")], 0)
    big = [_spec("t", "x" * 4000)]  # ~1000 tokens at 4 bytes a token
    assert should_defer("auto", big, 9_000)
    assert not should_defer("auto", big, 11_000)
    assert should_defer("always", [], 0) and not should_defer("never", few * 5, 100)


# -- the catalogue cache -----------------------------------------------------------


def test_catalogue_round_trips_and_is_keyed_by_the_declaration(tmp_path: Path) -> None:
    server = McpServerConfig("w", command="python3", args=["a.py"])
    save_catalogue(tmp_path, server, Catalogue([_spec("x")], prompts=True))
    got = load_catalogue(tmp_path, server)
    assert got is not None and got.tools == [_spec("x")] and got.prompts and not got.resources
    other = McpServerConfig("w", command="python3", args=["b.py"])
    assert catalogue_key(other) != catalogue_key(server)
    assert load_catalogue(tmp_path, other) is None
    (tmp_path / f"{catalogue_key(server)}.json").write_text("{not json")
    assert load_catalogue(tmp_path, server) is None


# -- the search ----------------------------------------------------------------------


def _catalogues() -> list[tuple[str, list[dict[str, object]]]]:
    return [(name, tool_specs(name, 30)) for name in SERVERS]


def test_bm25_search_finds_tools_by_name_description_and_parameter() -> None:
    search = ToolSearch(bm25_ranker)
    cats = _catalogues()
    (server, spec), *_ = search.search(cats, "weather forecast", 5)
    assert server == "weather" and "forecast" in str(spec["name"])
    # a parameter name alone finds its tools
    hits = search.search(cats, "compose_stack_id", 3)
    assert hits and all(s == "docker" and "compose_stack" in str(t["name"]) for s, t in hits)
    assert search.search(cats, "refund a payment", 1)[0][0] == "billing"
    assert search.search(cats, "", 5) == []


# -- config ------------------------------------------------------------------------------


def test_config_reads_defer_tools_and_always_load(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[mcp]\ndefer_tools = "always"\n[[mcp.servers]]\nname = "a"\ncommand = "x"\n'
        "always_load = true\n"
    )
    cfg = load(tmp_path, trust=True)
    assert cfg.mcp.defer_tools == "always"
    assert [s.always_load for s in cfg.mcp_servers] == [True]
    (tmp_path / "reasonix.toml").write_text('[mcp]\ndefer_tools = "sometimes"\n')
    with pytest.raises(ConfigError, match="auto, always, never"):
        load(tmp_path, trust=True)


# -- end to end through the composition root ---------------------------------------------


def _project(ws: Path, url: str, pid_dir: Path | None, extra: str = "") -> None:
    """The provider, ``extra`` (an [mcp] table or one server that wins by name), the servers."""
    text = (
        'default_model = "fake/fake-model"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n' + extra
    )
    if pid_dir is not None:
        for name in SERVERS:
            if f'name = "{name}"' in extra:
                continue
            text += server_toml(name, 30, "--pid-dir", str(pid_dir))
    (ws / "reasonix.toml").write_text(text)


def _session(
    ws: Path, script: list[Turn | Fault], pid_dir: Path | None, extra: str = ""
) -> list[bytes]:
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url, pid_dir, extra)
        rt = build_runtime(RuntimeOptions(workspace=ws, permission_mode="bypassPermissions"))
        try:
            events = list(rt.runner.run("find the weather forecast tool", Cancel()))
        finally:
            rt.close()
        assert isinstance(events[-1], Done), events[-1]
        return [r.body for r in srv.requests]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("REASONIX_TRUST_WORKSPACE", "1")  # the test wrote the workspace
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _tool_names(body: bytes) -> set[str]:
    return {t["function"]["name"] for t in json.loads(body)["tools"]}


def _tool_results(body: bytes) -> list[str]:
    return [m["content"] for m in json.loads(body)["messages"] if m["role"] == "tool"]


def test_ten_servers_300_tools_first_request_small_search_call_lazy(
    ws: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    (baseline,) = _session(ws, [Turn.text_only("ok")], None)
    # first-ever use: every server starts once to learn its catalogue, tools deferred anyway
    (first,) = _session(ws, [Turn.text_only("ok")], pids)
    assert {p.name for p in pids.iterdir()} == {f"{n}.pid" for n in SERVERS}
    for p in pids.iterdir():
        p.unlink()
    search = '{"action": "search", "query": "weather forecast"}'
    call = '{"action": "call", "tool": "mcp__weather__get_forecast", "arguments": {"forecast_id": "f1"}}'  # noqa: E501
    script = [
        Turn.tools([("use_capability", search)]),
        Turn.tools([("use_capability", call)]),
        Turn.text_only("done"),
    ]
    bodies = _session(ws, script, pids)
    # the first request is at most 20 % larger than with no MCP server at all
    assert len(first) <= 1.2 * len(baseline), (len(first), len(baseline))
    assert len(bodies[0]) <= 1.2 * len(baseline), (len(bodies[0]), len(baseline))
    assert not any(n.startswith("mcp__") for n in _tool_names(bodies[0]))
    # the schema came back as a tool result; the tool list never changed
    found = _tool_results(bodies[1])[0]
    entries = [json.loads(line) for line in found.splitlines()[1:]]
    assert entries[0]["tool"] == "mcp__weather__get_forecast"
    assert "forecast_id" in entries[0]["input_schema"]["properties"]
    assert _tool_results(bodies[2])[1] == 'weather.get_forecast ok: {"forecast_id": "f1"}'
    assert all(_tool_names(b) == _tool_names(bodies[0]) for b in bodies)
    # every request extends the previous one: the tools and earlier messages are unchanged
    for before, after in itertools.pairwise(bodies):
        a, b = json.loads(before), json.loads(after)
        assert b["tools"] == a["tools"] and b["messages"][: len(a["messages"])] == a["messages"]
    # only the server whose tool was searched and called ever ran a process
    assert {p.name for p in pids.iterdir()} == {"weather.pid"}


def test_never_offers_every_tool_and_always_load_keeps_one_server_direct(
    ws: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    (never,) = _session(ws, [Turn.text_only("ok")], pids, '[mcp]\ndefer_tools = "never"\n')
    assert len([n for n in _tool_names(never) if n.startswith("mcp__")]) == 300
    extra = (
        '[[mcp.servers]]\nname = "mail"\nalways_load = true\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(FAKE), '--name', 'mail', '--tools', '30', '--pid-dir', str(pids)])}\n"  # noqa: E501
    )
    (mixed,) = _session(ws, [Turn.text_only("ok")], pids, extra)
    direct = {n for n in _tool_names(mixed) if n.startswith("mcp__")}
    assert len(direct) == 30 and all(n.startswith("mcp__mail__") for n in direct)


def test_a_call_by_exact_name_needs_no_search_and_starts_only_its_server(
    ws: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    _session(ws, [Turn.text_only("ok")], pids)  # learns the catalogues
    for p in pids.iterdir():
        p.unlink()
    call = '{"action": "call", "tool": "mcp__crm__create_deal", "arguments": {"deal_id": "d9"}}'
    bodies = _session(ws, [Turn.tools([("use_capability", call)]), Turn.text_only("ok")], pids)
    assert _tool_results(bodies[1]) == ['crm.create_deal ok: {"deal_id": "d9"}']
    assert {p.name for p in pids.iterdir()} == {"crm.pid"}


def test_a_stale_catalogue_starts_the_server_for_a_tool_it_does_not_list(tmp_path: Path) -> None:
    from reasonix.plugin.mcp import McpManager
    from reasonix.tool import ToolContext

    pids = tmp_path / "pids"
    args = [str(FAKE), "--name", "notes", "--tools", "30", "--pid-dir", str(pids)]
    server = McpServerConfig("notes", command=sys.executable, args=args)
    cats = tmp_path / "cats"
    save_catalogue(cats, server, Catalogue(tool_specs("notes", 1)))  # knows get_note only
    with McpManager([server], defer_tools="always", catalog_dir=cats, log_dir=tmp_path) as mgr:
        mgr.start()
        mgr.wait_ready(0.5)
        (proxy,) = mgr.tools()
        assert mgr.status()[0].state == "dormant" and not pids.exists()
        ctx = ToolContext(workspace=tmp_path)
        call = {"action": "call", "tool": "mcp__notes__list_notebook", "arguments": {}}
        result = proxy.execute(json.dumps(call), ctx)
    assert result.content == "notes.list_notebook ok: {}", result.content
    assert {p.name for p in pids.iterdir()} == {"notes.pid"}
    cached = load_catalogue(cats, server)
    assert cached is not None and len(cached.tools) == 30  # the start refreshed the cache


def test_a_search_waits_for_a_server_still_learning_its_tools(tmp_path: Path) -> None:
    from reasonix.plugin.mcp import McpManager
    from reasonix.tool import ToolContext

    args = [str(FAKE), "--name", "weather", "--tools", "30", "--delay", "1.5"]
    server = McpServerConfig("weather", command=sys.executable, args=args)
    with McpManager(
        [server], defer_tools="always", catalog_dir=tmp_path / "cats", log_dir=tmp_path
    ) as mgr:
        mgr.start()
        mgr.wait_ready(0.2)  # the first-ever start is still under way
        (proxy,) = mgr.tools()
        assert mgr.status()[0].state == "starting"
        query = {"action": "search", "query": "weather forecast"}
        result = proxy.execute(json.dumps(query), ToolContext(workspace=tmp_path))
    assert "mcp__weather__get_forecast" in result.content, result.content


def test_a_server_offering_prompts_or_resources_starts_at_once(tmp_path: Path) -> None:
    from reasonix.plugin.mcp import McpManager

    pids = tmp_path / "pids"
    cats = tmp_path / "cats"
    servers = []
    for name, prompts in (("notes", True), ("music", False)):
        args = [str(FAKE), "--name", name, "--tools", "3", "--pid-dir", str(pids)]
        server = McpServerConfig(name, command=sys.executable, args=args)
        save_catalogue(cats, server, Catalogue(tool_specs(name, 3), prompts=prompts))
        servers.append(server)
    with McpManager(servers, defer_tools="always", catalog_dir=cats, log_dir=tmp_path) as mgr:
        mgr.start()
        assert mgr.wait_ready(10.0) == ["notes"]
        assert [s.state for s in mgr.status()] == ["ready", "dormant"]
    assert {p.name for p in pids.iterdir()} == {"notes.pid"}


def test_a_proxy_call_is_judged_as_a_direct_call_of_its_target(ws: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    _session(ws, [Turn.text_only("ok")], pids)  # learns the catalogues

    def call(tool: str) -> tuple[str, str]:
        args = {"action": "call", "tool": tool, "arguments": {"forecast_id": "f"}}
        return ("use_capability", json.dumps(args))

    script = [
        Turn.tools([call("mcp__weather__get_forecast")]),  # readOnlyHint: a reader
        Turn.tools([call("mcp__weather__delete_forecast")]),  # a deny rule names it
        Turn.tools([call("mcp__weather__update_forecast")]),  # a writer: headless Ask fails
        Turn.text_only("done"),
    ]
    with FakeServer("openai", script) as srv:
        deny = '[permissions]\ndeny = ["mcp__weather__delete_forecast"]\n'
        _project(ws, srv.url, pids, deny)
        rt = build_runtime(RuntimeOptions(workspace=ws))  # headless, mode "ask"
        try:
            list(rt.runner.run("go", Cancel()))
        finally:
            rt.close()
        results = _tool_results(srv.requests[3].body)
    assert results[0] == 'weather.get_forecast ok: {"forecast_id": "f"}'
    assert "deny rule 'mcp__weather__delete_forecast'" in results[1], results[1]
    assert results[2].startswith("blocked:") and "mcp__weather__update_forecast" in results[2]
