"""The composition root: one call builds a ready runtime from typed options.

Real parts: the loopback fake provider, real sessions under the per-test home.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeServer, Turn

from reasonix.agent.events import Done, TextDelta
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.errors import ConfigError, UsageError


def _project(ws: Path, url: str) -> None:
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model", "other-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _turn(rt: object, text: str) -> list[object]:
    return list(rt.runner.run(text, Cancel()))  # type: ignore[attr-defined]


def test_one_call_gives_a_runtime_that_answers(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("hello there")]) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            events = _turn(rt, "hi")
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello there"
            assert isinstance(events[-1], Done)
            assert rt.resolved.ref == "fake/fake-model" and not rt.interactive
            assert rt.gate.headless and rt.mode == "ask"
            assert {"read_file", "memory", "use_capability"} <= set(rt.tool_names())
        finally:
            rt.close()


def test_continue_resumes_the_same_session(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        _project(ws, srv.url)
        first = build_runtime(RuntimeOptions(workspace=ws))
        sid = first.session.id
        _turn(first, "first question")
        first.close()
        again = build_runtime(RuntimeOptions(workspace=ws, continue_latest=True))
        try:
            assert again.resumed and again.session.id == sid
            _turn(again, "second question")
            sent = [m["content"] for m in srv.requests[1].json["messages"] if m["role"] == "user"]
            assert any("first question" in c for c in sent)
        finally:
            again.close()


def test_switch_model_mode_effort_and_new_session(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("a"), Turn.text_only("b")]) as srv:
        _project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            assert not rt.gate.headless
            _turn(rt, "q1")
            sid = rt.session.id
            assert rt.switch_model("fake/other-model").ref == "fake/other-model"
            assert rt.set_mode("auto") == "auto" and rt.mode == "auto"
            rt.set_effort("high")
            _turn(rt, "q2")
            assert srv.requests[1].json["model"] == "other-model"
            assert rt.session.id == sid  # the session continues across a model switch
            assert len(rt.telemetry.per_request) == 2  # the cost keeps adding up
            rt.new_session()
            assert rt.session.id != sid and not rt.resumed
            rt.resume(Path(rt.session.path).with_name(f"{sid}.jsonl"))
            assert rt.session.id == sid and rt.resumed
        finally:
            rt.close()


@pytest.mark.parametrize(
    ("opts", "needle"),
    [
        (RuntimeOptions(permission_mode="sideways"), "unknown permission mode"),
        (RuntimeOptions(ablate="planner,nonsense"), "unknown arm"),
        (RuntimeOptions(continue_latest=True), "no sessions yet"),
        (RuntimeOptions(copy=True), "--copy needs"),
        (RuntimeOptions(add_dirs=["missing-dir"]), "not a directory"),
    ],
)
def test_bad_options_are_usage_errors(ws: Path, opts: RuntimeOptions, needle: str) -> None:
    _project(ws, "http://127.0.0.1:9")
    opts.workspace = ws
    with pytest.raises(UsageError, match=needle):
        build_runtime(opts)


def test_a_missing_workspace_and_a_bad_model_are_reported(ws: Path) -> None:
    with pytest.raises(UsageError, match="not a directory"):
        build_runtime(RuntimeOptions(workspace=ws / "nope"))
    _project(ws, "http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="unknown model"):
        build_runtime(RuntimeOptions(workspace=ws, model="nosuch/thing/x y"))


def test_frontend_mcp_servers_and_ports_reach_the_runtime(ws: Path) -> None:
    """RuntimeOptions.mcp_servers start like configured servers; ports reach the tools."""
    import sys

    from reasonix.config.model import McpServerConfig
    from reasonix.tool.ports import ToolPorts

    root = str(Path(__file__).resolve().parents[2])
    mine = McpServerConfig("example", "stdio", sys.executable, ["-m", "reasonix", "mcp",
                           "example-server"], {"PYTHONPATH": root}, source="acp")  # fmt: skip
    ports = ToolPorts(on_change=lambda call_id, change: None)
    with FakeServer("openai", []) as srv:
        _project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:  # a configured server of the same name loses
            fh.write('[[mcp.servers]]\nname = "example"\ncommand = "/nonexistent/server"\n')
        rt = build_runtime(RuntimeOptions(workspace=ws, mcp_servers=[mine], ports=ports))
        try:
            assert {"mcp__example__echo", "mcp__example__wordcount"} <= set(rt.tool_names())
            assert [s.command for s in rt.config.mcp_servers if s.name == "example"] == [
                sys.executable]  # fmt: skip
            assert rt.tool_ctx.ports is ports
        finally:
            rt.close()


def test_a_bad_subagent_limit_stops_the_build_naming_its_file(ws: Path) -> None:
    """The scheduler's limits are checked at start (the scheduler itself is made when a
    sub-agent is first spawned): the error names the file and the key."""
    _project(ws, "http://127.0.0.1:9")
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write("[agent]\nmax_subagent_concurrency = 2\nmax_parallel_writers = 3\n")
    with pytest.raises(ConfigError) as info:
        build_runtime(RuntimeOptions(workspace=ws))
    assert info.value.key == "agent.max_parallel_writers"
    assert info.value.file is not None and info.value.file.endswith("reasonix.toml")
