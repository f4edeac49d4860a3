"""Child processes that cannot outlive Reasonix.

Every long-lived child (a bash command and its background jobs, an MCP stdio
server) is started here: in its own process group (session), so one
``killpg`` reaches its grandchildren on exit, cancel and timeout; and on
Linux with the parent-death signal (``PR_SET_PDEATHSIG`` = SIGKILL), so even
a SIGKILL of Reasonix, which runs no cleanup at all, takes the child down.

The kernel sends the parent-death signal when the *thread* that forked the
child ends, not the process. Children are often started from short-lived
threads (an MCP server's start thread, a tool worker), so on Linux every
spawn is handed to one long-lived spawner thread that lives as long as the
process.

The parent-death signal reaches only the direct child; ``npx`` → ``node`` or
``sh -c`` → a build tool leave grandchildren behind. So on Linux a small
watchdog process (started with the first child, in its own session so a
terminal's Ctrl-C does not end it first) holds the read end of a pipe only
Reasonix writes to and learns each child's process group; when the pipe
reaches end-of-file — Reasonix is gone, however it died — it SIGKILLs every
group whose leader is still the process it was told about (the leader's
start time guards against a reused pid), then exits.

A child that takes its own descendants down needs neither: bubblewrap started
with ``--die-with-parent --unshare-pid`` (the bash sandbox) arms the
parent-death signal itself, and its pid namespace ends with it, taking every
process inside along. Such a child is only started from the spawner thread.

The tool layer owns this because bash lives here; the plugin layer may import it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from _queue import SimpleQueue  # put/get only; not the `queue` module
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["contained", "popen"]

_PR_SET_PDEATHSIG = 1
_Job = tuple[Callable[[], "subprocess.Popen[Any]"], "SimpleQueue[tuple[bool, Any]]"]
_jobs: SimpleQueue[_Job] = SimpleQueue()
_spawner: threading.Thread | None = None
_lock = threading.Lock()
_prctl: Any = None
_watch_fd: int | None = None  # write end of the watchdog's pipe; -1 when there is none
_watchdog: subprocess.Popen[bytes] | None = None  # kept: it must outlive every child

_WATCHDOG = """
import os, signal, sys
def start(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            data = fh.read()
        return data[data.rfind(b")") + 2:].split()[19]
    except (OSError, IndexError):
        return None
groups = {}
for line in sys.stdin.buffer:
    parts = line.split()
    if len(parts) == 2 and parts[0].isdigit():
        groups[int(parts[0])] = parts[1]
for pgid, began in groups.items():
    now = start(pgid)
    if now is None or now == began:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
"""


def _process_start(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return data[data.rfind(b")") + 2 :].split()[19]
    except (OSError, IndexError):
        return None


def _watch(pgid: int) -> None:
    """Tell the watchdog about a new process group (starting the watchdog once)."""
    global _watch_fd, _watchdog
    with _lock:
        if _watch_fd is None:
            _watch_fd = -1
            if sys.executable:
                read, write = os.pipe()  # both ends close-on-exec: no other child holds them
                try:
                    _watchdog = subprocess.Popen(
                        [sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=read,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True, close_fds=True,
                    )  # fmt: skip
                    _watch_fd = write
                except OSError:
                    os.close(write)
                finally:
                    os.close(read)
        fd = _watch_fd
    began = _process_start(pgid)
    if fd < 0 or began is None:
        return
    try:
        os.write(fd, b"%d %s\n" % (pgid, began))
    except OSError:
        pass  # the watchdog is gone; the parent-death signal still covers the child


def _load_prctl() -> Any:
    """libc's ``prctl``, looked up in the parent (never after fork), or None."""
    global _prctl
    if _prctl is None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fn = libc.prctl
            fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]  # fmt: skip
            fn.restype = ctypes.c_int
            _prctl = fn
        except (OSError, AttributeError, ImportError):
            _prctl = False
    return _prctl or None


def _die_with(parent: int, prctl: Any) -> Callable[[], None]:
    def preexec() -> None:  # runs in the child between fork and exec: keep it tiny
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed:
            raise ChildProcessError("parent gone")  # the child exits without exec

    return preexec


def _serve() -> None:
    while True:
        make, reply = _jobs.get()
        try:
            reply.put((True, make()))
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller, raised there
            reply.put((False, exc))


def _in_spawner(make: Callable[[], subprocess.Popen[Any]]) -> subprocess.Popen[Any]:
    global _spawner
    with _lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_serve, name="reasonix-spawner", daemon=True)
            _spawner.start()
    reply: SimpleQueue[tuple[bool, Any]] = SimpleQueue()  # one answer
    _jobs.put((make, reply))
    ok, value = reply.get()
    if not ok:
        raise value
    proc: subprocess.Popen[Any] = value
    return proc


def contained(argv: list[str]) -> bool:
    """True for bubblewrap told to die with its parent and to end its pid namespace
    with it (options before ``--`` only: what follows is the command it runs)."""
    if not argv or os.path.basename(argv[0]) != "bwrap":
        return False
    options = argv[1 : argv.index("--")] if "--" in argv else argv[1:]
    return "--die-with-parent" in options and "--unshare-pid" in options


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **kwargs)`` in a new session that dies with Reasonix.

    On Windows the child gets a new process group instead (no parent-death
    signal exists there); callers kill the tree with ``taskkill /T``.
    """
    if os.name == "nt":
        flags = kwargs.pop("creationflags", 0) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        return subprocess.Popen(argv, creationflags=flags, **kwargs)
    kwargs["start_new_session"] = True
    if sys.platform.startswith("linux") and contained(argv):
        return _in_spawner(lambda: subprocess.Popen(argv, **kwargs))
    prctl = _load_prctl() if sys.platform.startswith("linux") else None
    if prctl is None:
        return subprocess.Popen(argv, **kwargs)
    preexec = _die_with(os.getpid(), prctl)
    proc = _in_spawner(lambda: subprocess.Popen(argv, preexec_fn=preexec, **kwargs))
    _watch(proc.pid)  # a new session: the child's pid is its process group
    return proc
