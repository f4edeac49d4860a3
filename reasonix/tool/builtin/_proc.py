"""Run a shell command in its own process group, pumping its output.

The hygiene (mini-swe-agent, MCP SDK shutdown): every command starts a new
session (``start_new_session=True``), so the shell and everything it spawns
share one process group that a timeout, a cancel or a kill can take down in one
``killpg``: SIGTERM first, SIGKILL after a short grace. When the shell itself
exits, members it left behind (``sleep 100 &``) are reaped the same way unless
the command deliberately detached them (``nohup`` / ``disown``); without that,
a stray child holding the output pipe would hang the call and leak.

One loop, no reader thread: the pipe is polled with a selector so a deadline
or a cancel is noticed within :data:`POLL_SECONDS` even while output streams.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable

from reasonix.cancel import Cancel
from reasonix.lazy import Pattern, dataclass
from reasonix.pids import pid_alive
from reasonix.tool.children import contained, popen

__all__ = [
    "KILL_GRACE_SECONDS",
    "RunOutcome",
    "alive",
    "descendants",
    "group_alive",
    "kill_group",
    "run_command",
    "spawn",
]

KILL_GRACE_SECONDS = 2.0  # time for a SIGTERM'd build tool to flush and exit
POLL_SECONDS = 0.05  # cancel/deadline reaction time while blocked on the pipe
DRAIN_SECONDS = 1.0  # after the shell exits, how long a detached holder may keep the pipe
# Waiting for a signalled process to go: it usually does within a millisecond, so look
# again soon, then back off (each look reads /proc).
_FIRST_PAUSE, _LAST_PAUSE = 0.002, 0.02
_DETACH = Pattern(r"\b(nohup|disown|setsid)\b", needs=("nohup", "disown", "setsid"))


@dataclass
class RunOutcome:
    """How a command ended. ``exit_code`` is None when it never exited on its own."""

    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    pid: int = 0


def spawn(argv: list[str], cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session that dies with Reasonix (even a SIGKILL of it):
    stdin /dev/null, stdout+stderr one pipe."""
    proc: subprocess.Popen[bytes] = popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        close_fds=True,
    )
    return proc


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def group_alive(pgid: int) -> bool:
    """True while some process (other than a zombie) is left in group ``pgid``."""
    if not _signal_group(pgid, 0):
        return False
    # killpg(0) also succeeds for zombies waiting to be reaped by init; look
    # closer where /proc exists so a non-reaping PID 1 does not stall the grace.
    table = _proc_table()
    if not table:
        return True
    return any(pgrp == pgid and state != b"Z" for _pp, pgrp, state in table.values())


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != b"Z"


def kill_group(pgid: int, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the group, wait up to ``grace`` seconds, then SIGKILL what is left."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    _signal_group(pgid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
    deadline = time.monotonic() + grace
    pause = _FIRST_PAUSE
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(pause)
        pause = min(pause * 2, _LAST_PAUSE)
    _signal_group(pgid, signal.SIGKILL)


def _proc_table() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (ppid, pgrp, state) from /proc; empty where /proc does not exist."""
    table: dict[int, tuple[int, int, bytes]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            table[int(name)] = (int(fields[1]), int(fields[2]), fields[0])
        except (OSError, IndexError, ValueError):
            continue
    return table


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (by parent links), wherever its group is."""
    children: dict[int, list[int]] = {}
    for child, (ppid, _pgrp, _state) in _proc_table().items():
        children.setdefault(ppid, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


TAG_VAR = "REASONIX_PROC_TAG"
_tags = itertools.count(1)


def tagged(tag: str) -> set[int]:
    """Live processes whose environment carries ``TAG_VAR=tag`` (Linux ``/proc``).

    A double fork plus ``setsid`` leaves both the group and the parent links,
    but the environment is inherited: this is how a timeout still finds it.
    """
    needle = f"{TAG_VAR}={tag}".encode()
    found: set[int] = set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    me = str(os.getpid())
    for name in names:
        if not name.isdigit() or name == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.add(int(name))
        except OSError:
            continue
    return found


class _Tree:
    """A command's process group plus descendants that left it.

    A child may leave the group (``setsid``, a sandbox's ``--new-session``);
    a snapshot of the parent links taken while the leader is alive still
    finds it, so a timeout or a cancel reaches it too.
    """

    def __init__(self, pgid: int, tag: str = "") -> None:
        self.pgid = pgid
        self.tag = tag
        self.strays: frozenset[int] = frozenset()

    def snapshot(self, links: bool = True) -> None:
        if links:
            self.strays = self.strays | descendants(self.pgid)
        if self.tag:
            self.strays = self.strays | tagged(self.tag)

    def signal(self, sig: int) -> None:
        _signal_group(self.pgid, sig)
        for pid in self.strays:
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def terminate(self, links: bool = True) -> None:
        """SIGTERM everything found; ``links`` False once the leader is reaped (its
        children were re-parented when it exited, so no parent link leads to them)."""
        self.snapshot(links)
        self.signal(signal.SIGTERM)
        self.signal(signal.SIGCONT)  # a stopped process cannot act on SIGTERM

    def alive(self) -> bool:
        return group_alive(self.pgid) or any(alive(p) for p in self.strays)

    def finish(self, grace: float) -> None:
        """Wait up to ``grace`` for everything to exit, then SIGKILL the rest."""
        deadline = time.monotonic() + grace
        pause = _FIRST_PAUSE
        while time.monotonic() < deadline:
            if not self.alive():
                return
            time.sleep(pause)
            pause = min(pause * 2, _LAST_PAUSE)
        self.signal(signal.SIGKILL)


def run_command(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    sink: Callable[[bytes], None],
    cancel: Cancel,
    timeout: float | None = None,
    command_text: str = "",
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> RunOutcome:
    """Run ``argv`` to completion, feeding its combined output to ``sink``.

    ``timeout`` (seconds, None/0 = none) and ``cancel`` both kill the whole
    process tree. ``command_text`` is the shell source, used only to notice
    deliberate detaching (then stragglers survive the shell's exit).
    """
    if not hasattr(os, "killpg"):
        return _run_threaded(argv, cwd, env, sink, cancel, timeout, on_start)
    if contained(argv):
        # Its pid namespace ends with it: nothing it started can outlive it, so there is
        # no stray to look for (a scan of every process's environment per command).
        tag, proc = "", spawn(argv, cwd, env)
    else:
        tag = f"{os.getpid()}.{next(_tags)}.{time.monotonic_ns()}"
        proc = spawn(argv, cwd, {**env, TAG_VAR: tag})
    if on_start is not None:
        on_start(proc)
    tree = _Tree(proc.pid, tag)
    outcome = RunOutcome(exit_code=None, pid=proc.pid)
    reap = not _DETACH.search(command_text)
    deadline = time.monotonic() + timeout if timeout else None
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    unregister = cancel.on_cancel(tree.terminate)  # at once; the loop escalates
    kill_at: float | None = None  # when to escalate SIGTERM to SIGKILL
    leader_exit: float | None = None
    eof = False
    try:
        while not (eof and leader_exit is not None):
            if not eof:
                for _key, _ev in sel.select(POLL_SECONDS):
                    data = os.read(fd, 65536)
                    if data:
                        sink(data)
                    else:
                        eof = True
                        sel.unregister(fd)
            else:
                # The pipe closed while the leader still runs (a sandbox's bwrap outlives
                # its command by a moment): wake as soon as it exits, not a poll later.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(POLL_SECONDS)
            now = time.monotonic()
            if not (outcome.timed_out or outcome.cancelled):
                if cancel.cancelled:
                    outcome.cancelled = True
                elif deadline is not None and now >= deadline:
                    outcome.timed_out = True
                if outcome.timed_out or outcome.cancelled:
                    tree.terminate()
                    kill_at = now + KILL_GRACE_SECONDS
            if leader_exit is None and proc.poll() is not None:
                leader_exit = now
                if reap and kill_at is None:
                    # The shell is done; whatever it left in its group goes too.
                    tree.terminate(links=False)
                    kill_at = now + KILL_GRACE_SECONDS
            if kill_at is not None and now >= kill_at:
                tree.signal(signal.SIGKILL)
                kill_at = None
            if leader_exit is not None and not eof:
                limit = KILL_GRACE_SECONDS + DRAIN_SECONDS if reap else DRAIN_SECONDS
                if now - leader_exit > limit:
                    break  # a process outside the tree still holds the pipe
    finally:
        unregister()
        sel.close()
        proc.stdout.close()
        if proc.poll() is None:  # only reachable through an exception above
            tree.terminate()
            tree.signal(signal.SIGKILL)
        proc.wait()
    if kill_at is not None:
        tree.finish(max(0.0, kill_at - time.monotonic()))
    if not (outcome.timed_out or outcome.cancelled):
        outcome.exit_code = proc.returncode
    return outcome


def _run_threaded(
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    sink: Callable[[bytes], None],
    cancel: Cancel,
    timeout: float | None,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None,
) -> RunOutcome:
    """Windows: no process groups and no pipe polling; a reader thread and taskkill /T."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
    )
    if on_start is not None:
        on_start(proc)
    out = proc.stdout
    assert out is not None
    outcome = RunOutcome(exit_code=None, pid=proc.pid)

    def pump() -> None:
        while chunk := os.read(out.fileno(), 65536):
            sink(chunk)

    def kill_tree() -> None:
        try:
            subprocess.run(
                ["taskkill", "/T", "/F", "/PID", str(proc.pid)],
                capture_output=True,
                timeout=KILL_GRACE_SECONDS * 5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            proc.kill()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout if timeout else None
    unregister = cancel.on_cancel(kill_tree)
    try:
        while proc.poll() is None:
            if cancel.cancelled or (deadline is not None and time.monotonic() >= deadline):
                outcome.cancelled = cancel.cancelled
                outcome.timed_out = not cancel.cancelled
                kill_tree()
                break
            try:
                proc.wait(POLL_SECONDS)
            except subprocess.TimeoutExpired:
                pass
    finally:
        unregister()
    proc.wait()
    reader.join(KILL_GRACE_SECONDS + DRAIN_SECONDS)
    if not reader.is_alive():
        out.close()
    if not (outcome.timed_out or outcome.cancelled):
        outcome.exit_code = proc.returncode
    return outcome
