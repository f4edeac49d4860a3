"""A hook that fails inside a sub-agent is reported to the parent (issue 32, Deliver 4).

Real parts: the loopback fake provider, runtimes from ``build_runtime``, a real
read-only child and a real failing hook command run by /bin/sh.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from subagent_kit import call, calls, project, run

from reasonix.boot import RuntimeOptions, build_runtime


def test_a_childs_failing_tool_hook_reaches_the_parents_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("REASONIX_TRUST_WORKSPACE", "1")  # the hook lives in the workspace
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\n")
    entry = {"matcher": "Read", "hooks": [{"type": "command", "command": "exit 5"}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    script = [calls(call("read_only_task", prompt="look at a.txt")),
              calls(call("read_file", path="a.txt")), Turn.text_only("looked"),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url}, extra='[sandbox]\nbash = "off"\n')
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "go")
            assert rt.hooks is not None
            problems = list(rt.hooks.problems)
        finally:
            rt.close()
    mine = [p for p in problems if p.startswith("sub-agent: PreToolUse hook")]
    assert len(mine) == 1 and "exit 5" in mine[0] and "matcher 'Read'" in mine[0]
