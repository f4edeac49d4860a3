"""Remote file layer over SFTP: the one module that speaks to ``sftp``.

Every operation is one ``sftp -b -`` batch run over the host's ControlMaster,
so no second authentication happens. Paths are absolute remote paths (sftp
resolves relative ones against the login directory, which may not be $HOME).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from reasonix.lazy import dataclass
from reasonix.remote.connection import Connection
from reasonix.remote.errors import RemoteError

__all__ = ["Entry", "SftpFS"]


@dataclass(frozen=True)
class Entry:
    """One directory entry as ``ls -l`` shows it."""

    name: str
    size: int
    is_dir: bool
    mode: str


def _q(path: str) -> str:
    # sftp batch syntax: double-quoted arguments with backslash escapes.
    if any(c in path for c in "\n\r\0"):
        raise RemoteError(f"invalid remote path {path!r}")
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SftpFS:
    """list/stat/read/write/mkdir/rename on one connected host."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def _batch(self, commands: list[str], timeout: float = 300) -> str:
        argv = self.conn.argv([], program="sftp")
        argv[1:1] = ["-q", "-b", "-"]
        proc = subprocess.run(
            argv,
            input="\n".join(commands).encode() + b"\n",
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise RemoteError(f"{self.conn.host.name}: sftp failed: {err or proc.returncode}")
        return proc.stdout.decode("utf-8", "replace")

    def listdir(self, path: str) -> list[Entry]:
        """Entries of the directory ``path`` (without . and ..)."""
        out = self._batch([f"ls -la {_q(path)}"])
        entries = []
        for line in out.splitlines():
            parts = line.split(None, 8)
            if len(parts) < 9 or line.startswith("sftp>"):
                continue
            name = os.path.basename(parts[8].rstrip("/"))
            if name in (".", ".."):
                continue
            size = int(parts[4]) if parts[4].isdigit() else 0
            entries.append(Entry(name, size, parts[0].startswith("d"), parts[0]))
        return sorted(entries, key=lambda e: e.name)

    def stat(self, path: str) -> Entry | None:
        """The entry for ``path``, or None when it does not exist."""
        parent, name = os.path.split(path.rstrip("/") or "/")
        try:
            for entry in self.listdir(parent or "/"):
                if entry.name == name:
                    return entry
        except RemoteError:
            return None
        return None

    def read(self, path: str) -> bytes:
        """The whole content of the remote file ``path``."""
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / "data"
            self._batch([f"get {_q(path)} {_q(str(local))}"])
            return local.read_bytes()

    def get(self, path: str, local: Path) -> None:
        """Copy the remote file ``path`` to ``local``."""
        self._batch([f"get {_q(path)} {_q(str(local))}"])

    def put(self, local: Path, path: str, mode: int | None = None) -> None:
        """Copy ``local`` to ``path`` (via a temporary name, then rename: never half a file)."""
        tmp = f"{path}.part-{os.getpid()}"
        cmds = [f"put {_q(str(local))} {_q(tmp)}"]
        if mode is not None:
            cmds.append(f"chmod {mode:o} {_q(tmp)}")
        cmds += [f"-rm {_q(path)}", f"rename {_q(tmp)} {_q(path)}"]
        self._batch(cmds)

    def write(self, path: str, data: bytes, mode: int | None = None) -> None:
        """Write ``data`` to the remote file ``path``."""
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / "data"
            local.write_bytes(data)
            self.put(local, path, mode)

    def mkdir(self, path: str) -> None:
        """Create ``path`` and missing parents (existing ones are fine)."""
        parts = [p for p in path.split("/") if p]
        cmds = []
        for i in range(1, len(parts) + 1):
            cmds.append(f"-mkdir {_q('/' + '/'.join(parts[:i]))}")
        self._batch(cmds)
        entry = self.stat(path)
        if entry is None or not entry.is_dir:
            raise RemoteError(f"{self.conn.host.name}: could not create directory {path}")

    def rename(self, old: str, new: str) -> None:
        """Rename ``old`` to ``new``."""
        self._batch([f"rename {_q(old)} {_q(new)}"])
