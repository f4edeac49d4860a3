"""Issue 35 item 9: a command in a sub-folder answers to its own name, as in Claude Code.

Claude Code documents it on its "Slash commands" page: ``.claude/commands/frontend/
component.md`` creates ``/component`` and its description shows "(project:frontend)".
Real files, the registry over a real runtime (no request ever reaches the model).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeServer

from reasonix.boot import Runtime, RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands

COMPONENT = """\
---
description: Create a UI component
argument-hint: <name>
---
Create a React component called $1 in src/components, with a test beside it.
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeServer("openai", []) as srv:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            yield rt
        finally:
            rt.close()
            assert srv.requests == []


def test_a_subfolder_command_is_its_short_name_with_the_folder_as_a_label(
    runtime: Runtime,
) -> None:
    cmds = runtime.workspace / ".claude" / "commands"
    write(cmds / "frontend" / "component.md", COMPONENT)
    write(cmds / "tools" / "lint" / "strict.md", "Run the linter in strict mode.")
    reg = build_commands(runtime)
    result = reg.run("/component Button")
    assert not result.error and (result.prompt or "").startswith("Create a React component")
    assert "called Button in" in (result.prompt or "")
    assert reg.run("/frontend:component Button").prompt == result.prompt  # the old name works
    listed = dict(reg.names())
    assert listed["/component"] == "Create a UI component (frontend)"
    assert listed["/strict"] == "Run the linter in strict mode. (tools/lint)"
    assert "/frontend:component" not in listed and "/tools:lint:strict" not in listed
    cmd = reg.get("component")
    assert cmd is not None and cmd.kind == "project" and cmd.argument_hint == "<name>"
    assert [(c.text, c.description) for c in reg.complete("/compo")] == [
        ("/component", "<name> — Create a UI component (frontend)")
    ]
    help_text = reg.run("/help").text or ""
    row = next(line for line in help_text.splitlines() if line.strip().startswith("/component"))
    assert "(frontend)" in row
    assert help_text.index("project commands:") < help_text.index("/component")


def test_colliding_names_keep_the_folder_form(runtime: Runtime) -> None:
    from reasonix.config.paths import home_dir

    cmds = runtime.workspace / ".claude" / "commands"
    write(cmds / "frontend" / "component.md", COMPONENT)
    write(cmds / "backend" / "component.md", "Create a backend service component.")
    write(cmds / "ops" / "deploy.md", "Deploy from the ops folder.")
    write(home_dir() / "commands" / "deploy.md", "Deploy, the user's own way.")
    write(cmds / "misc" / "help.md", "Not the built-in help.")
    write(cmds / "misc" / "mcp__srv__p.md", "Not an MCP prompt.")
    reg = build_commands(runtime)
    listed = dict(reg.names())
    # two folders, one short name: the first folder (in name order) gets it, the other
    # stays listed under its folder name
    assert reg.run("/component").prompt == "Create a backend service component."
    assert listed["/component"] == "Create a backend service component. (backend)"
    assert "/frontend:component" in listed and "/backend:component" not in listed
    assert (reg.run("/frontend:component x").prompt or "").startswith("Create a React")
    # an explicit name (a top-level file, even the user's) beats a derived one
    assert reg.run("/deploy").prompt == "Deploy, the user's own way."
    assert reg.run("/ops:deploy").prompt == "Deploy from the ops folder."
    assert "/ops:deploy" in listed
    # built-ins and the MCP prompt namespace are never taken by a short name
    builtin = reg.get("help")
    assert builtin is not None and builtin.kind == "builtin"
    assert reg.run("/misc:help").prompt == "Not the built-in help."
    assert reg.get("mcp__srv__p") is None and "/misc:mcp__srv__p" in listed
