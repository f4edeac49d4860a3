"""MCP prompts and resources of a server written by others (npm server-everything)
through the command layer: ``/mcp__everything__…`` and ``@everything:demo://…``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer
from mcp_servers import EVERYTHING_JS, need_npm, node

from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.command.refs import complete_reference, expand_references

pytestmark = pytest.mark.interop

DOC = "demo://resource/static/document/architecture.md"


def test_everything_prompts_and_resources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe, script = node(), need_npm(EVERYTHING_JS)
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeServer("openai", []) as fake:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{fake.url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n\n'
            f'[[mcp.servers]]\nname = "everything"\ncommand = {json.dumps(exe)}\n'
            f'args = [{json.dumps(script)}, "stdio"]\nstartup_timeout_seconds = 30\n'
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            rt.mcp.wait_ready(30)
            reg = build_commands(rt)
            reg.refresh()  # the server may have come up after the 3 s start wait
            names = dict(reg.names())
            assert "/mcp__everything__simple-prompt" in names
            args_prompt = reg.get("mcp__everything__args-prompt")
            assert args_prompt is not None and args_prompt.argument_hint == "<city> [state]"
            simple = reg.run("/mcp__everything__simple-prompt")
            assert simple.prompt and "simple prompt" in simple.prompt.lower()
            args = reg.run("/mcp__everything__args-prompt Paris state=Texas")
            assert args.prompt and "Paris" in args.prompt and "Texas" in args.prompt
            assert reg.run("/mcp__everything__args-prompt").error  # city is required
            listing = reg.run("/mcp").text
            assert "everything" in listing and "ready" in listing and "resources" in listing

            host = reg.host
            out, notes = expand_references(
                f"explain @everything:{DOC}", workspace=ws, read_resource=host.read_resource
            )
            assert notes == [] and out.startswith(f'<resource ref="everything:{DOC}">')
            assert "Architecture" in out
            found = complete_reference("@everything:demo://resource/static/document/arch",
                                       workspace=ws, resources=host.mcp_resources())  # fmt: skip
            assert [c.text for c in found] == [f"@everything:{DOC}"]
        finally:
            rt.close()
        assert fake.requests == []
