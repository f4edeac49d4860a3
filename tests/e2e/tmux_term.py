"""Drive a program in a real terminal: a private tmux server, keys in, screen text out."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

__all__ = ["Tmux", "need_tmux"]


def need_tmux() -> str:
    """The tmux binary, or skip loudly (CI installs it: .ci/run)."""
    exe = shutil.which("tmux")
    if exe is None:
        pytest.skip(
            "MISSING tmux: the terminal tests drive the chat view in tmux (apt-get install tmux)"
        )
    return exe


class Tmux:
    """One program in one tmux pane on its own server socket (``tmux -L``)."""

    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        conf_dir: Path,
        width: int = 80,
        height: int = 24,
    ) -> None:
        self.exe = need_tmux()
        self.sock = f"rx-tui-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        conf = conf_dir / "tmux.conf"
        conf.write_text("set -g history-limit 5000\nset -g status off\n")
        # A clean environment but the TERM tmux gives its panes. The shell stays after the
        # program to print its exit status: tmux may drop a dead pane's last output.
        env_args = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        command = (
            f'env -i TERM="$TERM" {env_args} {shlex.join(argv)}; '
            'printf "\\n[exited %s]\\n" "$?"; sleep 600'
        )
        self._tmux("-f", str(conf), "new-session", "-d", "-x", str(width), "-y", str(height),
                   "-c", str(cwd), command)  # fmt: skip

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(
            [self.exe, "-L", self.sock, *args], capture_output=True, text=True, timeout=20
        )
        if out.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {out.stderr}")
        return out.stdout

    def screen(self) -> str:
        """The visible screen as text (trailing spaces trimmed by tmux)."""
        return self._tmux("capture-pane", "-p", "-t", "0")

    def rows(self) -> list[str]:
        """The screen's rows."""
        return self.screen().split("\n")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        """Poll until ``text`` is on screen; returns the screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            if "[exited " in screen:  # the program is gone: the text will not come
                break
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")

    def wait_gone(self, text: str, timeout: float = 30.0) -> str:
        """Poll until ``text`` is no longer on screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text not in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} stayed on screen:\n{self.screen()}")

    def keys(self, *names: str) -> None:
        """tmux key names: Enter, Escape, BTab, C-d, PPage, M-Enter …"""
        self._tmux("send-keys", "-t", "0", *names)

    def type(self, text: str) -> None:
        """Literal text, as typed."""
        self._tmux("send-keys", "-t", "0", "-l", text)

    def paste(self, text: str) -> None:
        """A bracketed paste (the program asked for it with ESC[?2004h)."""
        proc = subprocess.run(
            [self.exe, "-L", self.sock, "load-buffer", "-"], input=text, text=True, timeout=20
        )
        assert proc.returncode == 0
        self._tmux("paste-buffer", "-p", "-t", "0")

    def resize(self, width: int, height: int) -> None:
        """Change the terminal's size (the program gets SIGWINCH)."""
        self._tmux("resize-window", "-t", "0", "-x", str(width), "-y", str(height))

    def cursor(self) -> tuple[int, int]:
        """(column, row) of the terminal cursor."""
        x, y = self._tmux("display", "-p", "-t", "0", "#{cursor_x} #{cursor_y}").split()
        return int(x), int(y)

    def pane_tty(self) -> str:
        """The pane's terminal device (``/dev/pts/N``)."""
        return self._tmux("display", "-p", "-t", "0", "#{pane_tty}").strip()

    def dead(self) -> bool:
        """True once the program has exited."""
        return "[exited " in self.screen()

    def wait_exit(self, timeout: float = 30.0) -> int:
        """The program's exit status, once it has exited.

        A program that does not exit gets SIGABRT, so that with PYTHONFAULTHANDLER=1 its
        threads' stacks land on the screen the failure shows.
        """
        try:
            screen = self.wait_for("[exited ", timeout)
        except AssertionError:
            shell = self._tmux("display", "-p", "-t", "0", "#{pane_pid}").strip()
            kids = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True)
            for pid in kids.stdout.split():
                subprocess.run(["kill", "-ABRT", pid], capture_output=True)
            time.sleep(1.0)
            history = self._tmux("capture-pane", "-p", "-S", "-300", "-t", "0")
            raise AssertionError(f"the program did not exit:\n{history}") from None
        return int(screen.rsplit("[exited ", 1)[1].split("]", 1)[0])

    def close(self) -> None:
        """Kill the private server and everything in it."""
        subprocess.run([self.exe, "-L", self.sock, "kill-server"], capture_output=True, timeout=20)
