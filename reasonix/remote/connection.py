"""One ControlMaster per host, owned by this process, and commands over it."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled
from reasonix.lazy import dataclass
from reasonix.remote.askpass import AskpassServer, PromptCallback
from reasonix.remote.errors import (
    ConnectionLost,
    PromptFailed,
    RemoteError,
    classify_ssh_failure,
)
from reasonix.remote.ssh import Host, SshOptions, build_argv, control_dir, control_path

__all__ = ["Completed", "Connection", "quote"]


def quote(words: list[str]) -> list[str]:
    """Shell-quote words for the remote shell (ssh joins them with spaces)."""
    return [shlex.quote(w) for w in words]


@dataclass
class Completed:
    """The result of one remote command."""

    code: int
    stdout: bytes
    stderr: str


class Connection:
    """A live master connection to one host; use as a context manager."""

    def __init__(
        self,
        host: Host,
        *,
        on_prompt: PromptCallback | None = None,
        socket_dir: str | None = None,
        keepalive: int = 15,
        connect_timeout: int = 15,
    ) -> None:
        self.host = host
        self._on_prompt = on_prompt
        self._dir = control_dir(socket_dir)
        self.control_path = control_path(self._dir, host)
        self.keepalive = keepalive
        self.connect_timeout = connect_timeout
        self.master: subprocess.Popen[bytes] | None = None
        self.prompts: list[tuple[str, str]] = []

    # -- lifecycle ---------------------------------------------------------

    def open(self, cancel: Cancel | None = None) -> Connection:
        """Start the master and wait until it accepts channels (authenticates once)."""
        if os.path.exists(self.control_path):
            if self._check():
                raise RemoteError(
                    f"{self.host.name}: another Reasonix connection to this host is open "
                    f"(control socket {self.control_path})"
                )
            os.unlink(self.control_path)  # a stale socket left by a killed master
        opts = SshOptions(
            control_path=self.control_path,
            master=True,
            keepalive=self.keepalive,
            connect_timeout=self.connect_timeout,
        )
        with AskpassServer(self._dir, self._on_prompt) as ask:
            env = {**os.environ, **ask.env()}
            self.master = subprocess.Popen(
                build_argv(self.host, opts),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,  # our Ctrl-C must not kill it mid-teardown
            )
            try:
                self._wait_ready(cancel)
            except RemoteError:
                if ask.failure is None:
                    raise
                kind, cause = ask.failure
                raise PromptFailed(
                    f"{self.host.name}: answering ssh's {kind} prompt failed "
                    f"({type(cause).__name__}: {cause}), so the connection was refused"
                ) from cause
            finally:
                self.prompts = list(ask.prompts)
        return self

    def _wait_ready(self, cancel: Cancel | None) -> None:
        assert self.master is not None
        deadline = time.monotonic() + self.connect_timeout + 120  # prompts take human time
        while True:
            if self.master.poll() is not None:
                _, raw = self.master.communicate()
                err = raw.decode("utf-8", "replace") if raw else ""
                code = self.master.returncode
                self.master = None
                raise classify_ssh_failure(self.host.name, code, err)
            if os.path.exists(self.control_path) and self._check():
                return
            if cancel is not None and cancel.cancelled:
                self.close()
                raise Cancelled(cancel.reason)
            if time.monotonic() > deadline:
                self.close()
                raise RemoteError(f"{self.host.name}: timed out waiting for the SSH connection")
            time.sleep(0.05)

    def _check(self) -> bool:
        argv = self.control_argv("check")
        return subprocess.run(argv, capture_output=True, check=False).returncode == 0

    def control_argv(self, op: str, *extra: str) -> list[str]:
        """argv of ``ssh -O op`` (check, exit, forward, cancel) on this master."""
        base = build_argv(self.host, SshOptions(control_path=self.control_path, keepalive=0))
        # "ssh -O op" goes before the destination.
        dest = base.index("--")
        return [*base[:dest], "-O", op, *extra, *base[dest:]]

    @property
    def alive(self) -> bool:
        """True while the master process runs and answers."""
        return self.master is not None and self.master.poll() is None and self._check()

    def close(self) -> None:
        """Stop the master (``-O exit``), then make sure the process is gone."""
        master, self.master = self.master, None
        if master is None:
            return
        if master.poll() is None:
            subprocess.run(self.control_argv("exit"), capture_output=True, check=False)
            try:
                master.wait(timeout=5)
            except subprocess.TimeoutExpired:
                master.kill()
                master.wait()
        if master.stderr:
            master.stderr.close()
        try:
            os.unlink(self.control_path)
        except OSError:
            pass

    def __enter__(self) -> Connection:
        if self.master is None:
            self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- commands ----------------------------------------------------------

    def argv(self, command: list[str], *, tty: bool = False, program: str = "ssh") -> list[str]:
        """argv that runs ``command`` (quoted words) over the master."""
        opts = SshOptions(control_path=self.control_path, tty=tty, keepalive=0)
        return build_argv(self.host, opts, command, program=program)

    def run(
        self,
        script: str,
        *,
        stdin: bytes | None = None,
        timeout: float = 120,
        cancel: Cancel | None = None,
    ) -> Completed:
        """Run one ``sh -c`` script remotely and collect its output."""
        argv = self.argv(["sh", "-c", shlex.quote(script)])
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        if cancel is not None:
            cancel.on_cancel(proc.kill)
        try:
            out, err = proc.communicate(stdin or b"", timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            msg = f"{self.host.name}: remote command timed out after {timeout:.0f}s"
            raise RemoteError(msg) from None
        if cancel is not None and cancel.cancelled:
            raise Cancelled(cancel.reason)
        text = err.decode("utf-8", "replace")
        if proc.returncode == 255:
            raise ConnectionLost(f"{self.host.name}: the SSH connection was lost ({text.strip()})")
        return Completed(proc.returncode, out, text)

    def home(self) -> str:
        """The remote ``$HOME`` (absolute: sftp paths resolve against it)."""
        res = self.run('printf %s "$HOME"')
        if res.code != 0 or not res.stdout.startswith(b"/"):
            raise RemoteError(
                f"{self.host.name}: cannot read the remote $HOME ({res.stderr.strip()})"
            )
        return res.stdout.decode()

    @property
    def socket_dir(self) -> Path:
        """The private directory holding the control socket."""
        return self._dir
