"""A quiet, flicker-free chat view (issue 38), on a real pseudo-terminal, counted not timed.

One scripted session from the source tree (``tests/cli/tui_pty.py`` keeps every
byte the view writes and a log of what woke its loop): a long streamed answer,
an approval overlay opened and answered, the slash autocomplete opened and
closed, two resizes (SIGWINCH), Ctrl-L, scrolling, then an idle spell.

* After the first frame the view never clears the screen (``ESC[2J``) or the
  scrollback (``ESC[3J``): curses' ``clear``/``resizeterm`` are not used; cells
  are overwritten in place.
* Idle, nothing wakes the loop: between two keys typed a while apart the log
  holds no wake-up but the second key's (the old loop woke every 0.5 s).
* While an answer streams, the bytes written stay within 2x the UTF-8 bytes of
  the cells that changed between frames.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from e2e.e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn
from tui_pty import CLEAR_SCREEN, CLEAR_SCROLLBACK, PtyView

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")


def _answer(tokens: int) -> list[str]:
    """Prose in paragraphs of 40 words: lines wrap at the screen's width, as answers do."""
    return [f"word{n % 89} " if n % 40 != 39 else f"end{n}.\n\n" for n in range(tokens)]


def _between(
    log: list[list[object]], first: list[object], second: list[object]
) -> list[list[object]]:
    start = log.index(first)
    return log[start + 1 : log.index(second, start + 1)]


def test_a_long_session_never_clears_and_the_idle_view_sleeps(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    words = _answer(400)
    script = [
        Turn.text_only(words, delay=0.002),
        Turn.tools([ToolSpec("bash", json.dumps({"command": "echo quiet-ok"}))]),
        Turn.text_only("done with **the** command."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        view = PtyView(ws, clean_env(tmp_path), tmp_path / "log.jsonl")
        try:
            first_frame = view.expect("Ask anything")
            view.wait_log(["ready"])
            view.quiet(0.3)
            # 1. a long streamed answer
            before = view.quiet(0.3)
            view.send("stream please\r")
            view.wait_log(["job_done"])
            after = view.quiet(0.5)
            log = view.log()
            enter = log.index(["key", "enter", ""])
            need = sum(int(e[1]) for e in log[enter:] if e[0] == "draw")  # type: ignore[call-overload]
            written = after - before
            assert need > 0 and written <= 2 * need, (written, need, len(words))
            # 2. an approval overlay opens and closes
            view.send("run it\r")
            view.expect("allow bash")
            view.send("1")
            view.wait_log(["job_done"], count=2)
            # 3. the slash autocomplete opens and closes; a resize each way; Ctrl-L; scrolling
            view.send("/")
            view.quiet(0.3)
            view.send("\x15")  # Ctrl-U
            view.quiet(0.3)
            view.set_size(30, 100)
            view.quiet(0.3)
            view.set_size(20, 60)
            view.quiet(0.3)
            view.send("\x0c")  # Ctrl-L
            for key in (
                "\x1b[5~",
                "\x1b[5~",
                "\x1b[H",
                "\x1b[6~",
                "\x1b[F",
            ):  # PgUp PgUp Home PgDn End
                view.send(key)
                view.quiet(0.2)
            # 4. idle: two keys typed a while apart
            view.send("x")
            view.wait_log(["key", "text", "x"])
            time.sleep(1.6)  # three wake-ups of the old 0.5 s timer
            view.send("y")
            view.wait_log(["key", "text", "y"])
            view.send("\x15\x04")  # Ctrl-U, Ctrl-D
        finally:
            code = view.close()
    out = bytes(view.out)
    assert code == 0, out[-600:]
    log = view.log()
    idle = _between(log, ["key", "text", "x"], ["key", "text", "y"])
    assert [e for e in idle if e[0] == "wake"] == [["wake", "input"]], idle
    assert out.find(CLEAR_SCREEN) < first_frame  # curses clears once, for the first frame
    assert out.find(CLEAR_SCREEN, first_frame) == -1
    assert CLEAR_SCROLLBACK not in out
    assert b"quiet-ok" in out  # the approval ran the command
    assert sum(1 for e in log if e[0] == "draw") > 50  # a long session of frames was checked
