"""What the chat view has imported when it draws its first frame (issue 20).

``reasonix`` with no command runs in a real pseudo-terminal on a clean
interpreter (a virtual environment of its own: no ``.pth`` file loads
anything first). ``Screen.draw`` is wrapped to write down ``sys.modules`` the
first time it is called and then draws as always; the test waits for the frame
on the terminal, leaves with Ctrl-D and checks the *set*. No timing is
measured. The runtime (config, provider, agent) is built on a thread after
the first frame, so none of it may be there, nor the modules the first frame
was freed of: ``argparse`` (a plain chat command line is data,
``cli/flags.py``), ``dataclasses`` (and ``inspect`` behind it), ``threading`` and
``queue`` (no thread runs before the first frame; the inbox is the C queue),
and the cards and overlay panels an empty chat does not draw; nor ``typing``
(with ``re`` and ``enum`` behind it, issue 38): the first-frame modules name only
types they import at run time, and the view's runtime half
(``reasonix.cli.tui.live``, which may use typing) is imported by the boot thread.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from e2e.e2e_task_env import clean_env, clean_python, write_project
from e2e.e2e_term import Term
from fakes import FakeServer

FORBIDDEN = frozenset(
    {
        "argparse", "gettext", "locale", "dataclasses", "inspect",
        "shutil", "tempfile", "json", "pathlib", "socket", "subprocess",
        "threading", "queue", "heapq", "typing", "re", "enum", "reasonix.errors",
        "reasonix.cli.tui.cards", "reasonix.cli.tui.markdown", "reasonix.cli.tui.diff",
        "reasonix.cli.tui.overlays", "reasonix.cli.tui.live", "reasonix.lazy",
        "reasonix.boot", "reasonix.config.loader", "reasonix.agent.loop",
        "reasonix.provider", "reasonix.tool", "reasonix.permission", "reasonix.command",
    }
)  # fmt: skip

_DRIVER = r"""
import sys
before = set(sys.modules)  # a clean interpreter's start: nothing of the chat yet
out = sys.argv[1]
from reasonix.cli.tui import screen

draw = screen.Screen.draw
def first_draw(self, *args, **kwargs):
    if not first_draw.seen:
        first_draw.seen = True
        with open(out, "w") as fh:
            fh.write("\n".join(sorted(m for m in sys.modules if m not in before)))
    return draw(self, *args, **kwargs)
first_draw.seen = False
screen.Screen.draw = first_draw
sys.argv = ["reasonix"]
import runpy
runpy.run_module("reasonix", run_name="__main__")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")
@pytest.mark.parametrize("trusted_by", ["environment", "store"])
def test_the_first_frame_is_drawn_before_the_runtime_and_its_heavy_modules(
    tmp_path: Path, trusted_by: str
) -> None:
    python = clean_python(tmp_path)
    ws, out = tmp_path / "repo", tmp_path / "modules.txt"
    with FakeServer("openai", []) as srv:
        write_project(ws, srv.url)  # it declares a provider: the folder must be trusted
        env = {**clean_env(tmp_path), "TERM": "xterm-256color"}
        if trusted_by == "store":  # as a user trusts it: the check before the frame reads the store
            del env["REASONIX_TRUST_WORKSPACE"]
            home = Path(env["REASONIX_HOME"])
            home.mkdir(parents=True, exist_ok=True)
            (home / "trusted-workspaces").write_text(f"{ws.resolve()}\n")
        term = Term([python, "-c", _DRIVER, str(out)], ws, env)
        try:
            term.expect("Ask anything")
            term.expect("new session")  # the runtime is up: leaving is clean
            term.send("\x04")  # Ctrl-D leaves
        finally:
            code = term.close()
    assert code == 0, term.screen
    loaded = set(out.read_text().split())
    assert "reasonix.cli.tui.app" in loaded and "curses" in loaded  # the view drew it
    assert not loaded & FORBIDDEN, f"loaded before the first frame: {sorted(loaded & FORBIDDEN)}"
