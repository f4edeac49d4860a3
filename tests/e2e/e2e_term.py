"""A child process on a pseudo-terminal, for driving the line chat in e2e tests."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

_CTTY = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class Term:
    """``expect`` reads until a text appears; ``send`` types; ``screen`` is all output so far."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        import pty

        self.master, slave = pty.openpty()
        wrapper = [sys.executable, "-c", _CTTY, *argv]  # the pty becomes the ctty (^C works)
        self.proc = subprocess.Popen(
            wrapper, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.seen = ""
        self.screen = ""

    def expect(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"did not see {text!r}; screen so far:\n{self.screen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError(f"terminal closed before {text!r}:\n{self.screen}")
                chunk = data.decode("utf-8", "replace")
                self.seen += chunk
                self.screen += chunk
        head, _, self.seen = self.seen.partition(text)
        return head

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)
