"""The curses chat view in a real terminal (tmux), from the built .pyz, against the fake model.

Each test reads the screen as a person would: the diff is on screen before
the approval key is pressed, the footer names the mode, Esc stops a slow
stream, the view reflows on resize, Chinese text goes both ways, Ctrl-D
leaves and ``-c`` shows the transcript again.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn
from tmux_term import Tmux, need_tmux

pytestmark = [pytest.mark.e2e, pytest.mark.interop, pytest.mark.slow]

CALC = "def add(a, b):\n    return a - b\n"


@pytest.fixture(autouse=True)
def _tmux() -> None:
    need_tmux()


def _start(
    pyz: Path, ws: Path, tmp_path: Path, *flags: str, size: tuple[int, int] = (80, 24)
) -> Tmux:
    env = {**clean_env(tmp_path, source_tree=False), "LANG": "C.UTF-8", "PYTHONFAULTHANDLER": "1"}
    return Tmux([sys.executable, str(pyz), *flags], ws, env, tmp_path, *size)


def _requests_text(srv: FakeServer) -> str:
    return "\n".join(r.body.decode("utf-8", "replace") for r in srv.requests)


def _task_script() -> list[Turn]:
    fix = json.dumps(
        {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    )
    test = json.dumps({"command": "echo calc-test-ok"})
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], text="Reading calc.py."),
        Turn.tools([ToolSpec("edit_file", fix)], reasoning="add subtracts; fix it"),
        Turn.tools([ToolSpec("bash", test)]),
        Turn.text_only("Fixed **add()** in `calc.py`; the test passes."),
    ]


def test_edit_task_shows_the_diff_before_the_key_then_resumes_with_the_transcript(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", _task_script()) as srv:
        write_project(ws, srv.url)
        (ws / "calc.py").write_text(CALC)
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for("Ask anything")
            term.wait_for(" ask ")  # the footer: the runtime is ready
            term.type("fix add in calc.py")
            term.keys("Enter")
            screen = term.wait_for("allow edit_file: calc.py?")
            # The coloured diff is on screen before any key is pressed.
            assert "-    return a - b" in screen and "+    return a + b" in screen
            assert "1  allow once" in screen and "4  deny" in screen
            assert "always allow (Edit(calc.py), saved to ./reasonix.toml)" in screen
            assert "Ask anything" not in screen  # a modal overlay hides the composer
            assert (ws / "calc.py").read_text() == CALC  # nothing written yet
            term.keys("1")
            screen = term.wait_for("allow bash: echo calc-test-ok?")
            assert "$ echo calc-test-ok" in screen
            term.type("y")
            screen = term.wait_for("the test passes.")
            assert "Fixed add() in calc.py" in screen  # Markdown: no ** or ` left
            assert "✓ edit_file calc.py  +1 -1" in screen
            assert "✓ bash echo calc-test-ok" in screen
            assert "calc-test-ok" in screen
            assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
            term.wait_for("Ask anything")
            term.keys("C-d")
            assert term.wait_exit() == 0
            assert "reasonix -c` resumes it" in term.screen()
        finally:
            term.close()
        assert len(srv.requests) == 4
        term = _start(pyz, ws, tmp_path, "-c")
        try:
            screen = term.wait_for("resumed session")
            # A resumed edit shows the call's own old and new strings (the file moved on).
            for text in ("› fix add in calc.py", "• edit_file calc.py  +1 -1", "+return a + b",
                         "the test passes."):  # fmt: skip
                assert text in screen, f"{text!r} not in:\n{screen}"
            term.keys("C-d")
            assert term.wait_exit() == 0
        finally:
            term.close()


def test_shift_tab_cycles_the_mode_in_the_footer(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", []) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            footer = term.wait_for("fake/fake-model · ask").split("\n")[-2]
            assert footer.startswith(" fake/fake-model · ask · ctx ")
            for mode in ("auto", "plan", "ask"):
                term.keys("BTab")
                term.wait_for(f"fake/fake-model · {mode} ·")
            term.keys("C-c")
            term.wait_for("press Ctrl-C again to leave")
            term.keys("C-c")
            assert term.wait_exit() == 0
        finally:
            term.close()
        assert srv.requests == []  # none of this reached the model


def test_a_yolo_start_keeps_its_mode_reachable(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", []) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path, "--yolo")
        try:
            term.wait_for("· bypassPermissions ·")
            for mode in ("ask", "auto", "plan", "bypassPermissions"):
                term.keys("BTab")
                term.wait_for(f"fake/fake-model · {mode} ·")
        finally:
            term.close()


def test_esc_cancels_a_slow_stream_and_the_next_turn_works(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    story = " ".join(f"w{i}" for i in range(1500))
    script = [Turn.text_only(story, delay=0.02), Turn.text_only("second answer arrives")]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")
            term.type("tell me a long story")
            term.keys("Enter")
            term.wait_for("w450 ")  # more rows than the screen has
            term.wait_for("working · Esc cancels")
            term.keys("PPage")
            term.wait_for("PgDn follows")
            held = term.rows()[:10]
            time.sleep(0.6)  # the stream goes on below …
            assert term.rows()[:10] == held  # … and what the user reads stays put
            term.keys("NPage", "NPage", "NPage")
            term.wait_gone("PgDn follows")
            term.keys("Escape")
            term.wait_for("the turn was cancelled")
            assert srv.wait_idle(5.0), "the cancelled stream was not hung up"
            term.wait_gone("Esc cancels")
            term.type("again")
            term.keys("Enter")
            term.wait_for("second answer arrives")
            assert len(srv.requests) == 2
        finally:
            term.close()


def test_resize_reflows_the_view(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    long_line = " ".join(f"word{i}" for i in range(60))
    with FakeServer("openai", [Turn.text_only(long_line)]) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")
            term.type("wrap me")
            term.keys("Enter")
            term.wait_for("word59")
            narrow = term.rows()
            assert all(len(r) <= 80 for r in narrow)
            term.resize(200, 50)
            term.wait_for("─" * 200)
            wide = term.rows()
            assert len(wide) >= 50
            assert wide[-2].startswith(" fake/fake-model · ask")  # the footer moved down
            assert any("word0 " in r and "word25 " in r for r in wide)  # one row holds more
            assert sum("word" in r for r in wide) < sum("word" in r for r in narrow)
            term.resize(80, 24)
            term.wait_for("─" * 80)
            assert not any("─" * 81 in r for r in term.rows())
        finally:
            term.close()


def test_chinese_text_in_and_out(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    answer = "你好！这是一个很长的中文回答，" * 8
    with FakeServer("openai", [Turn.text_only(answer)]) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")
            term.type("请用中文回答")
            term.wait_for("› 请用中文回答")
            assert term.cursor() == (2 + 12, 22)  # after six wide characters
            term.keys("Enter")
            screen = term.wait_for("你好！这是")
            assert "› 请用中文回答" in screen
            rows = [r for r in term.rows() if "中文回答" in r and not r.startswith("›")]
            assert len(rows) >= 2  # wrapped by cells, no row spills
            assert "请用中文回答" in _requests_text(srv) or "\\u8bf7" in _requests_text(srv)
        finally:
            term.close()


def test_composer_editing_and_paste_in_the_terminal(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", [Turn.text_only("got it")]) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")
            term.type("first line")
            term.keys("C-j")
            term.type("second")
            term.keys("M-Enter")
            term.paste("pasted 1\npasted 2")
            screen = term.wait_for("pasted 2")
            assert "› first line\n  second\n  pasted 1\n  pasted 2" in screen
            term.keys("C-a", "C-k")
            term.wait_gone("pasted 2")
            term.type("last")
            term.keys("Enter")
            term.wait_for("got it")
            sent = srv.requests[0].json
            assert sent is not None
            assert sent["messages"][-1]["content"].endswith("first line\nsecond\npasted 1\nlast")
            term.keys("Up")
            term.wait_for("› first line")  # history brings the prompt back
        finally:
            term.close()


def test_a_crash_in_the_view_restores_the_terminal_and_keeps_the_session(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    # Fault injection: the view's frame function raises once the runtime is ready.
    boom = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        # the .pyz as a library: its payload takes its place on sys.path (as remote serve's)
        "from reasonix._pyzarchive import importable; importable(sys.argv[1]); sys.argv[1:] = []\n"
        "from reasonix.cli.tui import view\n"
        "real = view.render_frame\n"
        "def render_frame(state, w, h):\n"
        "    if state.status.model: raise RuntimeError('a bug in the view')\n"
        "    return real(state, w, h)\n"
        "view.render_frame = render_frame\n"
        "from reasonix.cli.tui import app; app.render_frame = render_frame\n"
        "from reasonix.cli.main import main; raise SystemExit(main([]))\n"
    )
    with FakeServer("openai", []) as srv:
        write_project(ws, srv.url)
        env = {**clean_env(tmp_path, source_tree=False), "LANG": "C.UTF-8"}
        term = Tmux([sys.executable, "-c", boom, str(pyz)], ws, env, tmp_path)
        try:
            assert term.wait_exit() == 1
            screen = term.screen()
            assert "reasonix: the chat view stopped: RuntimeError: a bug in the view" in screen
            assert "is saved (`reasonix -c` resumes it)" in screen
            assert "Traceback" not in screen
            assert "Ask anything" not in screen  # curses left the alternate screen
        finally:
            term.close()
    assert list((tmp_path / "rx" / "sessions").glob("*/*.jsonl"))


def test_always_allow_shows_what_the_rule_would_approve_before_saving(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    script = [
        Turn.tools([ToolSpec("bash", json.dumps({"command": "echo hi"}))]),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")
            term.type("say hi")
            term.keys("Enter")
            term.wait_for("allow bash: echo hi?")
            term.keys("3")
            screen = term.wait_for("always allow Bash(echo hi)?")
            assert "would approve" in screen  # the rule simulator's report
            assert "n: allow it for this session only" in screen
            assert "allow = " not in (ws / "reasonix.toml").read_text()  # not saved yet
            term.keys("y")
            term.wait_for("✓ bash echo hi")
            term.wait_for("ok")
        finally:
            term.close()
    assert 'allow = ["Bash(echo hi)"]' in (ws / "reasonix.toml").read_text()


REVIEW = (
    "---\ndescription: Review a file\nargument-hint: <file>\n---\nPlease review $1. Budget $$5.\n"
)


def _user_text(request: Any) -> str:
    text = str(
        next(m for m in reversed(request.json["messages"]) if m["role"] == "user")["content"]
    )
    return text.split("</skills>\n\n", 1)[-1]  # the host's skill index leads a first turn


def test_commands_references_and_mcp_prompts_in_the_view(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    script = [Turn.text_only("reviewed"), Turn.text_only("explained"), Turn.text_only("taught"),
              Turn.text_only("escaped")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        secret = ws / "secret.txt"
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write(
                f"\n[sandbox]\nforbid_read = [{json.dumps(str(secret))}]\n"
                f'\n[[mcp.servers]]\nname = "example"\ncommand = {json.dumps(sys.executable)}\n'
                f'args = [{json.dumps(str(pyz))}, "mcp", "example-server"]\n'
            )
        (ws / "notes.txt").write_text("NOTE-CONTENT-0815\n")
        secret.write_text("TOP-SECRET\n")
        commands = ws / ".reasonix" / "commands"
        commands.mkdir(parents=True)
        (commands / "review.md").write_text(REVIEW)
        (commands / "broken.md").write_text("---\ndescription: the fence never closes\n")
        term = _start(pyz, ws, tmp_path, size=(100, 40))
        try:
            screen = term.wait_for(" ask ")
            assert "broken.md" in screen  # a bad command file is a notice; the view goes on
            term.type("/he")
            term.wait_for("list the commands")  # slash autocomplete, with descriptions
            term.keys("Enter")
            screen = term.wait_for("Shift-Tab: mode")  # /help, plus the view's keys
            assert "/review" in screen and "Review a file" in screen
            assert srv.requests == []  # a built-in never reaches the model
            term.type("/rev")
            term.wait_for("  /review")
            term.keys("Tab")
            term.type("notes.txt")
            term.keys("Enter")
            term.wait_for("reviewed")
            assert _user_text(srv.requests[0]).startswith("Please review notes.txt. Budget $5.")
            term.type("explain @no")
            term.wait_for("  @notes.txt")  # @ autocomplete: one directory level
            term.keys("Tab")
            term.wait_for("› explain @notes.txt")
            term.type("and @secret.txt please")
            term.keys("Enter")
            screen = term.wait_for("explained")
            assert "secret.txt" in screen and "forbid_read" in screen  # refused, with a notice
            sent = _user_text(srv.requests[1])
            assert sent.startswith('<file path="notes.txt">\nNOTE-CONTENT-0815\n</file>')
            assert "TOP-SECRET" not in sent
            term.type("/mcp__example__explain recursion")
            term.keys("Enter")
            term.wait_for("taught")
            assert _user_text(srv.requests[2]).startswith("Explain recursion to a beginner")
            term.type("/model")
            term.keys("Enter")
            screen = term.wait_for("Switch model")  # a modal picker: the composer goes
            assert "› fake/fake-model" in screen and "Ask anything" not in screen
            term.keys("Escape")
            term.wait_for("Ask anything")
            term.type("/clear")
            term.keys("Enter")
            term.wait_for("Discard this conversation?")
            term.type("n")
            term.wait_gone("Discard this conversation?")
            term.type("//etc/hosts is a path I typed")
            term.keys("Enter")
            term.wait_for("escaped")
            assert _user_text(srv.requests[3]).startswith("/etc/hosts is a path I typed")
            term.type("/exit")
            term.keys("Enter")
            assert term.wait_exit() == 0
        finally:
            term.close()
        assert len(srv.requests) == 4


def test_every_built_in_runs_in_the_view_without_a_model_request(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("openai", []) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path, size=(100, 30))
        try:
            term.wait_for(" ask ")
            for line, shows, then in [
                ("/status", "session ", None),
                ("/effort", "effort", None),
                ("/memory", "memory", None),
                ("/mcp", "MCP", None),
                ("/compact", "compact", None),
                ("/context", "no summary yet", None),
                ("/pin keep the API stable", "keep the API stable", None),
                ("/rewind", "nothing to rewind", None),
                ("/model", "Switch model", "Escape"),
                ("/resume", "no other sessions", None),
                ("/clear", "Discard this conversation?", "n"),
                ("/new", "new session", None),
                ("/help", "/status", None),
            ]:
                term.type(line)
                term.keys("Enter")
                term.wait_for(shows)
                if then is not None:
                    term.keys(then)
                term.wait_for("Ask anything")
                term.wait_gone("· Esc cancels")  # the command finished
            term.type("/exit")
            term.keys("Enter")
            assert term.wait_exit() == 0
        finally:
            term.close()
        assert srv.requests == []


def test_a_provider_web_search_shows_as_a_card(pyz: Path, tmp_path: Path) -> None:
    from fakes import SearchSpec

    ws = tmp_path / "repo"
    hits = [("Python 3.13 release notes", "https://docs.python.org/3.13/whatsnew/3.13.html")]
    turn = Turn(text="It came out in October 2024.", searches=[SearchSpec("python 3.13", hits)])
    with FakeServer("anthropic", [turn]) as srv:
        write_project(ws, srv.url, "anthropic")
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write("web_search = true\n")  # still inside the [[providers]] table
        term = _start(pyz, ws, tmp_path)
        try:
            term.wait_for(" ask ")
            term.type("when did python 3.13 come out?")
            term.keys("Enter")
            screen = term.wait_for("October 2024")
            assert "✓ web_search python 3.13" in screen
            assert "Python 3.13 release notes — https://docs.python.org/3.13/whatsnew" in screen
        finally:
            term.close()


def test_a_prompt_typed_while_the_view_starts_is_sent(pyz: Path, tmp_path: Path) -> None:
    """Keys typed before the view set raw mode went through the cooked terminal (Enter
    became a line feed): they are sent as typed, not left as a new line in the composer."""
    ws = tmp_path / "repo"
    with FakeServer("openai", [Turn.text_only("EARLY-ANSWER")]) as srv:
        write_project(ws, srv.url)
        term = _start(pyz, ws, tmp_path)
        try:
            term.type("EARLY-QUESTION")  # at once: the program is still starting
            term.keys("Enter")
            term.wait_for("EARLY-ANSWER", timeout=60)
            assert "EARLY-QUESTION" in _requests_text(srv)
            term.keys("C-d")
            assert term.wait_exit() == 0
        finally:
            term.close()
