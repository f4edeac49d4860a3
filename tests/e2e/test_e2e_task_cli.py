"""``reasonix run`` flags end to end: formats, redacted events, metrics, print mode,
stdin, continue/resume/copy, the session lease and headless fail-closed approvals."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from e2e_task_env import ROOT, clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

SECRET = "SECRET-PROMPT-4711"


def project(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url)
    (ws / "notes.txt").write_text("NOTE-CONTENT-0815\n")
    return ws, clean_env(tmp_path)


def run(
    ws: Path, env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix", *args],
        cwd=ws,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def read_turns() -> list[Turn]:
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "notes.txt"}')]),
        Turn.text_only("The note says NOTE-CONTENT-0815."),
    ]


def test_stream_json_events_then_result(tmp_path: Path) -> None:
    with FakeServer("openai", read_turns()) as srv:
        ws, env = project(tmp_path, srv.url)
        proc = run(ws, env, "run", "--output-format", "stream-json", "read the note")
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    kinds = [x["type"] for x in lines]
    assert kinds[-1] == "result" and lines[-1]["subtype"] == "success"
    assert {"request", "tool_start", "tool_end", "text", "usage"} <= set(kinds)
    end = next(x for x in lines if x["type"] == "tool_end")
    assert "NOTE-CONTENT-0815" in end["content"] and end["is_error"] is False


def test_events_jsonl_is_redacted_and_metrics_are_written(tmp_path: Path) -> None:
    with FakeServer("openai", read_turns()) as srv:
        ws, env = project(tmp_path, srv.url)
        events, metrics = tmp_path / "events.jsonl", tmp_path / "metrics.json"
        proc = run(ws, env, "run", "--json", "--events-jsonl", str(events), "--metrics",
                   str(metrics), "--ablate", "subagent,planner", SECRET)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = events.read_text()
    records = [json.loads(x) for x in text.splitlines()]
    assert records[0]["event"] == "run_start"
    assert records[-1]["event"] == "run_end" and records[-1]["exit_code"] == 0
    assert {"request", "tool_start", "tool_end", "usage", "done"} <= {r["event"] for r in records}
    for leak in (SECRET, "notes.txt", "NOTE-CONTENT-0815", str(ws), str(tmp_path)):
        assert leak not in text
    m = json.loads(metrics.read_text())
    assert m["ablate"] == ["subagent", "planner"] and m["num_turns"] == 2
    assert len(m["per_request"]) == 2 and m["counters"]["tool_calls"] == 1


def test_print_mode_prints_only_the_answer_and_stdin_works(tmp_path: Path) -> None:
    with FakeServer("openai", [*read_turns(), Turn.text_only("from stdin")]) as srv:
        ws, env = project(tmp_path, srv.url)
        proc = run(ws, env, "-p", "read the note")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "The note says NOTE-CONTENT-0815.\n"
        piped = run(ws, env, "run", "--json", stdin="a task from a pipe\n")
        body = srv.requests[-1].json
    assert json.loads(piped.stdout)["result"] == "from stdin"
    assert "a task from a pipe" in json.dumps(body)


def test_text_mode_streams_and_reports_cost_on_stderr(tmp_path: Path) -> None:
    with FakeServer("openai", read_turns()) as srv:
        ws, env = project(tmp_path, srv.url)
        proc = run(ws, env, "run", "read the note")
    assert proc.returncode == 0
    assert "The note says NOTE-CONTENT-0815." in proc.stdout
    assert "cache hit" in proc.stderr and "cost unknown" in proc.stderr
    assert "read_file" in proc.stderr


def result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return dict(json.loads(proc.stdout.splitlines()[-1]))


def test_continue_resume_and_copy(tmp_path: Path) -> None:
    script = [Turn.text_only(f"answer {i}") for i in range(5)]
    with FakeServer("openai", script) as srv:
        ws, env = project(tmp_path, srv.url)
        first = result(run(ws, env, "run", "--json", "fix the lexer"))
        time.sleep(0.05)
        other = result(run(ws, env, "run", "--json", "update the docs"))
        cont = result(run(ws, env, "run", "--json", "-c", "and the tests"))
        assert cont["session_id"] == other["session_id"]
        assert "update the docs" in json.dumps(srv.requests[-1].json)
        resumed = result(run(ws, env, "run", "--json", "-r", "lexer", "more lexer"))
        assert resumed["session_id"] == first["session_id"]
        sent = json.dumps(srv.requests[-1].json)
        assert "fix the lexer" in sent and "update the docs" not in sent
        copied = result(run(ws, env, "run", "--json", "-r", first["session_id"], "--copy", "x"))
        assert copied["session_id"] not in (first["session_id"], other["session_id"])
        assert "more lexer" in json.dumps(srv.requests[-1].json)
    missing = run(ws, env, "run", "--json", "-r", "no-such-title", "x")
    assert missing.returncode == 2 and "fix the lexer" in result(missing)["error"]["message"]


def test_a_second_live_writer_is_refused_with_a_copy_hint(tmp_path: Path) -> None:
    slow = Turn.text_only("word " * 300, delay=0.02)
    with FakeServer("openai", [Turn.text_only("hi"), slow, Turn.text_only("copy")]) as srv:
        ws, env = project(tmp_path, srv.url)
        run(ws, env, "run", "--json", "start")
        holder = subprocess.Popen(
            [sys.executable, "-m", "reasonix", "run", "--output-format", "stream-json", "-c", "go"],
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert holder.stdout is not None
        for line in holder.stdout:
            if '"type": "text"' in line:
                break
        clash = run(ws, env, "run", "--json", "-c", "me too")
        copy = run(ws, env, "run", "--json", "-c", "--copy", "me too")
        holder.kill()
        holder.communicate()
    assert clash.returncode == 1
    assert "--copy" in result(clash)["error"]["message"]
    assert copy.returncode == 0 and result(copy)["result"] == "copy"


def test_headless_ask_fails_closed_as_a_tool_result(tmp_path: Path) -> None:
    cmd = json.dumps({"command": "touch created-by-bash"})
    script = [Turn.tools([ToolSpec("bash", cmd)]), Turn.text_only("could not run it")]
    with FakeServer("openai", script) as srv:
        ws, env = project(tmp_path, srv.url)
        proc = run(ws, env, "run", "--output-format", "stream-json", "make a file")
    assert proc.returncode == 0
    end = next(json.loads(x) for x in proc.stdout.splitlines() if '"tool_end"' in x)
    assert end["blocked"] is True and "denied" in end["content"]
    assert not (ws / "created-by-bash").exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    ws, env = project(tmp_path, "http://127.0.0.1:9")
    proc = run(ws, env, "run", "--json", "--ablate", "bogus", "x")
    assert proc.returncode == 2 and result(proc)["is_error"] is True
    no_prompt = run(ws, env, "run", "--json", stdin="")
    assert no_prompt.returncode == 2


def test_mcp_server_tools_reach_the_model(tmp_path: Path) -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        import pytest

        pytest.skip("MISSING the mcp SDK: run `.venv/bin/pip install mcp`")
    server = ROOT / "tests" / "plugin" / "servers" / "sdk_server.py"
    script = [
        Turn.tools([ToolSpec("mcp__sdk__echo", '{"text": "over mcp"}')]),
        Turn.text_only("echoed"),
    ]
    with FakeServer("openai", script) as srv:
        ws, env = project(tmp_path, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write(
                f'\n[[mcp.servers]]\nname = "sdk"\ncommand = "{sys.executable}"\n'
                f'args = ["{server}", "stdio"]\n'
            )
        proc = run(ws, env, "run", "--output-format", "stream-json", "use mcp")
        tools = [t["function"]["name"] for t in srv.requests[0].json["tools"]]
    assert "mcp__sdk__echo" in tools and "use_capability" in tools
    end = next(json.loads(x) for x in proc.stdout.splitlines() if '"tool_end"' in x)
    assert "echo: over mcp" in end["content"] and not end["is_error"], end


def test_dir_flag_runs_in_another_directory(tmp_path: Path) -> None:
    with FakeServer("openai", read_turns()) as srv:
        ws, env = project(tmp_path, srv.url)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        proc = run(elsewhere, env, "run", "--json", "--dir", str(ws), "read the note")
    assert proc.returncode == 0, proc.stderr
    assert result(proc)["result"] == "The note says NOTE-CONTENT-0815."
    bad = run(elsewhere, env, "run", "--json", "--dir", str(tmp_path / "missing"), "x")
    assert bad.returncode == 2


def test_provider_keys_never_reach_the_models_shell(tmp_path: Path) -> None:
    cmd = json.dumps({"command": 'echo "key=[${FAKE_PROVIDER_KEY:-unset}]"'})
    script = [Turn.tools([ToolSpec("bash", cmd)]), Turn.text_only("done")]
    with FakeServer("openai", script) as srv:
        ws, env = project(tmp_path, srv.url)
        proc = run(ws, env, "run", "-y", "--output-format", "stream-json", "show the key")
    assert proc.returncode == 0, proc.stderr
    end = next(json.loads(x) for x in proc.stdout.splitlines() if '"tool_end"' in x)
    assert "key=[unset]" in end["content"]
    assert "sk-fake" not in proc.stdout
