"""``/mcp auth NAME`` in a live runtime (D12): authorise, then the failed server starts.

Real parts: the SDK-built OAuth authorization/resource server of the other
OAuth tests, a real runtime against the loopback fake provider (which must
see no request), and a scripted browser that follows the authorization URL.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer
from oauth_server.harness import Browser, running

from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import RuntimeCommandHost
from reasonix.command.registry import CommandRegistry

pytestmark = pytest.mark.interop


def test_slash_mcp_auth_authorises_and_restarts_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    ws = tmp_path / "ws"
    ws.mkdir()
    with running("--public") as srv, FakeServer("openai", []) as fake:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{fake.url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n\n'
            f'[[mcp.servers]]\nname = "notes"\nurl = "{srv.mcp_url}"\n\n'
            f'[[mcp.servers]]\nname = "local"\ncommand = {json.dumps(sys.executable)}\n'
            'args = ["-m", "reasonix", "mcp", "example-server"]\n'
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            shown: list[str] = []
            browser = Browser()
            reg = CommandRegistry(RuntimeCommandHost(rt, notify=shown.append, open_url=browser))
            before = reg.run("/mcp").text
            assert "notes" in before and "failed" in before, before
            done = reg.run("/mcp auth notes")
            browser.join()
            assert not done.error, done.text
            assert "authorized MCP server 'notes'" in done.text
            assert done.text.endswith("the server is ready")
            assert len(shown) == 1 and "Authorize Reasonix for MCP server 'notes'" in shown[0]
            assert browser.urls and browser.urls[0] in shown[0]
            listing = reg.run("/mcp").text
            assert "failed" not in listing and listing.count("ready") == 2, listing
            refused = reg.run("/mcp auth local")
            assert refused.error and "OAuth is for http and sse" in refused.text
            assert reg.run("/mcp auth nobody").error
        finally:
            rt.close()
        assert fake.requests == []
