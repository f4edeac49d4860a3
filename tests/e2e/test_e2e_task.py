"""The built .pyz completes a scripted coding task against each provider wire format.

The fake model reads a file, edits it, runs its test with bash and answers;
the run must end with the file edited, the test's output in the last tool
result and the DESIGN §4 JSON result object on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_python import interpreter
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

KINDS = ("openai", "anthropic", "responses")

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('calc test ok')\n"


def setup(ws: Path, kind: str, url: str) -> None:
    """The task's files plus a reasonix.toml pointing at the fake."""
    write_project(ws, url, kind)
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)


def run_env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path, source_tree=False)  # the archive must run on its own


USAGE = {
    "input_tokens": 400,
    "output_tokens": 20,
    "cache_read_tokens": 300,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
}


def task_script(python: str = sys.executable) -> list[Turn]:
    fix = '{"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}'
    cmd = json.dumps({"command": f"{python} test_calc.py", "justification": "run test"})
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], text="Reading calc.py."),
        Turn.tools([ToolSpec("edit_file", fix)], reasoning="add subtracts; fix it"),
        Turn.tools([ToolSpec("bash", cmd)]),
        Turn.text_only("Fixed add() in calc.py; test_calc.py passes.",
                       usage=USAGE),
    ]  # fmt: skip


def tool_texts(body: dict[str, Any]) -> str:
    """Everything the request carries, flattened, to find tool results in any wire format."""
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.e2e
@pytest.mark.parametrize("kind", KINDS)
def test_scripted_task_completes(pyz: Path, tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "repo"
    with FakeServer(kind, task_script()) as srv:
        setup(ws, kind, srv.url)
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--output-format", "json", "-y", "fix add()"],
            cwd=ws,
            env=run_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = [r.json for r in srv.requests]
    assert proc.returncode == 0, proc.stderr + proc.stdout
    result = json.loads(proc.stdout)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == "Fixed add() in calc.py; test_calc.py passes."
    assert result["num_turns"] == 4 and result["tool_calls"] == 3
    assert set(result["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
    assert result["usage"]["cache_read_input_tokens"] == 300
    assert result["session_id"] and isinstance(result["duration_ms"], int)
    assert result["subagent_runs"] == 0 and result["write_scope_violations"] == 0
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert len(requests) == 4
    assert "return a - b" in tool_texts(requests[1])  # read_file's result went back
    assert "calc test ok" in tool_texts(requests[3])  # bash ran the fixed test
    sessions = list((tmp_path / "rx" / "sessions").glob("*/*.jsonl"))
    assert [p.stem for p in sessions] == [result["session_id"]]


@pytest.mark.e2e
def test_failure_still_prints_the_result_object(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", []) as srv:  # an exhausted script answers HTTP 400
        setup(ws, "openai", srv.url)
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "hello"],
            cwd=ws, env=run_env(tmp_path), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["is_error"] is True and result["subtype"] == "error_during_execution"
    assert "400" in result["error"]["message"]


@pytest.mark.e2e
def test_usage_error_is_json_and_exit_2(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    setup(ws, "openai", "http://127.0.0.1:9")
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", "--resume", "nothing-like-this", "hi"],
        cwd=ws, env=run_env(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    result = json.loads(proc.stdout)
    assert result["is_error"] is True
    assert proc.returncode in (1, 2)


@pytest.mark.e2e
@pytest.mark.parametrize("minor", ["3.10", "3.12", "3.13"])
def test_scripted_task_on_every_supported_python(pyz: Path, tmp_path: Path, minor: str) -> None:
    """The whole agent path (config, provider, tools, sandbox, session) on other Pythons."""
    python = interpreter(minor)
    ws = tmp_path / "repo"
    # the model's bash runs the test with the same interpreter the archive runs on
    with FakeServer("openai", task_script(python)) as srv:
        setup(ws, "openai", srv.url)
        proc = subprocess.run(
            [python, str(pyz), "run", "--output-format", "json", "-y", "fix add()"],
            cwd=ws,
            env=run_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = [r.json for r in srv.requests]
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert json.loads(proc.stdout)["subtype"] == "success"
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert "calc test ok" in tool_texts(requests[3])
