"""The chat view from the source tree on a real pseudo-terminal, with every byte it writes kept.

Used by the quiet-terminal tests (issue 38) and ``bench/tui.py``: a child runs
``reasonix`` through a small driver that writes down, in order, what woke the
view's loop (``Screen.wait``'s answer) and which keys it read, and saves that
log when the view leaves. A reader thread keeps every output byte, so a test
can look for escape sequences after the first frame and count bytes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CLEAR_SCREEN, CLEAR_SCROLLBACK = b"\x1b[2J", b"\x1b[3J"

DRIVER = r"""
import json, os, sys
log_file = open(sys.argv[1], "w", buffering=1)  # one JSON list a line, written as it happens
if os.environ.get("TUI_DRIVER_PYZ"):  # the built .pyz as a library, as remote serve uses it
    sys.path.insert(0, os.environ["TUI_DRIVER_PYZ"])
    from reasonix._pyzarchive import importable
    importable(os.environ["TUI_DRIVER_PYZ"])
def log(*entry):
    log_file.write(json.dumps(entry) + "\n")
from reasonix.cli.tui import live, screen
from reasonix.cli.tui.width import char_width

wait, keys, draw = screen.Screen.wait, screen.Screen.keys, screen.Screen.draw
def logged_wait(self, *args, **kwargs):
    cause = wait(self, *args, **kwargs)
    log("wake", cause)
    return cause
def logged_keys(self):
    got = keys(self)
    for key in got:
        log("key", key.name, key.text)
    return got
prev = []
def cells(row, width):
    out = []
    for text, style in row:
        for ch in text:
            out.append((ch, style))
            if char_width(ch) == 2:
                out.append(("", style))
    return out[:width] + [(" ", "")] * (width - len(out))
def logged_draw(self, rows, cursor):
    height, width = self.stdscr.getmaxyx()
    now = [cells(r, width) for r in rows[:height]]
    if len(prev) != len(now) or (prev and len(prev[0]) != width):
        prev[:] = [[(None, None)] * width for _ in now]
    need = 0  # bytes the changed cells take at least: their characters, in UTF-8
    for old, new in zip(prev, now):
        need += sum(len(n[0].encode()) for o, n in zip(old, new) if o != n)
    prev[:] = now
    log("draw", need)
    return draw(self, rows, cursor)
screen.Screen.wait, screen.Screen.keys = logged_wait, logged_keys
screen.Screen.draw = logged_draw
for name in ("_ready", "_job_done"):
    def hook(real):
        def logged(self, *args, **kwargs):
            out = real(self, *args, **kwargs)
            log(real.__name__.strip("_"))
            return out
        return logged
    setattr(live.Live, name, hook(getattr(live.Live, name)))
sys.argv = ["reasonix", *sys.argv[2:]]
import runpy
runpy.run_module("reasonix", run_name="__main__")
"""

_CTTY = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class PtyView:
    """``reasonix`` (chat) on a pty of ``rows`` x ``cols``; ``out`` holds every byte written."""

    def __init__(
        self,
        ws: Path,
        env: dict[str, str],
        log: Path,
        *flags: str,
        rows: int = 24,
        cols: int = 80,
        python: str = sys.executable,
    ) -> None:
        self.master, slave = os.openpty()
        self.log_path = log
        self.set_size(rows, cols)
        argv = [python, "-c", _CTTY, python, "-c", DRIVER, str(log), *flags]
        env = {**env, "TERM": env.get("TERM", "xterm-256color")}
        self.proc = subprocess.Popen(
            argv, cwd=ws, env=env, stdin=slave, stdout=slave, stderr=slave,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.out = bytearray()
        self._cond = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.5)
                if not ready:
                    if self.proc.poll() is not None:
                        break
                    continue
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            if not data:
                break
            with self._cond:
                self.out += data
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def set_size(self, rows: int, cols: int) -> None:
        """Change the terminal's size (the kernel sends the view SIGWINCH)."""
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def expect(self, text: str | bytes, start: int = 0, timeout: float = 30.0) -> int:
        """Wait until ``text`` is in the output from offset ``start``; the offset after it."""
        want = text.encode() if isinstance(text, str) else text
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                at = self.out.find(want, start)
                if at >= 0:
                    return at + len(want)
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    tail = bytes(self.out[-600:]).decode("utf-8", "replace")
                    raise AssertionError(f"did not see {want!r}; output ends:\n{tail}")
                self._cond.wait(left)

    def quiet(self, seconds: float = 0.3) -> int:
        """Wait until nothing was written for ``seconds``; the output's length then."""
        with self._cond:
            while True:
                size = len(self.out)
                self._cond.wait(seconds)
                if len(self.out) == size:
                    return size

    def send(self, data: str | bytes) -> None:
        """Type ``data``."""
        os.write(self.master, data.encode() if isinstance(data, str) else data)

    def close(self, timeout: float = 20.0) -> int:
        """Wait for the view to leave (the caller sent Ctrl-D; a test that failed before it
        did gets Ctrl-U Ctrl-D after a few seconds); its exit code."""
        try:
            try:
                return self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    self.send("\x15\x04")
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._reader.join(timeout=5)
            os.close(self.master)

    def log(self) -> list[list[object]]:
        """The driver's log so far, in order: ``["wake", cause]`` (what ended a wait),
        ``["key", name, text]`` (a key read), ``["draw", need]`` (a frame painted; ``need``:
        the UTF-8 bytes of the cells that differ from the frame before), ``["ready"]`` (the
        runtime is up) and ``["job_done"]`` (a turn or command ended)."""
        try:
            text = self.log_path.read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.endswith("]")]

    def wait_log(self, entry: list[object], count: int = 1, timeout: float = 30.0) -> int:
        """Wait until ``entry`` is in the log ``count`` times; the log's length then."""
        deadline = time.monotonic() + timeout
        while True:
            log = self.log()
            if sum(e == entry for e in log) >= count:
                return len(log)
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"no {entry} x{count} in the log: {log[-20:]}")
            time.sleep(0.05)
