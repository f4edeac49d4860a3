"""A resumed session misses no prompt cache (issue 37 items 2 and 3), against the built .pyz.

The scripted fake records every request; ``srv.extensions()`` measures, per
lane, how far each request's prompt (tools, system, messages) extends the one
before it. ``run -c`` / ``-r`` must extend the last request sent before the
stop byte for byte (ratio 1.00) after a plain restart, a day later (the clock
shifted), a SIGKILL mid-tool and mid-stream, and an upgrade between two builds
(a copy of this tree built with another version string and a reworded tool
description: the program one release earlier). The same holds for the
Coordinator's planner and executor lanes. Nothing in the system prompt or the
first user turn depends on the clock, the process, the machine's load or the
version.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn
from fakes.lanes import lane_key, prompt_text, system_text
from resume_kit import build_variant, plain, run_json, shifted, version_of

pytestmark = pytest.mark.e2e

READ = ToolSpec("read_file", '{"path": "a.txt"}')
SLEEP = ToolSpec("bash", '{"command": "sleep 30"}')
OLD_WORDS = "Read a file (as worded one release earlier)."


def _project(ws: Path, url: str) -> None:
    write_project(ws, url)
    (ws / "a.txt").write_text("hello\n")
    (ws / "REASONIX.md").write_text("Keep answers short.\n")
    skill = ws / ".reasonix" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy imports.\n---\nSort.\n")


def _all_extend(
    srv: FakeServer, lanes: int = 1, torn: int = -1, lane: Callable[[Any], str] = lane_key
) -> None:
    """Every request of a lane extends the one before it (ratio 1.00) — except after
    request ``torn`` (0-based), killed before the model took its new message: that
    message was never written (the torn turn, as designed), so the next request
    extends the killed one up to that message and the cache still serves >= 0.99."""
    found = srv.extensions(lane=lane)
    assert found, "no two requests of a lane to compare"
    assert len({e.lane for e in found}) == lanes, {e.lane for e in found}
    for e in found:
        if e.prev != torn:
            assert e.ratio == 1.0, f"request {e.cur + 1} keeps {e.ratio:.4f} of {e.prev + 1}"
            continue
        assert e.ratio >= 0.99, e
        killed = dict(srv.requests[e.prev].json)
        killed["messages"] = killed["messages"][:-1]  # its untaken user message
        assert prompt_text(srv.requests[e.cur].json).startswith(prompt_text(killed))


def _wait_requests(srv: FakeServer, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while len(srv.requests) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(srv.requests) >= n


def _killed(argv: list[str], ws: Path, env: dict[str, str], srv: FakeServer, n: int,
            *args: str, settle: float = 1.0) -> None:  # fmt: skip
    """Start ``run`` and SIGKILL it once request ``n`` reached the server (+ ``settle`` s)."""
    proc = subprocess.Popen([*argv, "run", "--json", *args], cwd=ws, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_requests(srv, n)
        time.sleep(settle)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def test_run_c_extends_after_a_restart_a_day_and_kills(pyz: Path, tmp_path: Path) -> None:
    script = [
        Turn.tools([READ]), Turn.text_only("one"),      # run 1
        Turn.text_only("two"),                           # run -c, a day later
        Turn.tools([SLEEP]),                             # run -c, killed while bash sleeps
        Turn.text_only("never read", delay=5.0),         # run -c, killed mid-stream
        Turn.text_only("four"),                          # run -r, two days later
    ]  # fmt: skip
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        first = run_json(plain(pyz), ws, env, "first task")
        again = run_json(shifted(pyz, 1), ws, env, "-c", "second task")
        assert again["session_id"] == first["session_id"]
        _killed(shifted(pyz, 1), ws, env, srv, 4, "-y", "-c", "third task")
        _killed(shifted(pyz, 1), ws, env, srv, 5, "-y", "-c", "fourth task", settle=0.5)
        last = run_json(shifted(pyz, 2), ws, env, "-r", first["session_id"], "fifth task")
        assert last["result"] == "four" and last["session_id"] == first["session_id"]
        assert len(srv.requests) == 6
        tail = srv.requests[-1].json["messages"]
        _all_extend(srv, torn=4)
    # the torn tool call is answered as interrupted (once), then the new messages follow
    assert [m["role"] for m in tail[-3:]] == ["assistant", "tool", "user"]
    assert "interrupted" in tail[-2]["content"] and tail[-1]["content"] == "fifth task"


def _reword_read_file(root: Path) -> None:
    path = root / "reasonix" / "tool" / "builtin" / "read_file.py"
    text = path.read_text()
    head, rest = text.split("DESCRIPTION = (", 1)
    path.write_text(f"{head}DESCRIPTION = ({OLD_WORDS!r}\n    " + rest, encoding="utf-8")


def test_run_c_after_an_upgrade_between_two_builds(pyz: Path, tmp_path: Path) -> None:
    """The old build's tool description and version differ; the session keeps its bytes."""
    old = build_variant(tmp_path, "0.9.0-old", _reword_read_file)
    assert version_of(old) == "0.9.0-old" != version_of(pyz)
    script = [Turn.tools([READ]), Turn.text_only("one"), Turn.tools([READ]), Turn.text_only("2")]
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        run_json(plain(old), ws, env, "first task")
        run_json(plain(pyz), ws, env, "-c", "second task")
        assert len(srv.requests) == 4
        _all_extend(srv)
        tools = {t["function"]["name"]: t for t in srv.requests[-1].json["tools"]}
    # the resumed session still offers the tools as they were first sent
    assert tools["read_file"]["function"]["description"].startswith(OLD_WORDS)


def _volatile(pid: int, version: str, days: float) -> list[str]:
    """Text that would tie a prompt to this moment, process, machine load or version."""
    out = [version, f"pid {pid}", f"pid: {pid}", f"pid={pid}", socket.gethostname()]
    out += [f"load average: {os.getloadavg()[0]:.2f}", f"{os.getloadavg()[0]:.2f}, "]
    for shift in (0.0, days):
        now = datetime.datetime.now() + datetime.timedelta(days=shift)
        for day in (now, now - datetime.timedelta(days=1)):  # a run across midnight
            out += [day.strftime(f) for f in ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%B %d",
                                             "%b %d", "%d %B", "%A")]  # fmt: skip
            out.append(f"{day.strftime('%B')} {day.day},")
        out += [now.strftime("%H:%M"), (now - datetime.timedelta(minutes=1)).strftime("%H:%M")]
    return [s for s in out if len(s) >= 3]


def test_first_request_has_no_clock_process_load_or_version_field(
    pyz: Path, tmp_path: Path
) -> None:
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    days = 400.0  # the dates of now and of the shifted clock are both looked for
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        _project(ws, srv.url)
        proc = subprocess.Popen([*shifted(pyz, days), "run", "--json", "hello"], cwd=ws,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)  # fmt: skip
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-3000:]
        body = srv.requests[0].json
    first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    assert "Keep answers short." in first_user and "tidy" in first_user  # what is scanned
    text = system_text(body) + "\n" + first_user + "\n" + json.dumps(body["tools"])
    found = [s for s in _volatile(proc.pid, version_of(pyz), days) if s in text]
    assert not found, f"volatile fields in the prompt: {found}"


PLAN = "<plan>\n# Fix add\n## Verified touchpoints\n- calc.py:2\n## Steps\n- a + b\n</plan>"


def test_planner_and_executor_lanes_extend_across_run_c(pyz: Path, tmp_path: Path) -> None:
    old = build_variant(tmp_path, "0.9.0-old", _reword_read_file)
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]), Turn.text_only(PLAN),
        Turn.text_only("done"),                                   # executor
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]), Turn.text_only(PLAN),
        Turn.text_only("done again"),                             # executor
    ]  # fmt: skip
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", script) as srv:
        ws.mkdir(parents=True)
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/exec-model"\n[agent]\nplanner_model = "fake/plan-model"\n'
            f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{srv.url}"\n'
            'models = ["exec-model", "plan-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        )
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        one = run_json(plain(old), ws, env, "-y", "--plan", "fix add()")
        two = run_json(shifted(pyz, 1), ws, env, "-y", "-c", "--plan", "check add() again")
        assert one["route"] == two["route"] == "plan_then_execute", (one, two)
        models = [r.json["model"] for r in srv.requests]
        assert models == ["plan-model"] * 2 + ["exec-model"] + ["plan-model"] * 2 + ["exec-model"]
        _all_extend(srv, lanes=2)


def _first_user(body: dict[str, Any]) -> str:
    """A conversation's lane: its first user message (two sessions share the system)."""
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def _send(proc: subprocess.Popen[str], srv: FakeServer, line: str, n: int) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    _wait_requests(srv, n)
    time.sleep(0.5)  # the answer streams and the turn ends


def test_chat_resume_a_skill_and_command_edit_and_the_date_change_no_sent_byte(
    pyz: Path, tmp_path: Path
) -> None:
    """The line chat: a turn, a skill and a command edited and the clock a day on, the
    command, /new, /resume of the first session, a turn; then ``run -c`` in a new process
    learns of the edited skill from a new message, never from a rewritten first turn."""
    script = [Turn.text_only(f"answer {i}") for i in range(5)]
    clock = tmp_path / "clock"
    clock.write_text("0")
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    commands = ws / ".reasonix" / "commands"
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        commands.mkdir(parents=True)
        (commands / "hello.md").write_text("---\ndescription: greet\n---\nSay hello once.\n")
        log = (tmp_path / "chat.log").open("w")
        proc = subprocess.Popen([*shifted(pyz, clock), "--plain"], cwd=ws, env=env,
                                stdin=subprocess.PIPE, stdout=log, stderr=log,
                                text=True)  # fmt: skip
        try:
            _send(proc, srv, "one", 1)
            (first,) = (tmp_path / "rx" / "sessions").glob("*/*.jsonl")
            skill = ws / ".reasonix" / "skills" / "tidy" / "SKILL.md"
            skill.write_text("---\nname: tidy\ndescription: Sort the imports.\n---\nSort.\n")
            (commands / "hello.md").write_text("---\ndescription: greet\n---\nSay hi twice.\n")
            clock.write_text("1")
            _send(proc, srv, "/hello", 2)
            _send(proc, srv, "/new", 2)
            _send(proc, srv, "other", 3)
            _send(proc, srv, f"/resume {first.stem}", 3)
            _send(proc, srv, "two", 4)
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0, (tmp_path / "chat.log").read_text()[-3000:]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
        clock.write_text("2")
        run_json(shifted(pyz, clock), ws, env, "-c", "three")
        assert len(srv.requests) == 5
        bodies = [r.json for r in srv.requests]
        _all_extend(srv, lane=_first_user)
    # session A: requests 1, 2, 4, 5; session B (/new): request 3
    assert [_first_user(b).rsplit("\n\n", 1)[-1] for b in bodies] == ["one"] * 2 + ["other"] + [
        "one"
    ] * 2
    sent = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "user"]
    assert "Say hi twice." in sent[1] and "Tidy imports." in sent[0]  # as first sent
    assert sent[-1].startswith("<skills>\nThe skills changed") and sent[-1].endswith("three")
    assert "Sort the imports." in sent[-1]


def test_a_sub_agent_continued_with_continue_from_extends_its_lane(
    pyz: Path, tmp_path: Path
) -> None:
    def call(tool: str, **args: Any) -> Turn:
        return Turn.tools([ToolSpec(tool, json.dumps(args))])

    script = [
        call("task", prompt="what is in a.txt?"),      # main
        Turn.tools([READ]), Turn.text_only("hello"),   # the child
        Turn.text_only("delegated"),                   # main
    ]  # fmt: skip
    ws, env = tmp_path / "repo", clean_env(tmp_path, source_tree=False)
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        run_json(plain(pyz), ws, env, "-y", "look at a.txt")
        (child,) = (tmp_path / "rx" / "sessions").glob("*/subagents/*.jsonl")
        srv.add(call("task", prompt="and its size?", continue_from=child.stem),
                Turn.text_only("six bytes"), Turn.text_only("done"))  # fmt: skip
        run_json(shifted(pyz, 1), ws, env, "-y", "-c", "and the size?")
        assert len(srv.requests) == 7
        _all_extend(srv, lanes=2)
        lanes = [lane_key(r.json) for r in srv.requests]
    assert lanes[1] == lanes[2] == lanes[5] != lanes[0]  # the child's lane, continued


def test_sessions_doc_states_the_resume_guarantee() -> None:
    root = Path(__file__).resolve().parents[2] / "docs"
    for name in ("SESSIONS.md", "SESSIONS.zh-CN.md"):
        text = (root / name).read_text(encoding="utf-8")
        assert "run -c" in text and "1.00" in text, name
