"""The chat view's speed in a pseudo-terminal: keystroke-to-screen latency and first paint.

Keystroke latency: the .pyz resumes (``-c``) a session whose transcript is
about 10,000 lines, then single characters are typed into the composer; each
is timed from the write to the terminal until its bytes come back in the
screen output. The baseline is a bare curses echo loop (``get_wch`` →
``addstr`` → ``refresh``) in the same terminal. First paint: from process
start to the first frame (the composer's placeholder) against the same
one-line painter packed as a zipapp, the floor of any ``.pyz`` (the interpreter
imports ``runpy`` before an archive's first line; issue 38's target is <= 1.3x),
and against a bare ``curses.wrapper`` that paints one line (issue 20's <= 1.5x).

Every program runs on a clean interpreter (``bench/bare_python.py``: the
development environment's Python imports a dozen modules at start-up that a
user's does not) and is started directly on the terminal (it becomes the
session leader with the terminal as its controlling one before ``exec``), so
a start is timed from the ``fork`` of the program itself.

Median of N keystrokes / N starts, interleaved (the starts in rotating order). Then the
quiet-terminal figures of issue 38 (``bench/tui_quiet.py``: idle and streaming CPU, bytes
per streamed token against the changed cells, 5,000- against 50-block scroll cost;
``--quiet-only`` runs just those, ``--no-quiet`` leaves them out). Build first:
``make build``. Prints one line per measure with both figures and the ratio.
"""

from __future__ import annotations

import argparse
import atexit
import fcntl
import os
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from bare_python import bare_python, one_line_zipapp  # noqa: E402
from fakes import FakeServer  # noqa: E402

ROWS, COLS = 24, 80
KEYS = "éüñçøåß"  # multi-byte: never part of an escape sequence, so a match is the echo
BARE_ECHO = """\
import curses, locale
locale.setlocale(locale.LC_ALL, "")
def main(s):
    curses.raw(); s.addstr(0, 0, "ready"); s.refresh()
    while True:
        ch = s.get_wch()
        if ch == "\\x04":
            return
        s.addstr(1, 0, ch * 3); s.refresh()
curses.wrapper(main)
"""
BARE_PAINT = """\
import curses
def main(s):
    s.addstr(0, 0, "Ask anything"); s.refresh(); s.getch()
curses.wrapper(main)
"""


def _take_terminal() -> None:
    """In the child before ``exec``: a new session whose controlling terminal is stdin
    (no interpreter of its own runs first, so only the program's start is timed)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Pty:
    """A program on a pseudo-terminal of ROWS x COLS."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True,
            preexec_fn=_take_terminal,
        )  # fmt: skip
        os.close(slave)
        self.seen = b""

    def wait_for(self, marker: bytes, timeout: float = 30.0) -> float:
        """Seconds until ``marker`` shows in new output (which is then consumed)."""
        deadline = time.perf_counter() + timeout
        while marker not in self.seen:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {marker!r}; output so far: {self.seen[-400:]!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise EOFError(f"exited before {marker!r}: {self.seen[-400:]!r}")
                self.seen += chunk
        found = time.perf_counter()
        self.seen = self.seen.split(marker, 1)[1]
        return found

    def drain(self, quiet: float = 0.3) -> None:
        """Read until the program has been silent for ``quiet`` seconds."""
        while select.select([self.master], [], [], quiet)[0]:
            try:
                if not os.read(self.master, 65536):
                    return
            except OSError:
                return
        self.seen = b""

    def keystroke(self, ch: str) -> float:
        """Seconds from writing ``ch`` to its echo on screen."""
        start = time.perf_counter()
        os.write(self.master, ch.encode())
        return self.wait_for(ch.encode()) - start

    def close(self) -> None:
        """End the program (Ctrl-D, then a kill if it lingers)."""
        try:
            os.write(self.master, b"\x15\x04")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self.master)


def make_session(ws: Path, url: str, lines: int) -> None:
    """A workspace wired to the fake and one stored session of about ``lines`` rows."""
    from reasonix.agent.session import Session
    from reasonix.provider.types import Message, Role

    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\n'
        f'kind = "openai"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
    )
    body = "\n".join(
        ["## A heading", "", "Some **bold** text and `code` in a paragraph.", "",
         "- a list item", "- another item", "", "```python", "def f(x):",
         "    return x + 1", "```", "", "A closing line."]
    )  # fmt: skip
    per_turn = body.count("\n") + 4  # answer rows + the user row + gaps
    with Session.create(ws, {"system": "bench", "model": "fake/fake-model"}) as s:
        for i in range(lines // per_turn):
            s.append_message(Message(Role.USER, f"question {i}"))
            s.append_message(Message(Role.ASSISTANT, body))


def latency(argv: list[str], env: dict[str, str], cwd: Path, ready: bytes, n: int) -> list[float]:
    term = Pty(argv, env, cwd)
    try:
        term.wait_for(ready)
        term.drain()
        out = []
        for i in range(n + 5):
            took = term.keystroke(KEYS[i % len(KEYS)])
            if i >= 5:  # the first few warm caches
                out.append(took)
            if i % 40 == 39:
                os.write(term.master, b"\x15")  # Ctrl-U keeps the composer one row
                term.drain(0.1)
        return out
    finally:
        term.close()


def first_paint(argv: list[str], env: dict[str, str], cwd: Path, ready: bytes) -> float:
    term = Pty(argv, env, cwd)
    try:
        return term.wait_for(ready) - term.start
    finally:
        term.close()


def main() -> int:
    """Measure both programs and print the figures with their ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=60, help="keystrokes to time")
    ap.add_argument("--starts", type=int, default=9, help="start-ups to time (a multiple of 3)")
    ap.add_argument("--lines", type=int, default=10_000, help="transcript rows to resume")
    ap.add_argument("--pyz", default=str(ROOT / "dist" / "reasonix.pyz"))
    ap.add_argument("--idle-seconds", type=float, default=60, help="idle CPU span")
    ap.add_argument("--stream-seconds", type=float, default=30, help="streaming CPU span")
    ap.add_argument("--scroll-rounds", type=int, default=5, help="scroll cost rounds")
    ap.add_argument("--quiet-only", action="store_true", help="only the quiet-terminal part")
    ap.add_argument("--no-quiet", action="store_true", help="skip the quiet-terminal part")
    args = ap.parse_args()
    if not Path(args.pyz).is_file():
        print(f"tui: {args.pyz} missing; run `python build_zipapp.py` first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="reasonix-bench-tui-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # a bench leaves nothing behind
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "FAKE_PROVIDER_KEY": "sk-fake",
        "REASONIX_HOME": str(tmp / "home"),
        "REASONIX_CACHE_HOME": str(tmp / "cache"),
    }
    os.environ["REASONIX_HOME"] = env["REASONIX_HOME"]  # where make_session stores it
    python = bare_python()
    ours = [python, str(Path(args.pyz).resolve())]  # the runs start in other dirs
    bare_echo = [python, "-c", BARE_ECHO]
    bare_paint = [python, "-c", BARE_PAINT]
    # The same painter as a one-line zipapp: the floor for any .pyz (the interpreter
    # imports runpy before an archive's first line runs; see bench/startup.py).
    zipped_paint = [python, str(one_line_zipapp(BARE_PAINT))]
    if args.quiet_only:
        import tui_quiet

        tui_quiet.run(args, ours, python, env, tmp)
        return 0
    with FakeServer("openai", []) as srv:
        ws, fresh = tmp / "repo", tmp / "fresh"
        make_session(ws, srv.url, args.lines)
        make_session(fresh, srv.url, 0)
        from reasonix.config.trust import grant

        for trusted in (ws, fresh):  # as a user would, once: the chat then checks the store
            grant(trusted)
        first_paint(ours, env, fresh, b"Ask anything")  # warm-up: unpack the archive once
        # "to compact)" is in the footer once the resumed transcript is loaded and measured.
        ours_keys = latency([*ours, "-c"], env, ws, b"to compact)", args.keys)
        bare_keys = latency(bare_echo, env, ws, b"ready", args.keys)
        paints: list[float] = []
        bare_paints: list[float] = []
        zipped_paints: list[float] = []
        starts = [(ours, paints), (bare_paint, bare_paints), (zipped_paint, zipped_paints)]
        for i in range(args.starts):
            # Each program takes each place in a round equally often: a start right after
            # another program's is faster or slower than one after its own.
            for argv, times in starts[i % 3 :] + starts[: i % 3]:
                times.append(first_paint(argv, env, fresh, b"Ask anything"))
    k, kb = statistics.median(ours_keys), statistics.median(bare_keys)
    p90 = sorted(ours_keys)[int(len(ours_keys) * 0.9)]
    print(
        f"tui: keystroke-to-screen reasonix={k * 1000:.2f}ms (p90 {p90 * 1000:.2f}ms, "
        f"{args.lines} transcript lines) bare-curses-echo={kb * 1000:.2f}ms "
        f"ratio={k / kb:.2f}x (median of {len(ours_keys)})"
    )
    f, fb = statistics.median(paints), statistics.median(bare_paints)
    fz = statistics.median(zipped_paints)
    verdict = "ok" if f / fz <= 1.3 else "OVER"
    print(
        f"tui: first-paint reasonix={f * 1000:.0f}ms one-line-zipapp-painter={fz * 1000:.0f}ms "
        f"ratio={f / fz:.2f}x target<=1.3x {verdict} (issue 38; median of {args.starts}, "
        f"interleaved); bare curses.wrapper {fb * 1000:.0f}ms ({f / fb:.2f}x; a .pyz's floor "
        f"is {fz / fb:.2f}x of it)"
    )
    if args.no_quiet:
        return 0
    import tui_quiet  # issue 38: idle and streaming CPU, bytes per token, scroll cost

    tui_quiet.run(args, ours, python, env, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
