"""Every built-in over a real runtime: none of them sends a request (CMD-1).

Real parts: ``build_runtime`` against the loopback fake provider, real
sessions and memory under the per-test home; the request count of the fake
server is the proof that a command never reached the model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Turn

from reasonix.agent.events import Done
from reasonix.agent.memory.catalog import Memory
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.cancel import Cancel
from reasonix.command.refs import complete_reference, expand_references


def project(ws: Path, url: str, window: int = 128000) -> None:
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        f'models = ["fake-model", "other-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        f"context_window = {window}\n"
        "[providers.prices.fake-model]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n"
    )


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))  # no real ~/.claude/commands
    d = tmp_path / "ws"
    d.mkdir()
    return d


def test_every_builtin_acts_locally_and_sends_nothing(ws: Path) -> None:
    with FakeServer("openai", [Turn.text_only("hello there")]) as srv:
        project(ws, srv.url)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            events = list(rt.runner.run("first question", Cancel()))
            assert isinstance(events[-1], Done)
            first = rt.session
            Memory.for_workspace(ws).store("project").create("the build uses make", type="project")
            reg = build_commands(rt)
            assert reg.notices == []

            help_text = reg.run("/help").text
            for name in ("/help", "/new", "/clear", "/compact", "/effort", "/model", "/mcp",
                         "/resume", "/memory", "/status", "/exit"):  # fmt: skip
                assert name in help_text
            assert "/quit" not in help_text  # an alias, accepted but not listed

            status = reg.run("/status").text
            assert "fake/fake-model" in status and first.id in status and "ask" in status
            assert "1 requests" in status and "context" in status and "/ 128,000" in status
            assert "$" in status  # the configured price gives a cost

            ask = reg.run("/effort high")  # a cache break: asked first, with its forecast
            assert "prompt tokens" in ask.confirm and ask.confirm_command == "/effort high --yes"
            assert rt.agent.effort == ""
            assert "high" in reg.run(ask.confirm_command).text and rt.agent.effort == "high"
            assert "effort: high" in reg.run("/effort").text
            assert reg.run("/effort ludicrous").error
            assert "default" in reg.run("/effort default").text and rt.agent.effort == ""

            picker = reg.run("/model")
            assert picker.picker_command == "/model"
            values = [i.value for i in picker.picker]
            assert "fake/fake-model" in values and "fake/other-model" in values
            ask = reg.run("/model fake/other-model")
            assert ask.confirm.endswith("Switch to fake/other-model?")
            assert "fake/other-model" in reg.run(ask.confirm_command).text
            assert rt.resolved.ref == "fake/other-model"
            assert "already in use" in reg.run("/model fake/other-model").text
            assert reg.run("/model nosuch/thing/at/all").error

            assert "the build uses make" in reg.run("/memory").text
            assert "no MCP servers" in reg.run("/mcp").text
            assert reg.run("/mcp auth nothing").error

            compact = reg.run("/compact")
            assert not compact.error and "summary" in compact.text  # too short to summarise

            new = reg.run("/new")
            assert rt.session.id in new.text and rt.session is not first
            assert first.path.exists()  # /new keeps the old transcript

            sessions = reg.run("/resume")
            assert sessions.picker_command == "/resume"
            assert [i.value for i in sessions.picker] == [first.id]  # not the one in use
            assert first.id in reg.run(f"/resume {first.id}").text
            assert rt.session.id == first.id
            assert reg.run(f"/resume {first.id}").error  # already the one in use

            ask = reg.run("/clear")
            assert ask.confirm and ask.confirm_command == "/clear --yes" and not ask.text
            assert first.path.exists()  # nothing happens before the confirmation
            cleared = reg.run(ask.confirm_command)
            assert not cleared.error and rt.session.id != first.id
            assert not first.path.exists()  # /clear does not save the discarded conversation
            assert "the build uses make" in reg.run("/memory list").text  # memory stays

            assert reg.run("/exit").exit and reg.run("/quit").exit
            assert reg.run("/nosuch").error and "unknown command" in reg.run("/nosuch").text
            assert len(srv.requests) == 1  # only the first question ever reached the model
        finally:
            rt.close()


def test_compact_with_a_focus_makes_only_the_summary_request(ws: Path) -> None:
    usage = {"input_tokens": 14000, "output_tokens": 5, "cache_read_tokens": 0,
             "cache_write_tokens": 0, "reasoning_tokens": 0}  # fmt: skip
    script = [
        Turn(text="noted the long text", usage=usage),
        Turn(text="short answer", usage=usage),
        Turn(text="SUMMARY of the conversation", usage=usage),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, window=40000)
        (ws / ".claude").mkdir()
        hook = {"matcher": "", "hooks": [{"type": "command", "command": "cat > precompact.json"}]}
        (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreCompact": [hook]}}))
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            list(rt.runner.run(" ".join(f"w{i}" for i in range(5000)), Cancel()))
            list(rt.runner.run("a short follow-up", Cancel()))
            reg = build_commands(rt)
            before = len(rt.telemetry.per_request)
            result = reg.run("/compact the database schema")
            assert not result.error and "compacted" in result.text, result.text
            assert len(srv.requests) == 3
            summary = srv.requests[2].json["messages"][-1]["content"]
            assert "focus on: the database schema" in summary
            assert all("/compact" not in str(r.json) for r in srv.requests)
            assert len(rt.telemetry.per_request) == before + 1  # the summary call is paid for
            told = json.loads((ws / "precompact.json").read_text())
            assert (told["trigger"], told["custom_instructions"]) == (
                "manual",
                "the database schema",
            )
        finally:
            rt.close()


def example_server(ws: Path) -> None:
    """Declare our own stdio MCP server (``reasonix mcp example-server``) for the project."""
    with (ws / "reasonix.toml").open("a") as fh:
        fh.write(
            f'\n[[mcp.servers]]\nname = "example"\ncommand = {json.dumps(sys.executable)}\n'
            'args = ["-m", "reasonix", "mcp", "example-server"]\n'
        )


def test_mcp_listing_prompts_and_resources_from_a_real_server(ws: Path) -> None:
    with FakeServer("openai", []) as srv:
        project(ws, srv.url)
        example_server(ws)
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            reg = build_commands(rt)
            listing = reg.run("/mcp").text
            assert "example" in listing and "ready" in listing
            assert "2 tools · 1 prompts · 1 resources" in listing
            assert "/mcp__example__explain" in reg.run("/help").text
            [(name, about)] = [n for n in reg.names() if n[0].startswith("/mcp__")]
            assert name == "/mcp__example__explain" and about.startswith("Ask for an explanation")
            [done] = reg.complete("/mcp__ex")
            assert done.text == "/mcp__example__explain"
            assert done.description.startswith("<topic> [level] — Ask for")
            assert [c.text for c in reg.complete("/mcp auth ex")] == ["/mcp auth example"]

            one = reg.run('/mcp__example__explain "prompt caching"')  # D24 quoting
            assert one.prompt == "Explain prompt caching to a beginner, in three short paragraphs."
            two = reg.run('/mcp__example__explain "tail calls" level=expert')
            assert two.prompt is not None and "tail calls to a expert" in two.prompt
            two = reg.run("/mcp__example__explain recursion expert")
            assert two.prompt is not None and "recursion to a expert" in two.prompt
            missing = reg.run("/mcp__example__explain")
            assert missing.error and "missing topic" in missing.text and "<topic>" in missing.text

            host = reg.host
            [res] = host.mcp_resources()
            assert (res["server"], res["uri"]) == ("example", "example://readme")
            assert "prompt explain" in host.read_resource("example", "example://readme")
            text = "see @example:example://readme and @example:example://gone"
            out, notes = expand_references(
                text, workspace=ws, forbid_read=(), read_resource=host.read_resource
            )
            assert out.startswith('<resource ref="example:example://readme">\nThe example server')
            assert out.endswith(f"</resource>\n\n{text}")  # REF-7: blocks first, then the text
            assert len(notes) == 1 and "example://gone" in notes[0]  # REF-5: a notice, no stop
            completions = complete_reference("@ex", workspace=ws, resources=host.mcp_resources())
            assert [c.text for c in completions] == ["@example:example://readme"]
            assert srv.requests == []  # listing and rendering prompts never asks the model
        finally:
            rt.close()
