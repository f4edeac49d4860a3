"""Drive a detached ``reasonix serve`` on a remote host (the local half of cli/remote_daemon.py).

Everything lives in one 0700 directory on the remote,
``~/.reasonix/remote/serve/``: the generated ``config.toml`` (its provider is
the relay port of the supervisor), ``.env`` with the broker token (never the
API key), serve's own login ``token`` (0600, made by serve itself through
``--token-file``), ``serve.pid``, ``serve.json``, ``serve.log`` and, while a
``reasonix remote open`` holds the key broker, ``broker.port``. Secrets reach
the remote through the stdin of a ``umask 077`` shell and leave it through
stdout: none is ever on a command line.
"""

from __future__ import annotations

import json
import secrets
import shlex
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass
from reasonix.remote.bootstrap import Installed
from reasonix.remote.connection import Connection
from reasonix.remote.errors import RemoteError
from reasonix.remote.session import TOKEN_VAR

if TYPE_CHECKING:
    from typing import Any

__all__ = ["RELAY_PLACEHOLDER", "RemoteServe"]

RELAY_PLACEHOLDER = "@RELAY_PORT@"

# The .pyz imported as a library: its payload (the whole build) is extracted and imported first.
_BOOT = (
    "import sys; a = sys.argv.pop(1); sys.path.insert(0, a); "
    "from reasonix._pyzarchive import importable; importable(a); "
    "from reasonix.cli import remote_daemon; sys.exit(remote_daemon.main(sys.argv[1:]))"
)

# Writes NUL-separated name/content pairs from stdin into the directory argv[1].
_WRITER = (
    "import os,sys; d=sys.stdin.buffer.read().split(b'\\0'); "
    "[open(os.path.join(sys.argv[1], d[i].decode()), 'wb').write(d[i+1]) "
    "for i in range(0, len(d) - 1, 2)]"
)


@dataclass(frozen=True)
class RemoteServe:
    """The serve directory of one remote account, reached over ``conn``."""

    conn: Connection
    installed: Installed

    @property
    def directory(self) -> str:
        """``~/.reasonix/remote/serve`` on the remote (absolute)."""
        return f"{self.installed.home}/.reasonix/remote/serve"

    def _py(self, *words: str) -> str:
        return " ".join(shlex.quote(w) for w in (self.installed.python, *words))

    def _daemon(self, op: str, timeout: float = 90) -> dict[str, Any]:
        script = self._py("-c", _BOOT, self.installed.path, op, self.directory)
        res = self.conn.run(script, timeout=timeout)
        lines = res.stdout.decode("utf-8", "replace").strip().splitlines()
        try:
            state: dict[str, Any] = json.loads(lines[-1]) if lines else {}
        except ValueError:
            state = {}
        if not state:
            raise RemoteError(
                f"{self.conn.host.name}: remote serve {op} failed: "
                f"{res.stderr.strip() or 'no answer'}"
            )
        return state

    def _write(self, files: dict[str, str]) -> None:
        payload = b"\0".join(
            part for name, text in files.items() for part in (name.encode(), text.encode())
        )
        d = shlex.quote(self.directory)
        script = f"umask 077; mkdir -p {d} && chmod 700 {d} && " + self._py(
            "-c", _WRITER, self.directory
        )
        res = self.conn.run(script, stdin=payload)
        if res.code != 0:
            raise RemoteError(
                f"{self.conn.host.name}: cannot write the serve files: {res.stderr.strip()}"
            )

    def start(self, config_template: str, *, workdir: str, model: str) -> dict[str, Any]:
        """Start serve detached (``running`` in the state answered; ``failed`` otherwise).

        ``config_template`` is the remote config.toml with ``@RELAY_PORT@`` where
        the provider's port goes (the supervisor fills in its relay's port).
        """
        if RELAY_PLACEHOLDER not in config_template:
            raise RemoteError("the remote serve config must name the relay port")
        d, home = self.directory, self.installed.home
        argv = [self.installed.python, self.installed.path, "serve", "--host", "127.0.0.1",
                "--port", "0", "--auth-mode", "token", "--token-file", f"{d}/token",
                "--tunnel"]  # fmt: skip
        if workdir:
            argv += ["--dir", workdir]
        env = [f"REASONIX_HOME={d}", f"REASONIX_STATE_HOME={home}/.reasonix",
               f"REASONIX_CACHE_HOME={home}/.reasonix/cache"]  # fmt: skip
        build = self.installed.path.rsplit("/", 1)[-1]
        meta = {"host": self.conn.host.name, "dir": workdir or home, "model": model,
                "build": build, "argv": ["env", *env, *argv]}  # fmt: skip
        self._write({
            "config.toml.in": config_template,
            ".env": f"{TOKEN_VAR}={secrets.token_urlsafe(24)}\n",
            "meta.json": json.dumps(meta),
        })  # fmt: skip
        return self._daemon("start")

    def status(self) -> dict[str, Any]:
        """The state: ``running``, ``pid``, ``port``, ``uptime``, ``dir``, ``broker`` …"""
        return self._daemon("status", timeout=30)

    def stop(self) -> dict[str, Any]:
        """SIGTERM the supervisor and wait until serve is gone."""
        return self._daemon("stop")

    def logs(self, lines: int = 50) -> str:
        """The last ``lines`` lines of ``serve.log`` ("" when there is none)."""
        log = shlex.quote(f"{self.directory}/serve.log")
        res = self.conn.run(f"[ -f {log} ] && tail -n {int(lines)} {log} || true", timeout=30)
        return res.stdout.decode("utf-8", "replace")

    def _read(self, name: str) -> str:
        path = shlex.quote(f"{self.directory}/{name}")
        res = self.conn.run(f"cat {path}", timeout=30)
        if res.code != 0:
            raise RemoteError(f"{self.conn.host.name}: cannot read the remote serve's {name}")
        return res.stdout.decode("utf-8", "replace").strip()

    def login_token(self) -> str:
        """serve's login token (for the URL's fragment)."""
        return self._read("token")

    def broker_token(self) -> str:
        """The token the remote serve presents to the key broker."""
        for line in self._read(".env").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == TOKEN_VAR:
                return value.strip()
        raise RemoteError(f"{self.conn.host.name}: the remote serve has no broker token")

    def attach_broker(self, remote_port: int) -> None:
        """Tell the relay where the reverse-forwarded broker listens."""
        self._write({"broker.port": f"{int(remote_port)}\n"})

    def detach_broker(self) -> None:
        """Forget the broker (best effort: the link may be gone)."""
        try:
            self.conn.run(f"rm -f {shlex.quote(self.directory + '/broker.port')}", timeout=15)
        except RemoteError:
            pass
