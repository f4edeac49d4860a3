"""Sessions over HTTP and SSE: turns, approvals, resume by Last-Event-ID, one turn at a
time, mode/model changes, lease hand-over with `reasonix -c`, and SIGTERM."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, ToolSpec, Turn
from serve_kit import (
    CALC,
    FIX,
    Client,
    ServeProcess,
    env_for,
    running,
    task_script,
    turn_end,
    write_workspace,
)

from reasonix.agent.session import Session, list_sessions, read_records
from reasonix.serve.wire import display_user_text


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events if e["type"] not in ("status", "usage", "step", "phase")]


def _text(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["type"] == "text")


def _wait(predicate: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_turn_streams_in_order_with_one_approval(tmp_path: Path) -> None:
    with FakeServer("openai", task_script()) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            stream = c.events(sid)
            assert c.post(f"/api/sessions/{sid}/prompt", {"text": "fix add()"})[0] == 200
            seen = stream.until(lambda e: e["type"] == "approval")
            card = seen[-1]
            assert card["tool"] == "edit_file" and card["rule"] == "Edit(calc.py)"
            assert card["choices"] == ["once", "session", "always", "deny"]
            assert card["diff"][-2:] == ["-return a - b", "+return a + b"]
            assert (ws / "calc.py").read_text() == CALC
            assert (
                c.post(f"/api/sessions/{sid}/approve", {"id": card["id"], "choice": "once"})[0]
                == 200
            )
            seen += stream.until(lambda e: e["type"] == "approval")  # bash asks too (mode ask)
            assert seen[-1]["command"].endswith("test_calc.py")
            c.post(f"/api/sessions/{sid}/approve", {"id": seen[-1]["id"], "choice": "once"})
            seen += stream.until(turn_end)
            stream.close()
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))  # no gaps, in order
    assert _kinds(seen)[:3] == ["user", "turn", "text"]
    assert _kinds(seen)[-2:] == ["done", "turn"]
    assert _kinds(seen).count("approval_done") == 2
    assert _text(seen).endswith("Fixed **add()** in `calc.py`; the test passes.")
    ends = [e for e in seen if e["type"] == "tool_end"]
    assert [e["name"] for e in ends] == ["read_file", "edit_file", "bash"]
    assert "calc test ok" in ends[-1]["content"] and not ends[-1]["is_error"]
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_second_prompt_is_refused_while_a_turn_runs(tmp_path: Path) -> None:
    script = [Turn(text=[f"w{i} " for i in range(40)], delay=0.05), Turn.text_only("second")]
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            stream = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "first"})
            stream.until(lambda e: e["type"] == "text")
            status, body = c.post(f"/api/sessions/{sid}/prompt", {"text": "second"})
            assert status == 409 and "a turn is already running" in body["error"]
            assert "Stop" in body["error"]
            assert c.post(f"/api/sessions/{sid}/model", {"model": "fake/fake-model"})[0] == 409
            status, body = c.post(f"/api/sessions/{sid}/prompt", {"text": "/help"})
            assert status == 409 and "turn is running" in body["error"]
            stream.until(turn_end)
            assert c.post(f"/api/sessions/{sid}/prompt", {"text": "second"})[0] == 200
            rest = stream.until(turn_end)
            stream.close()
            users = [r for r in app.manager.get(sid).records() if r.get("type") == "message"
                     and r["message"]["role"] == "user"]  # fmt: skip
    typed = [display_user_text(u["message"]["content"]) for u in users]  # no skill index
    assert typed == ["first", "second"]
    assert any(e.get("text") == "second" for e in rest)


def test_reconnect_with_last_event_id_misses_nothing(tmp_path: Path) -> None:
    words = [f"w{i} " for i in range(80)]
    with FakeServer("openai", [Turn(text=words, delay=0.01)]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            whole = c.events(sid)
            part = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "count"})
            first = part.until(lambda e: e.get("text") == "w10 ")
            part.close()  # the tab went away mid-turn …
            time.sleep(0.2)
            again = c.events(sid, after=None, last_id=str(first[-1]["seq"]))  # … and came back
            rest = again.until(turn_end)
            again.close()
            full = whole.until(turn_end)
            whole.close()
    assert first + rest == full  # byte-equal events: nothing missed, nothing twice
    assert _text(full) == "".join(words)


def test_history_mid_turn_plus_the_stream_is_the_whole_conversation(tmp_path: Path) -> None:
    script = [
        Turn.text_only("earlier answer"),
        Turn(text=[f"x{i} " for i in range(30)], delay=0.03),
    ]
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            s = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "one"})
            s.until(turn_end)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "two"})
            s.until(lambda e: e.get("text") == "x5 ")
            s.close()
            status, hist = c.get(f"/api/sessions/{sid}")  # what a reloaded page asks for
            assert status == 200 and hist["status"]["busy"] is True
            assert [i["type"] for i in hist["items"]] == ["user", "assistant"]  # turn 1 only
            tail = c.events(sid, after=hist["seq"]).until(turn_end)
            assert _kinds(tail)[:3] == ["user", "turn", "text"] and tail[0]["text"] == "two"
            assert _text(tail).startswith("x0 x1 x2 x3 x4 x5 ")
            _, done = c.get(f"/api/sessions/{sid}")
            assert [i["type"] for i in done["items"]] == ["user", "assistant"] * 2
            assert done["title"] == "one" and done["status"]["busy"] is False


def _approve(tmp_path: Path, choice: str) -> tuple[Path, list[dict[str, Any]]]:
    script = [Turn.tools([ToolSpec("edit_file", FIX)]), Turn.text_only("ok")]
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            s = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "edit"})
            card = s.until(lambda e: e["type"] == "approval")[-1]
            assert card["preview"].startswith("Edit(calc.py) would approve ")  # the simulator
            path = f"/api/sessions/{sid}/approve"
            assert c.post(path, {"id": card["id"], "choice": "maybe"})[0] == 400
            assert c.post(path, {"id": "a99", "choice": "once"})[0] == 409
            assert c.post(path, {"id": card["id"], "choice": choice}) == (200, {"ok": True})
            again = c.post(path, {"id": card["id"], "choice": choice})
            assert again[0] == 409 and "no longer waiting" in again[1]["error"]
            events = s.until(turn_end)
            s.close()
    return ws, events


def test_deny_leaves_the_file_alone(tmp_path: Path) -> None:
    ws, events = _approve(tmp_path, "deny")
    assert (ws / "calc.py").read_text() == CALC
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["blocked"] and "declined" in end["content"]


def test_always_saves_the_shown_rule_to_the_project(tmp_path: Path) -> None:
    ws, _ = _approve(tmp_path, "always")
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert 'allow = ["Edit(calc.py)"]' in (ws / "reasonix.toml").read_text()


def test_stop_during_an_approval_ends_the_turn_cleanly(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.tools([ToolSpec("edit_file", FIX)])]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            s = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "edit"})
            s.until(lambda e: e["type"] == "approval")
            assert c.post(f"/api/sessions/{sid}/cancel") == (200, {"stopped": True})
            events = s.until(turn_end)
            s.close()
            assert c.post(f"/api/sessions/{sid}/cancel") == (200, {"stopped": False})
    assert {"type": "approval_done", "choice": "cancelled"}.items() <= events[0].items()
    assert events[-1]["reason"] == "cancelled"
    assert (ws / "calc.py").read_text() == CALC


def test_mode_and_model_changes(tmp_path: Path) -> None:
    script = [Turn.tools([ToolSpec("edit_file", FIX)]), Turn.text_only("edited")]
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws, release_after=0.2) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            status, st = c.post(f"/api/sessions/{sid}/mode", {"mode": "acceptEdits"})
            assert status == 200 and st["mode"] == "acceptEdits"
            assert c.post(f"/api/sessions/{sid}/mode", {"mode": "sudo"})[0] == 400
            status, body = c.post(f"/api/sessions/{sid}/model", {"model": "nope/none"})
            assert status == 400 and "nope" in body["error"]
            assert c.post(f"/api/sessions/{sid}/model", {"model": "fake"})[1]["model"] == (
                "fake/fake-model"
            )
            _wait(lambda: c.get(f"/api/sessions/{sid}")[1]["status"]["live"] is False)
            s = c.events(sid, after=None)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "edit it"})  # rebuilt: mode kept
            events = s.until(turn_end)
            s.close()
    assert "approval" not in _kinds(events)
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_idle_session_lease_goes_to_the_cli_and_comes_back(tmp_path: Path) -> None:
    script = [Turn.text_only("from the browser"), Turn.text_only("from the cli"),
              Turn.text_only("browser again")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws, release_after=0.3) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            s = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "hello"})
            s.until(turn_end)
            released = s.until(lambda e: e["type"] == "status" and not e["live"])[-1]
            assert released["model"] == "fake/fake-model" and released["context_tokens"] == 120
            proc = subprocess.run(
                [sys.executable, "-m", "reasonix", "run", "-c", "--output-format", "json", "cli"],
                cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert json.loads(proc.stdout)["session_id"] == sid
            c.post(f"/api/sessions/{sid}/prompt", {"text": "back"})
            s.until(turn_end)
            s.close()
            _, hist = c.get(f"/api/sessions/{sid}")
    texts = [i["text"] for i in hist["items"]]
    assert texts == ["hello", "from the browser", "cli", "from the cli", "back", "browser again"]


def test_a_session_the_cli_holds_is_refused_with_a_reason(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            held = Session.create(ws, {"system": "s"})  # another holder of the lease
            held.set_title("held elsewhere")
            held.sync()
            try:
                listed = c.get("/api/sessions")[1]["sessions"]
                assert [(x["id"], x["title"]) for x in listed] == [(held.id, "held elsewhere")]
                status, body = c.post(f"/api/sessions/{held.id}/prompt", {"text": "hi"})
                assert status == 409 and "in use by another Reasonix process" in body["error"]
                assert "--copy" not in body["error"]
                assert c.get(f"/api/sessions/{held.id}")[0] == 200  # reading is fine
            finally:
                held.close()
            assert c.post(f"/api/sessions/{held.id}/prompt", {"text": "hi"})[0] == 200


def test_the_browser_sees_cli_sessions(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("cli answer")]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        proc = subprocess.run(
            [sys.executable, "-m", "reasonix", "run", "a task from the terminal"],
            cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            (info,) = c.get("/api/sessions")[1]["sessions"]
            assert info["title"] == "a task from the terminal" and not info["live"]
            items = c.get(f"/api/sessions/{info['id']}")[1]["items"]
    assert [(i["type"], i["text"]) for i in items] == [
        ("user", "a task from the terminal"), ("assistant", "cli answer")]  # fmt: skip


def test_slash_lines_go_to_the_command_layer(tmp_path: Path) -> None:
    script = [Turn.text_only("got it"), Turn.text_only("hello done"), Turn.text_only("read it")]
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        (ws / ".reasonix" / "commands").mkdir(parents=True)
        (ws / ".reasonix" / "commands" / "hello.md").write_text("Say hello to $ARGUMENTS.\n")
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            s = c.events(sid)
            status, body = c.post(f"/api/sessions/{sid}/prompt", {"text": "/help"})
            assert status == 200 and body["started"] is False
            out = s.until(lambda e: e["type"] == "command")[-1]
            assert out["command"] == "/help" and "/new" in out["text"] and "/hello" in out["text"]
            status, body = c.post(f"/api/sessions/{sid}/prompt", {"text": "/model"})
            assert "fake/fake-model" in [i["value"] for i in body["picker"]["items"]]
            assert body["picker"]["command"] == "/model"
            body = c.post(f"/api/sessions/{sid}/prompt", {"text": "/nonsense"})[1]
            err = s.until(lambda e: e["type"] == "command")[-1]
            assert err["error"] is True and "nonsense" in err["text"]
            # `//` escapes a slash; a first word with another slash is a path, not a command
            assert (
                c.post(f"/api/sessions/{sid}/prompt", {"text": "//etc/hosts is a path"})[0] == 200
            )
            s.until(turn_end)
            body = c.post(f"/api/sessions/{sid}/prompt", {"text": "/hello the browser"})[1]
            assert body["started"] is True  # a custom command becomes the turn
            s.until(turn_end)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "look at @calc.py please"})
            s.until(turn_end)
            _, comp = c.get(f"/api/sessions/{sid}/complete?q=/he")
            assert {"text": "/help"}.items() <= comp["items"][0].items()
            assert "/hello" in [i["text"] for i in comp["items"]]
            _, comp = c.get(f"/api/sessions/{sid}/complete?q=fix%20%40ca")
            assert [i["text"] for i in comp["items"]] == ["@calc.py"]
            _, comp = c.get(f"/api/sessions/{sid}/complete?q=/model%20f")
            assert [i["text"] for i in comp["items"]] == ["/model fake/fake-model"]
            assert c.post(f"/api/sessions/{sid}/prompt", {"text": "  "})[0] == 400
            s.close()
    sent = [display_user_text(r.json["messages"][-1]["content"]) for r in srv.requests]
    assert sent[0] == "/etc/hosts is a path"
    assert sent[1].strip() == "Say hello to the browser."
    assert "return a - b" in sent[2] and sent[2].endswith("look at @calc.py please")


def test_new_and_clear_move_the_tabs_to_the_new_session(tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("first")]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            s = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": "keep me"})
            s.until(turn_end)
            body = c.post(f"/api/sessions/{sid}/prompt", {"text": "/new"})[1]
            moved = s.until(lambda e: e["type"] == "switched")[-1]
            assert moved["session"] == body["session"] != sid
            s.close()
            new = body["session"]
            assert c.get(f"/api/sessions/{new}")[1]["status"]["live"] is True
            assert c.get(f"/api/sessions/{sid}")[1]["status"]["live"] is False
            body = c.post(f"/api/sessions/{new}/prompt", {"text": "/clear"})[1]
            assert body["confirm"]["command"] and "confirm" in body
            cleared = c.post(f"/api/sessions/{new}/prompt", {"text": body["confirm"]["command"]})
            assert cleared[0] == 200 and cleared[1]["session"] not in (sid, new)
            ids = [x["id"] for x in c.get("/api/sessions")[1]["sessions"]]
            assert sid in ids and new not in ids  # /clear deleted the empty one
            third = cleared[1]["session"]
            c.post(f"/api/sessions/{sid}/prompt", {"text": "/status"})  # `sid` is live again
            assert c.get(f"/api/sessions/{sid}")[1]["status"]["live"] is True
            body = c.post(f"/api/sessions/{third}/prompt", {"text": f"/resume {sid}"})[1]
            assert body["session"] == sid  # the live one was handed over, not refused
            assert c.get(f"/api/sessions/{sid}")[1]["status"]["live"] is True


@pytest.mark.slow
def test_sigterm_ends_a_running_turn_and_leaves_the_transcript_loadable(tmp_path: Path) -> None:
    words = [f"w{i} " for i in range(2000)]
    with FakeServer("openai", [Turn(text=words, delay=0.02)]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        serve = ServeProcess(ws, tmp_path)
        c = Client(serve.port)
        c.hello()
        sid = c.new_session()
        s = c.events(sid)
        c.post(f"/api/sessions/{sid}/prompt", {"text": "long"})
        s.until(lambda e: e.get("text") == "w20 ")
        start = time.monotonic()
        code, _, err = serve.stop()
        assert code == 0 and time.monotonic() - start < 10, err
        tail = list(s)  # the stream ends instead of hanging
        s.close()
        assert srv.wait_idle(5)  # the model request was hung up on
    assert "Traceback" not in err and any(e["type"] == "turn" for _, e in tail)
    (info,) = list_sessions(ws)
    records = read_records(info.path)
    assert records[-1]["type"] == "message" and records[-1]["message"]["role"] == "assistant"
    assert records[-1]["message"]["content"].startswith("w0 w1 ")
    assert not info.path.with_suffix(".lease").exists()
    Session.open(info.path).close()  # the lease is free: `reasonix -c` can take it
