"""The sandbox finished, end to end with real bubblewrap and the fake provider:

* headless ``run -y``: a bash call declaring ``additional_write_dirs`` outside the roots is
  refused naming ``--add-dir``; with ``--add-dir D`` it writes D and nothing else outside;
* the line chat: the write-scope question shows the justification, "this session" covers
  later commands, "always" saves ``[sandbox].allow_write`` keeping the file's other content;
* the escape retry under ``--yolo`` (and a PreToolUse hook answering "allow"): refused
  headless (transcript + ``--events-jsonl``), asked interactively (and run unsandboxed
  when approved), never offered under a deny rule.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env
from e2e_term import Term
from fakes import FakeServer, ToolSpec, Turn

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="MISSING bubblewrap (bwrap); CI installs it (apt-get install bubblewrap)",
)

CONFIG_HEAD = "# project settings — keep this comment\n"


def project(ws: Path, url: str, extra: str = "") -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        CONFIG_HEAD + 'default_model = "fake/fake-model"\n\n'
        '[[providers]]\nname = "fake"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n\n'
        '[sandbox]\nbash = "enforce"\n' + extra
    )


@pytest.fixture
def outside() -> Iterator[Path]:
    """Writable on the host, outside the workspace and outside /tmp (the jail shows EROFS)."""
    made = [Path(tempfile.mkdtemp(prefix="rx-e2e-", dir="/var/tmp"))]
    try:
        yield made[0]
    finally:
        shutil.rmtree(made[0], ignore_errors=True)


def bash_call(command: str, **args: Any) -> ToolSpec:
    return ToolSpec("bash", json.dumps({"command": command, **args}))


def run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix", "run", *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip


def tool_result(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def sessions(tmp_path: Path) -> list[dict[str, Any]]:
    files = sorted((tmp_path / "rx" / "sessions").glob("*/*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


# -- write scope -----------------------------------------------------------------


def test_headless_refuses_and_names_add_dir_then_add_dir_writes_only_there(
    tmp_path: Path, outside: Path
) -> None:
    target, stray = outside / "out", outside / "stray"
    target.mkdir()
    stray.mkdir()
    call = bash_call(
        f"touch {target}/made; touch {stray}/nope; true",
        additional_write_dirs=[str(target)],
        justification="write the build",
    )
    ws, env = tmp_path / "repo", clean_env(tmp_path)
    with FakeServer("openai", [Turn.tools([call]), Turn.text_only("done")]) as srv:
        project(ws, srv.url)
        refused = run(ws, env, "-y", "--output-format", "json", "build it")
        first = tool_result(srv.requests[1].json)
    assert refused.returncode == 0, refused.stderr
    assert "--add-dir" in first and "NOT run" in first, first
    assert not (target / "made").exists() and not (stray / "nope").exists()
    with FakeServer("openai", [Turn.tools([call]), Turn.text_only("done")]) as srv:
        project(ws, srv.url)
        allowed = run(ws, env, "-y", "--add-dir", str(target), "build it")
        second = tool_result(srv.requests[1].json)
    assert allowed.returncode == 0, allowed.stderr
    assert "[exit code 0]" in second, second
    assert (target / "made").exists()  # bound writable inside bubblewrap…
    assert not (stray / "nope").exists()  # …and nowhere else outside the roots


def test_chat_scope_question_session_and_save(tmp_path: Path, outside: Path) -> None:
    session_dir, saved_dir = outside / "cache", outside / "dist"
    session_dir.mkdir()
    saved_dir.mkdir()
    script = [
        Turn.tools(
            [
                bash_call(
                    f"touch {session_dir}/a",
                    additional_write_dirs=[str(session_dir)],
                    justification="JUSTIFY-SESSION-4711",
                )
            ]
        ),
        Turn.tools([bash_call(f"touch {session_dir}/b")]),  # later: no declaration, no question
        Turn.text_only("cached"),
        Turn.tools(
            [
                bash_call(
                    f"touch {saved_dir}/c",
                    additional_write_dirs=[str(saved_dir)],
                    justification="JUSTIFY-SAVE-0815",
                )
            ]
        ),
        Turn.text_only("saved"),
    ]
    ws = tmp_path / "repo"
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, "network = true\n")
        env = {**clean_env(tmp_path), "TERM": "dumb"}
        term = Term([sys.executable, "-m", "reasonix", "--plain", "-y"], ws, env)
        try:
            term.expect("› ")
            term.send("fill the cache\r")
            asked = term.expect("choice")
            assert "JUSTIFY-SESSION-4711" in asked and f"make {session_dir} writable" in asked
            term.send("2\r")
            term.expect("cached")
            term.expect("› ")
            term.send("ship it\r")
            asked = term.expect("choice")
            assert "JUSTIFY-SAVE-0815" in asked and "saved to ./reasonix.toml" in asked
            term.send("3\r")
            term.expect("saved")
            term.expect("› ")
            term.send("/exit\r")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
        screen = term.screen
    assert screen.count("? allow make") == 2  # the second command of the session was not asked
    assert (session_dir / "a").exists() and (session_dir / "b").exists()
    assert (saved_dir / "c").exists()
    toml = (ws / "reasonix.toml").read_text()
    assert toml.startswith(CONFIG_HEAD) and 'bash = "enforce"' in toml and "network = true" in toml
    assert f'allow_write = ["{saved_dir}"]' in toml
    assert str(session_dir) not in toml  # "this session" is never saved


# -- the escape retry ----------------------------------------------------------------


ALLOW_HOOK = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}


def allow_hook(ws: Path) -> None:
    """A PreToolUse hook answering "allow" for every bash call: it must not pre-approve."""
    command = f"touch hook-ran; echo '{json.dumps(ALLOW_HOOK)}'"
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]
    }
    (ws / ".claude").mkdir(parents=True, exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def escape_script(target: Path) -> tuple[str, list[Turn]]:
    cmd = f"touch {target}/escaped"
    return cmd, [
        Turn.tools([bash_call(cmd)]),
        Turn.tools([bash_call(cmd, escape_sandbox=True, justification="JUSTIFY-ESCAPE-42")]),
        Turn.text_only("finished"),
    ]


def test_yolo_headless_never_grants_the_escape_and_records_it(
    tmp_path: Path, outside: Path
) -> None:
    cmd, script = escape_script(outside)
    ws, env = tmp_path / "repo", clean_env(tmp_path)
    log = tmp_path / "events.jsonl"
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        allow_hook(ws)
        proc = run(ws, env, "--yolo", "--events-jsonl", str(log), "--output-format", "json", "x")
        blocked, refused = tool_result(srv.requests[1].json), tool_result(srv.requests[2].json)
    assert proc.returncode == 0, proc.stderr
    assert "Read-only file system" in blocked and "headless" in blocked
    assert "refused" in refused and "headless" in refused and "--yolo" in refused
    assert not (outside / "escaped").exists()
    assert (ws / "hook-ran").exists()  # the hook did say "allow"
    (record,) = [r for r in sessions(tmp_path) if r["type"] == "sandbox_escape"]
    assert record["command"] == cmd and record["granted"] is False
    assert record["detail"] == "headless" and record["justification"] == "JUSTIFY-ESCAPE-42"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    (logged,) = [e for e in events if e["event"] == "sandbox_escape"]
    assert logged["granted"] is False and logged["detail"] == "headless"
    assert cmd not in log.read_text()  # the log is redacted


def test_yolo_interactive_still_asks_and_runs_unsandboxed_when_approved(
    tmp_path: Path, outside: Path
) -> None:
    cmd, script = escape_script(outside)
    ws = tmp_path / "repo"
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        allow_hook(ws)  # YOLO *and* a hook saying allow: the question still comes
        env = {**clean_env(tmp_path), "TERM": "dumb"}
        term = Term([sys.executable, "-m", "reasonix", "--plain", "--yolo"], ws, env)
        try:
            term.expect("› ")
            term.send("make it\r")
            asked = term.expect("choice")
            assert f"run OUTSIDE the sandbox: {cmd}" in asked and "JUSTIFY-ESCAPE-42" in asked
            assert "[2]" not in asked and "[3]" not in asked  # only once or deny
            term.send("1\r")
            term.expect("finished")
            term.expect("› ")
            term.send("/exit\r")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
    assert (outside / "escaped").exists() and (ws / "hook-ran").exists()
    assert "sandbox escape granted" in term.screen
    (record,) = [r for r in sessions(tmp_path) if r["type"] == "sandbox_escape"]
    assert record["granted"] is True and record["detail"] == "approved"


def test_under_a_deny_rule_the_escape_is_never_offered(tmp_path: Path, outside: Path) -> None:
    _, script = escape_script(outside)
    ws = tmp_path / "repo"
    with FakeServer("openai", script) as srv:
        project(ws, srv.url, '\n[permissions]\ndeny = ["Bash(touch:*)"]\n')
        env = {**clean_env(tmp_path), "TERM": "dumb"}
        term = Term([sys.executable, "-m", "reasonix", "--plain", "--yolo"], ws, env)
        try:
            term.expect("› ")
            term.send("make it\r")
            term.expect("finished")
            term.expect("› ")
            term.send("/exit\r")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
        results = [tool_result(srv.requests[i].json) for i in (1, 2)]
    assert "OUTSIDE the sandbox" not in term.screen and "choice" not in term.screen
    assert all("deny rule" in r for r in results), results
    assert "escape_sandbox" not in results[0]
    assert not (outside / "escaped").exists()
