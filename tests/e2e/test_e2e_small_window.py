"""The built .pyz against a fake llama-server started with ``-c 8192`` (issue 37, item 4).

The start-up probe (``GET /props``) finds the 8,192-token window; the session
starts with the small prompt (core tools, the rest behind ``use_capability``,
a large AGENTS.md named instead of included), takes a 1,000-token message and,
continued with ``-c``, a 1,500-token one, and the server refuses nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e_task_env import clean_env, write_project
from fakes import FakeServer, dialects
from fakes.tight import TightWindow

from reasonix.agent.tokens import estimate_text, estimate_tools

WINDOW = 8192
CORE = {"read_file", "edit_file", "write_file", "bash", "grep", "glob", "ls", "use_capability"}


def _run(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", *args], cwd=ws, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr and "HTTP 400" not in proc.stderr, proc.stderr
    result = dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    result["exit"] = proc.returncode
    return result


def _fixed(body: dict[str, Any]) -> int:
    msgs = body["messages"]
    system = "".join(m["content"] for m in msgs if m["role"] == "system")
    first = next(m["content"] for m in msgs if m["role"] == "user")
    head = first.rsplit("</instructions>", 1)[0] if "</instructions>" in first else ""
    tools = [t["function"] for t in body["tools"]]
    return estimate_text(system) + estimate_tools(tools) + estimate_text(head)


def test_a_small_window_takes_1000_then_1500_tokens(tmp_path: Path, pyz: Path) -> None:
    tight = TightWindow(WINDOW, tool=("ls", "{}"), rounds=0, factor=1.15)
    meta = {"GET /props": dialects.llama_cpp_props(WINDOW)}
    with FakeServer("openai", meta=meta, responder=tight) as srv:
        ws = tmp_path / "repo"
        write_project(ws, srv.url + "/v1")
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write("context_window = 32768\n")
        rules = "\n".join(f"- rule {i}: keep the code tidy and tested" for i in range(300))
        (ws / "AGENTS.md").write_text("# Rules\n" + rules)
        env = clean_env(tmp_path, source_tree=False)
        one = _run(pyz, ws, env, " ".join(["alpha"] * 1000))
        two = _run(pyz, ws, env, "-c", " ".join(["beta"] * 1500))
    assert one["exit"] == 0 and two["exit"] == 0, (one, two)
    assert tight.refused == []  # no HTTP 400 at all
    first, later = srv.requests[0].json, srv.requests[-1].json
    assert {t["function"]["name"] for t in first["tools"]} == CORE
    assert json.dumps(later["tools"]) == json.dumps(first["tools"])  # the same, byte for byte
    assert _fixed(first) <= WINDOW // 4
    opening = next(m["content"] for m in first["messages"] if m["role"] == "user")
    assert 'name="AGENTS.md"' in opening and "rule 299" not in opening
    assert two["context_window"]["effective"] == WINDOW
