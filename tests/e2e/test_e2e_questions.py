"""Every question the chat asks a person, answered by typing into a real terminal (issue 34).

The built .pyz runs the line chat (``--plain``) on a pseudo-terminal; the
answers are keystrokes. Elsewhere: the workspace trust question
(test_e2e_trust.py), the setup wizard (test_e2e_first_run.py), SSH host keys
(test_e2e_remote_prompt.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from e2e_term import Term
from fakes import FakeServer, ToolSpec, Turn

pytest.importorskip("pty")


def touch(name: str, i: int) -> Turn:
    return Turn.tools([ToolSpec("bash", json.dumps({"command": f"touch {name}"}), id=f"t{i}")])


@pytest.fixture
def chat(pyz: Path, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    ws = tmp_path / "repo"
    ws.mkdir()
    yield ws, {**clean_env(tmp_path), "TERM": "dumb"}


def start(pyz: Path, ws: Path, env: dict[str, str], *flags: str) -> Term:
    term = Term([sys.executable, str(pyz), "--plain", *flags], ws, env)
    term.expect("› ")
    return term


def leave(term: Term) -> int:
    try:
        term.send("/exit\r")
        return term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait()


def test_each_approval_choice_does_what_it_says(
    pyz: Path, chat: tuple[Path, dict[str, str]]
) -> None:
    ws, env = chat
    script = [
        touch("once", 1), Turn.text_only("one"),
        touch("denied", 2), Turn.text_only("two"),
        touch("session-a", 3), Turn.text_only("three"),
        touch("session-a", 4), Turn.text_only("four"),  # the same command: not asked again
    ]  # fmt: skip
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        term = start(pyz, ws, env)
        term.send("first\r")
        term.expect("choice")
        term.send("1\r")  # allow once
        term.expect("one")
        term.expect("› ")
        term.send("second\r")
        term.expect("choice")
        term.send("4\r")  # deny
        term.expect("two")
        term.expect("› ")
        term.send("third\r")
        term.expect("choice")
        term.send("2\r")  # allow for this session
        term.expect("three")
        term.expect("› ")
        term.send("fourth\r")
        shown = term.expect("four")
        assert "choice" not in shown  # the session rule answered
        term.expect("› ")
        assert leave(term) == 0
        results = [m for m in srv.requests[3].json["messages"] if m["role"] == "tool"]
    assert (ws / "once").exists() and (ws / "session-a").exists()
    assert not (ws / "denied").exists()
    assert "denied" in results[-1]["content"] or "declined" in results[-1]["content"]
    assert "Bash(" not in (ws / "reasonix.toml").read_text()  # nothing was saved


def test_always_allow_is_saved_after_its_own_question(
    pyz: Path, chat: tuple[Path, dict[str, str]]
) -> None:
    ws, env = chat
    script = [touch("kept", 1), Turn.text_only("one"), touch("kept", 2), Turn.text_only("two")]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        term = start(pyz, ws, env)
        term.send("first\r")
        term.expect("choice")
        term.send("3\r")  # always allow
        term.expect("save this rule?")
        term.send("y\r")
        term.expect("one")
        term.expect("› ")
        assert leave(term) == 0
        term = start(pyz, ws, env)  # a new process: the saved rule answers
        term.send("second\r")
        shown = term.expect("two")
        assert "choice" not in shown
        term.expect("› ")
        assert leave(term) == 0
    assert "Bash(touch kept)" in (ws / "reasonix.toml").read_text()


def test_the_cache_break_confirmation_is_answered_both_ways(
    pyz: Path, chat: tuple[Path, dict[str, str]]
) -> None:
    ws, env = chat
    with FakeServer("openai", [Turn.text_only("hello there")]) as srv:
        write_project(ws, srv.url)
        toml = ws / "reasonix.toml"
        toml.write_text(toml.read_text().replace('["fake-model"]', '["fake-model", "other"]'))
        term = start(pyz, ws, env)
        term.send("hi\r")
        term.expect("hello there")
        term.expect("› ")
        term.send("/model fake/other\r")
        term.expect("[y/N]")
        term.send("n\r")
        term.expect("nothing changed")
        term.expect("› ")
        term.send("/model fake/other\r")
        term.expect("[y/N]")
        term.send("y\r")
        term.expect("fake/other")
        term.expect("› ")
        assert leave(term) == 0


def test_rewind_asks_which_turn_and_puts_the_file_back(
    pyz: Path, chat: tuple[Path, dict[str, str]]
) -> None:
    ws, env = chat
    edit = json.dumps({"path": "notes.txt", "content": "changed by the agent\n"})
    script = [Turn.tools([ToolSpec("write_file", edit)]), Turn.text_only("wrote it")]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "notes.txt").write_text("mine\n")
        term = start(pyz, ws, env, "--yolo")
        term.send("change the notes\r")
        term.expect("wrote it")
        term.expect("› ")
        assert (ws / "notes.txt").read_text() == "changed by the agent\n"
        term.send("/rewind\r")
        term.expect("choose 1-1")
        term.send("1\r")  # before turn 1
        term.expect("choose 1-4")
        term.send("2\r")  # code only
        term.expect("› ")
        assert leave(term) == 0
    assert (ws / "notes.txt").read_text() == "mine\n"


def test_a_plan_is_approved_at_the_terminal(pyz: Path, tmp_path: Path) -> None:
    from test_e2e_coord import PLAN, project

    ws = tmp_path / "repo"
    script = [Turn.text_only(PLAN), Turn.text_only("carried out the plan")]
    with FakeServer("openai", script) as srv:
        project(ws, srv.url)
        env = {**clean_env(tmp_path), "TERM": "dumb"}
        term = start(pyz, ws, env, "--yolo")
        term.send("fix add() in calc.py, wait for my approval\r")
        shown = term.expect("? allow execute plan")
        assert "Verified touchpoints" in shown
        term.expect("choice")
        term.send("1\r")
        term.expect("carried out the plan")
        term.expect("› ")
        assert leave(term) == 0


def test_mcp_oauths_browser_step_is_taken_from_the_terminals_url(
    pyz: Path, chat: tuple[Path, dict[str, str]]
) -> None:
    """``reasonix mcp auth`` prints the URL to open; the person's browser visits it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
    from oauth_server.harness import Browser, running

    ws, env = chat
    with running("--public") as srv:
        (ws / "reasonix.toml").write_text(
            f'[[mcp.servers]]\nname = "notes"\nurl = "{srv.mcp_url}"\n'
        )
        env = {**env, "BROWSER": "true %s"}  # no browser on this machine: the person opens it
        term = Term([sys.executable, str(pyz), "mcp", "auth", "notes"], ws, env)
        try:
            term.expect("by opening:")
            url = term.expect("Waiting for the browser").strip().splitlines()[0].strip()
            browser = Browser()
            browser(url)
            term.expect("Authorized MCP server 'notes'")
            browser.join()
            code = term.close()
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
                term.proc.wait()
    assert code == 0 and url.startswith("http")
    assert (Path(env["REASONIX_HOME"]) / "mcp-oauth").is_dir()
