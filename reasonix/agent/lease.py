"""The lease of a session transcript: one live writer per transcript, across processes.

A lease is ``<id>.lease`` beside the transcript, the JSON ``{"pid", "start",
"host", "token"}`` of the process writing it. It is written under a temporary
name first and then hard-linked into place, so it appears complete or not at
all, and the link fails when a lease is already there: that is the exclusive
create. A lease whose process is gone is stale and is taken over. One that
is empty or torn (created but not yet written: an older Reasonix, or a file
system without hard links, writes in place) is held by its creator for
:data:`LEASE_GRACE` seconds, then stale. Taking over renames the stale file
aside (only one process can) and checks that what moved is the very file
judged stale; if another process had meanwhile put its own live lease there,
that one is put back.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.safe_read import LEASE_LIMIT, open_regular, read_bytes
from reasonix.errors import SessionError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["LEASE_GRACE", "Lease", "hostname"]

# How long an empty or torn lease counts as being written by its creator. Writing
# a few dozen bytes takes microseconds; the margin covers a stalled disk or process.
LEASE_GRACE = 10.0
_ATTEMPTS = 10  # each one places the lease, finds it held, or clears a stale one


def hostname() -> str:
    """This machine's name (a lease from another host cannot be checked)."""
    # os.uname avoids importing socket just for this; Windows has COMPUTERNAME.
    if hasattr(os, "uname"):
        return os.uname().nodename
    return os.environ.get("COMPUTERNAME", "")


def _process_start(pid: int) -> str:
    """A token that changes when ``pid`` is reused: /proc start ticks where available."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # The command name (field 2) may contain spaces and parentheses; fields after the last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def _is_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _lease_valid(info: Any) -> bool:
    """A lease as Reasonix writes it; anything else (hand-edited) is stale."""
    if not isinstance(info, dict):
        return False
    pid = info.get("pid")
    return (
        isinstance(pid, int)
        and not isinstance(pid, bool)
        and 0 < pid < 1 << 31
        and _is_str(info.get("host"))
        and _is_str(info.get("start"))
    )


def _lease_alive(info: dict[str, Any]) -> bool:
    if not _lease_valid(info):
        return False
    if info.get("host") not in (None, hostname()):
        return True  # another machine sharing the state dir: we cannot tell, so stay safe
    from reasonix.pids import pid_alive  # only a lease found held asks

    pid = int(info["pid"])
    if not pid_alive(pid):
        return False
    start = str(info.get("start") or "")
    return not start or start == _process_start(pid) or not _process_start(pid)


def _look(path: Path) -> tuple[tuple[object, ...], bytes | None, float]:
    """(identity, content or None when not a small regular file, mtime) of ``path``.

    The identity (inode, mtime, size and content) tells the file judged stale
    from a new one that replaced it, even on a reused inode.
    """
    try:
        fh = open_regular(path, error=SessionError, follow=False)
    except (SessionError, IsADirectoryError):
        st = os.lstat(path)  # a symlink, FIFO, socket …: never a lease we wrote
        return (st.st_dev, st.st_ino, st.st_mode), None, st.st_mtime
    with fh:
        st = os.fstat(fh.fileno())
        data = fh.read(LEASE_LIMIT + 1)
    content = data if len(data) <= LEASE_LIMIT else None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, data), content, st.st_mtime


class Lease:
    """An exclusive claim on one transcript, held by this process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.token = os.urandom(8).hex()
        me = {"pid": os.getpid(), "start": _process_start(os.getpid())}
        self.body = json.dumps({**me, "host": hostname(), "token": self.token})

    def _beside(self, suffix: str) -> Path:
        return self.path.with_name(f"{self.path.name}.{self.token}.{suffix}")

    def acquire(self, session_id: str) -> None:
        """Take the lease or raise SessionError naming the process that holds it."""
        tmp = self._beside("tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(self.body)
            for _ in range(_ATTEMPTS):
                if self._place(tmp):
                    return
                self._check_holder(session_id)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise SessionError(f"could not take the lease of session {session_id} ({self.path})")

    def _place(self, tmp: Path) -> bool:
        """Put the complete lease at its name; False when one is there already."""
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        except OSError:
            return self._create_in_place()  # a file system without hard links
        return True

    def _create_in_place(self) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as fh:
            fh.write(self.body)  # until written, others give it the grace period
        return True

    def _check_holder(self, session_id: str) -> None:
        """Raise when the lease there is held; clear it when it is stale."""
        try:
            identity, data, mtime = _look(self.path)
        except FileNotFoundError:
            return  # released meanwhile: try again
        if data is not None:
            try:
                info = json.loads(data)
            except RecursionError:
                info = None  # deeply nested: complete, and not a lease we wrote
            except ValueError:
                # Empty or torn: created and not yet written, unless it is old.
                if abs(time.time() - mtime) < LEASE_GRACE:
                    raise SessionError(
                        f"session {session_id} is being opened by another Reasonix process "
                        f"(its lease {self.path} is not written yet); try again in a moment, "
                        "or add --copy to continue it in a new session"
                    ) from None
                info = None
            if isinstance(info, dict) and _lease_alive(info):
                raise SessionError(
                    f"session {session_id} is in use by another Reasonix process "
                    f"(pid {info.get('pid')}); add --copy to continue it in a new session"
                )
        self._remove_stale(identity)

    def _remove_stale(self, identity: tuple[object, ...]) -> None:
        aside = self._beside("stale")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # another process cleared it first
        except OSError:
            return  # in use (Windows) or not ours to move: the next attempt looks again
        try:
            moved, _, _ = _look(aside)
            if moved != identity:
                # Between our look and the rename, another process replaced the stale
                # lease with its own: put that one back where it was.
                with contextlib.suppress(FileExistsError):
                    os.link(aside, self.path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(aside)

    def _read(self) -> bytes:
        # Never followed: a lease is a file only Reasonix writes, in its own state dir.
        return read_bytes(self.path, LEASE_LIMIT, error=SessionError, follow=False)

    def release(self) -> None:
        """Remove the lease if it is still this process's."""
        with contextlib.suppress(OSError, ValueError, SessionError, AttributeError):
            if json.loads(self._read()).get("token") == self.token:
                self.path.unlink()
