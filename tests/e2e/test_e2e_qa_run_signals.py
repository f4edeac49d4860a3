"""QA: the built .pyz keeps its structured-output promise on the edges of a run.

SIGTERM cancels the turn like Ctrl-C and still prints the result object; an
argparse usage error under ``--json`` prints one too (exit 2); a tool name the
model made up never reaches ``--events-jsonl``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn


def _typed(first_turn: str) -> str:
    """The user's own text of a first turn (the host's skill index leads it)."""
    return first_turn.split("</skills>\n\n", 1)[-1]


def _ws(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    write_project(ws, url)
    return ws, clean_env(tmp_path, source_tree=False)


def test_sigterm_cancels_and_prints_the_result(tmp_path: Path, pyz: Path) -> None:
    script = [Turn(text=["word "] * 400, delay=0.02), Turn.text_only("resumed fine")]
    with FakeServer("openai", script) as srv:
        ws, env = _ws(tmp_path, srv.url)
        proc = subprocess.Popen(
            [sys.executable, str(pyz), "run", "--json", "a long answer please"],
            cwd=ws,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 20
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 1, err
        result = json.loads(out.strip().splitlines()[-1])
        assert result["type"] == "result" and result["is_error"] is True
        assert result["stop_reason"] == "cancelled" and result["error"]["type"] == "Cancelled"
        assert srv.wait_idle(5.0)
        env_home = Path(env["REASONIX_HOME"])
        assert not list(env_home.rglob("*.lease"))  # the lease was released
        again = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "-c", "go on"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.strip().splitlines()[-1])["result"] == "resumed fine"


def test_flag_usage_error_prints_a_json_result(tmp_path: Path, pyz: Path) -> None:
    ws, env = _ws(tmp_path, "http://127.0.0.1:9")
    for fmt in (["--json"], ["--output-format", "stream-json"]):
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", *fmt, "--max-steps", "many", "hi"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 2
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["subtype"] == "error_during_execution"
        assert (
            result["error"]["type"] == "UsageError" and "--max-steps" in result["error"]["message"]
        )
        assert "--max-steps" in proc.stderr  # the usual argparse message stays on stderr
    text = subprocess.run(
        [sys.executable, str(pyz), "run", "--bogus", "hi"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert text.returncode == 2 and text.stdout == "" and "--bogus" in text.stderr


def test_events_jsonl_hides_made_up_tool_names(tmp_path: Path, pyz: Path) -> None:
    secret = "SECRET-TOOL-NAME-31337"
    script = [Turn.tools([ToolSpec(secret, "{}"), ToolSpec("glob", '{"pattern": "*"}')]),
              Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        ws, env = _ws(tmp_path, srv.url)
        events = tmp_path / "events.jsonl"
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "--events-jsonl", str(events), "go"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = events.read_text()
    assert secret not in text
    names = [json.loads(x).get("name") for x in text.splitlines()]
    assert "(unknown)" in names and "glob" in names  # registered tools keep their names
    (transcript,) = (Path(env["REASONIX_HOME"]) / "sessions").rglob("*.jsonl")
    assert secret in transcript.read_text()  # the local transcript keeps it


_USAGE = {"input_tokens": 0, "output_tokens": 5, "cache_read_tokens": 0,
          "cache_write_tokens": 0, "reasoning_tokens": 0}  # fmt: skip


def _read(path: str) -> Turn:
    return Turn(tool_calls=[ToolSpec("read_file", json.dumps({"path": path}))], usage=_USAGE)


def test_run_compact_reports_what_it_did(tmp_path: Path, pyz: Path) -> None:
    texts = [Turn(text=t, usage=_USAGE) for t in ("read", "DIGEST-OF-THE-READS", "on")]
    texts[1].usage = {**_USAGE, "output_tokens": 700}  # the summary call is paid for
    script = [_read("f1.txt"), _read("f2.txt"), _read("f3.txt"), *texts]
    with FakeServer("openai", script) as srv:
        ws, env = _ws(tmp_path, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write("context_window = 12000\n")  # room for the tool schemas to grow
        for i in (1, 2, 3):
            words = " ".join(f"word{i}x{j}" for j in range(400))
            (ws / f"f{i}.txt").write_text(words + "\n")

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, str(pyz), "run", *args], cwd=ws, env=env,
                                  capture_output=True, text=True, timeout=60)  # fmt: skip

        assert run("--json", "read the three files").returncode == 0
        fresh = run("--json", "--compact", "go on")  # a new session has nothing to compact
        assert fresh.returncode == 2 and "--compact" in json.loads(fresh.stdout)["error"]["message"]
        proc = run("--output-format", "stream-json", "-c", "--compact", "go on")
        assert proc.returncode == 0, proc.stderr
        lines = [json.loads(x) for x in proc.stdout.splitlines()]
        notice = next(x for x in lines if x["type"] == "notice" and x["kind"] == "compaction")
        assert notice["text"].startswith("context manual: ") and notice["text"].endswith("(ok)")
        assert "Context maintenance" in srv.requests[4].json["messages"][-1]["content"]
        assert "DIGEST-OF-THE-READS" in srv.requests[5].json["messages"][1]["content"]
        assert lines[-1]["usage"]["output_tokens"] == 705  # summary + answer


def test_memory_command_refuses_a_missing_dir(tmp_path: Path, pyz: Path) -> None:
    ws, env = _ws(tmp_path, "http://127.0.0.1:9")
    proc = subprocess.run(
        [sys.executable, str(pyz), "memory", "--dir", str(tmp_path / "nope"), "list"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "not a directory" in proc.stderr


def test_headless_memory_refusal_names_the_tool_once(tmp_path: Path, pyz: Path) -> None:
    fact = json.dumps({"content": "the gizmo ships on fridays", "scope": "global"})
    script = [Turn.tools([ToolSpec("remember", fact)]), Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        ws, env = _ws(tmp_path, srv.url)
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--output-format", "stream-json", "note it"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    end = next(json.loads(x) for x in proc.stdout.splitlines() if '"tool_end"' in x)
    assert end["is_error"] and end["content"].startswith("remember: denied")


def test_undecodable_prompt_bytes_still_run(tmp_path: Path, pyz: Path) -> None:
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        ws, env = _ws(tmp_path, srv.url)
        piped = subprocess.run(
            [sys.executable, str(pyz), "run", "--json"],
            cwd=ws, env=env, input=b"fix \xff\xfe the bug\n", capture_output=True, timeout=60,
        )  # fmt: skip
        argv = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "-c", b"and \xff this"],
            cwd=ws, env=env, capture_output=True, timeout=60,
        )  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert argv.returncode == 0, argv.stderr
    assert json.loads(argv.stdout)["result"] == "two"
    sent = srv.requests[-1].json["messages"]
    assert (
        _typed(sent[1]["content"]) == "fix \ufffd\ufffd the bug\n"
        and sent[-1]["content"] == "and \ufffd this"
    )


def test_chat_compact_flag_compacts_before_the_prompt(tmp_path: Path, pyz: Path) -> None:
    with FakeServer("openai", [Turn.text_only("hello")]) as srv:
        ws, env = _ws(tmp_path, srv.url)
        first = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "hi"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert first.returncode == 0, first.stderr
        chat = subprocess.run(
            [sys.executable, str(pyz), "-c", "--compact", "--plain"],
            cwd=ws, env=env, input="/exit\n", capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert chat.returncode == 0, chat.stderr
    assert "nothing to compact" in chat.stdout or "no summary" in chat.stdout


def test_bare_print_flag_reads_the_prompt_from_stdin(tmp_path: Path, pyz: Path) -> None:
    with FakeServer(
        "openai", [Turn.text_only("piped answer"), Turn.text_only("flag answer")]
    ) as srv:
        ws, env = _ws(tmp_path, srv.url)
        piped = subprocess.run(
            [sys.executable, str(pyz), "-p"],
            cwd=ws, env=env, input="task from a pipe\n", capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        flag = subprocess.run(
            [sys.executable, str(pyz), "-p", "--max-steps", "3", "task after flags"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert (piped.returncode, piped.stdout) == (0, "piped answer\n"), piped.stderr
    assert (flag.returncode, flag.stdout) == (0, "flag answer\n"), flag.stderr
    assert _typed(srv.requests[0].json["messages"][1]["content"]) == "task from a pipe\n"
    assert _typed(srv.requests[1].json["messages"][1]["content"]) == "task after flags"


def test_os_errors_stay_json(tmp_path: Path, pyz: Path) -> None:
    ws, env = _ws(tmp_path, "http://127.0.0.1:9")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env["REASONIX_STATE_HOME"] = str(blocker / "state")  # cannot be created
    proc = subprocess.run(
        [sys.executable, str(pyz), "run", "--json", "hi"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["is_error"] and result["error"]["type"] == "NotADirectoryError"
    assert "a-file" in result["error"]["message"]
    text = subprocess.run(
        [sys.executable, str(pyz), "run", "hi"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert text.returncode == 1 and "reasonix: Not a directory" in text.stderr


def test_sigterm_during_compact_is_a_cancel(tmp_path: Path, pyz: Path) -> None:
    slow = Turn(text=["digest "] * 400, delay=0.02, usage=_USAGE)
    script = [_read("f1.txt"), _read("f2.txt"), _read("f3.txt"), Turn(text="read", usage=_USAGE)]
    with FakeServer("openai", [*script, slow]) as srv:
        ws, env = _ws(tmp_path, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write("context_window = 12000\n")  # room for the tool schemas to grow
        for i in (1, 2, 3):
            (ws / f"f{i}.txt").write_text(" ".join(f"word{i}x{j}" for j in range(400)) + "\n")
        first = subprocess.run([sys.executable, str(pyz), "run", "--json", "read"], cwd=ws,
                               env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert first.returncode == 0, first.stderr
        proc = subprocess.Popen(
            [sys.executable, str(pyz), "run", "--json", "-c", "--compact", "go on"],
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while len(srv.requests) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    result = json.loads(out)
    assert result["stop_reason"] == "cancelled" and result["error"]["type"] == "Cancelled"
    (transcript,) = (Path(env["REASONIX_HOME"]) / "sessions").rglob("*.jsonl")
    kinds = [json.loads(x)["type"] for x in transcript.read_text().splitlines()]
    assert "compaction" not in kinds and "checkpoint" not in kinds  # not a paid failure
