"""The stdio transport: a persistent child process, one JSON message per line.

The child runs in its own process group (session) so shutdown can take down
everything it spawned (``npx`` → ``node`` → …). Its stderr goes to a log
file rather than a pipe: a chatty server can never fill a pipe and stall, and
the log is there to read after a failure. Shutdown follows the spec: close
stdin, wait a grace period, then terminate and finally kill the group.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import PluginError
from reasonix.plugin.mcp.jsonrpc import FramingError, Message, decode_line, encode_line
from reasonix.plugin.mcp.transport import Closed, Inbox, Incoming
from reasonix.tool.children import popen

if TYPE_CHECKING:
    from typing import IO

__all__ = ["ENV_WHITELIST", "StdioTransport", "child_environment"]

# Passed through to servers; anything else (API keys above all) stays with us.
ENV_WHITELIST = (
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "HOMEDRIVE",
    "HOMEPATH",
    "XDG_RUNTIME_DIR",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    # Proxy settings: a server that fetches from the network must reach it the way we do.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)

CLOSE_GRACE_SECONDS = 2.0  # time to exit on its own after stdin closes (the spec's advice)
TERM_GRACE_SECONDS = 1.0  # time between SIGTERM and SIGKILL
MAX_LINE_BYTES = 64 * 1024 * 1024  # a line longer than this is garbage, not a message


def child_environment(
    extra: Mapping[str, str], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whitelisted part of ``base`` (default os.environ) plus ``extra``."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if k in ENV_WHITELIST or k.startswith("LC_")}
    env.update(extra)
    return env


class StdioTransport:
    """Spawn ``command args`` and talk to it over stdin/stdout."""

    def __init__(
        self,
        command: str,
        args: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stderr_log: Path | None = None,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = child_environment(env or {})
        self.cwd = cwd
        self.stderr_log = stderr_log
        self.label = f"stdio: {' '.join([command, *args])}"
        self._inbox = Inbox()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr_file: IO[bytes] | None = None
        self._write_lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._closing = False

    def start(self, cancel: Cancel) -> None:
        """Spawn the child; PluginError when the command cannot be run."""
        exe = shutil.which(self.command, path=self.env.get("PATH")) or self.command
        if self.stderr_log is not None:
            self.stderr_log.parent.mkdir(parents=True, exist_ok=True)
            self._stderr_file = open(self.stderr_log, "ab")  # noqa: SIM115 - lives as long as the child
        try:
            # Own process group (killpg reaches grandchildren) and, on Linux, the
            # parent-death signal: a SIGKILLed Reasonix leaves no server behind.
            self._proc = popen(
                [exe, *self.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr_file if self._stderr_file else subprocess.DEVNULL,
                env=self.env,
                cwd=str(self.cwd) if self.cwd else None,
            )
        except OSError as exc:
            self._close_stderr()
            raise PluginError(f"cannot start {self.command!r}: {exc.strerror or exc}") from exc
        self._reader = threading.Thread(
            target=self._read_stdout, name=f"mcp-stdout {self.command}", daemon=True
        )
        self._reader.start()

    @property
    def pid(self) -> int | None:
        """The child's pid (None before start)."""
        return self._proc.pid if self._proc else None

    def send(self, message: Message) -> None:
        """Write one line to the child's stdin."""
        proc = self._proc
        if proc is None or proc.stdin is None or self._closing:
            raise PluginError("the server is not running")
        data = encode_line(message)
        with self._write_lock:
            try:
                proc.stdin.write(data)
                proc.stdin.flush()
            except (OSError, ValueError) as exc:
                raise PluginError(f"the server stopped reading its input: {exc}") from exc

    def receive(self, timeout: float | None = None) -> Incoming | None:
        """The next message or event value from the child."""
        return self._inbox.get(timeout)

    def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        stream = proc.stdout
        try:
            while True:
                line = stream.readline(MAX_LINE_BYTES)
                if not line:
                    break
                if len(line) >= MAX_LINE_BYTES and not line.endswith(b"\n"):
                    # Drain the rest of the monster line so the next one parses.
                    while line and not line.endswith(b"\n"):
                        line = stream.readline(MAX_LINE_BYTES)
                    self._inbox.put(FramingError("line longer than 64 MiB dropped"))
                    continue
                for item in decode_line(line):
                    self._inbox.put(item)
        except (OSError, ValueError):
            pass  # the pipe was closed under us during shutdown
        code = proc.poll()
        if code is None:
            try:
                code = proc.wait(timeout=CLOSE_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                code = None
        self._inbox.put(Closed(self._exit_reason(code)))

    def _exit_reason(self, code: int | None) -> str:
        if self._closing:
            return "connection closed"
        what = "closed its output" if code is None else f"exited with code {code}"
        tail = self._stderr_tail()
        return f"server {what}" + (f"; stderr: {tail}" if tail else "")

    def _stderr_tail(self, limit: int = 400) -> str:
        if self.stderr_log is None:
            return ""
        try:
            with open(self.stderr_log, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - limit))
                return fh.read().decode("utf-8", "replace").strip().replace("\n", " | ")
        except OSError:
            return ""

    def close(self) -> None:
        """Close stdin, wait out the grace period, then terminate/kill the group."""
        if self._closing:
            return
        self._closing = True
        proc = self._proc
        if proc is not None:
            with self._write_lock:
                try:
                    if proc.stdin is not None:
                        proc.stdin.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=CLOSE_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self._signal_group(proc, signal.SIGTERM)
                try:
                    proc.wait(timeout=TERM_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    self._signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
                    proc.wait(timeout=5.0)
            # The group may hold grandchildren that outlived the leader.
            self._signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
        if self._reader is not None:
            self._reader.join(timeout=5.0)
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        self._close_stderr()
        self._inbox.put(Closed("connection closed"))

    def kill(self) -> None:
        """Kill the whole process group at once (tests and hard cancels)."""
        if self._proc is not None:
            self._signal_group(self._proc, getattr(signal, "SIGKILL", signal.SIGTERM))

    @staticmethod
    def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
        try:
            if sys.platform == "win32":
                proc.kill()
            else:
                os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def _close_stderr(self) -> None:
        if self._stderr_file is not None:
            self._stderr_file.close()
            self._stderr_file = None
