"""Background jobs for ``bash(run_in_background=true)``: a per-process table.

Each job runs :func:`._proc.run_command` on its own daemon thread with its own
cancel token, so ``kill_shell`` (or interpreter exit, via ``atexit``) takes
down the job's whole process group. Output accumulates in a bounded buffer;
``bash_output`` returns what arrived since its last read. Jobs are scoped to
the session that started them (``ToolContext.session_id``).
"""

from __future__ import annotations

import atexit
import itertools
import subprocess
import threading
import time
from collections.abc import Callable

from reasonix.cancel import Cancel
from reasonix.lazy import dataclass, field
from reasonix.tool.builtin._proc import RunOutcome, kill_group, run_command

__all__ = ["Job", "JobTable", "jobs"]

MAX_BUFFER_BYTES = 4 * 1024 * 1024  # unread output kept per job; older bytes are dropped


@dataclass
class Job:
    """One background command."""

    id: str
    command: str
    session_id: str
    started: float = field(default_factory=time.monotonic)
    status: str = "running"  # running | done | failed | killed
    exit_code: int | None = None
    pid: int = 0
    reported: bool = False  # the final status has been shown to the model
    _buf: bytearray = field(default_factory=bytearray, repr=False)
    _dropped: int = 0
    _cancel: Cancel = field(default_factory=Cancel, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _append(self, data: bytes) -> None:
        with self._lock:
            self._buf += data
            over = len(self._buf) - MAX_BUFFER_BYTES
            if over > 0:
                del self._buf[:over]
                self._dropped += over

    def read_new(self) -> str:
        """Output produced since the previous read (consumes it)."""
        with self._lock:
            data, dropped = bytes(self._buf), self._dropped
            self._buf.clear()
            self._dropped = 0
        text = data.decode("utf-8", "replace")
        if dropped:
            text = f"[... {dropped} earlier bytes dropped ...]\n" + text
        return text

    @property
    def finished(self) -> bool:
        """True once the job has ended (any status but running)."""
        return self._done.is_set()

    def wait(self, timeout: float | None) -> bool:
        """Block up to ``timeout`` seconds; True when the job has finished."""
        return self._done.wait(timeout)

    def status_line(self) -> str:
        """e.g. ``running`` / ``done (exit 0)`` / ``failed (exit 2)`` / ``killed``.

        Reading the status of a finished job marks it reported.
        """
        if self.finished:
            self.reported = True
        if self.status in ("done", "failed") and self.exit_code is not None:
            return f"{self.status} (exit {self.exit_code})"
        return self.status


class JobTable:
    """Thread-safe table of background jobs, keyed by id (``bash-1``, ``bash-2`` …)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def start(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        command: str,
        session_id: str = "",
        after: Callable[[], str] | None = None,
    ) -> Job:
        """Start ``argv`` in the background and return its job at once.

        ``after`` runs when the command has ended; a text it returns is appended
        to the job's output (the sandbox reports what it undid).

        Raises OSError when the process cannot be started.
        """
        with self._lock:
            job = Job(id=f"bash-{next(self._ids)}", command=command, session_id=session_id)
        started = threading.Event()
        failure: list[BaseException] = []

        def on_start(proc: subprocess.Popen[bytes]) -> None:
            job.pid = proc.pid
            started.set()

        def body() -> None:
            try:
                outcome = run_command(
                    argv,
                    cwd=cwd,
                    env=env,
                    sink=job._append,
                    cancel=job._cancel,
                    command_text=command,
                    on_start=on_start,
                )
            except BaseException as err:  # noqa: BLE001 - reported to the caller below
                failure.append(err)
                outcome = RunOutcome(exit_code=None, cancelled=True)
                job._append(f"[failed to run: {err}]\n".encode())
            finally:
                started.set()
            note = after() if after is not None else ""
            if note:
                job._append(note.encode())
            self._finish(job, outcome)

        thread = threading.Thread(target=body, name=f"reasonix-{job.id}", daemon=True)
        thread.start()
        started.wait()
        if failure and not job.pid:
            err = failure[0]
            raise err if isinstance(err, OSError) else OSError(str(err))
        with self._lock:
            self._jobs[job.id] = job
        return job

    @staticmethod
    def _finish(job: Job, outcome: RunOutcome) -> None:
        if outcome.cancelled or outcome.exit_code is None:
            job.status = "killed"
        else:
            job.exit_code = outcome.exit_code
            job.status = "done" if outcome.exit_code == 0 else "failed"
        job._done.set()

    def get(self, job_id: str, session_id: str = "") -> Job | None:
        """The job ``job_id`` if it belongs to ``session_id``."""
        with self._lock:
            job = self._jobs.get(job_id.strip())
        if job is None or job.session_id != session_id:
            return None
        return job

    def list(self, session_id: str = "") -> list[Job]:
        """The session's jobs, oldest first."""
        with self._lock:
            return [j for j in self._jobs.values() if j.session_id == session_id]

    def kill(self, job_id: str, session_id: str = "", timeout: float = 5.0) -> bool:
        """Kill a running job's process group; False if unknown or already finished."""
        job = self.get(job_id, session_id)
        if job is None or job.finished:
            return False
        job._cancel.cancel("killed")
        job.wait(timeout)
        return True

    def kill_all(self) -> None:
        """Kill every running job (used at interpreter exit)."""
        with self._lock:
            running = [j for j in self._jobs.values() if not j.finished]
        for job in running:
            job._cancel.cancel("interpreter exit")
        for job in running:
            if not job.wait(3.0) and job.pid:
                kill_group(job.pid, grace=0.5)


jobs = JobTable()
atexit.register(jobs.kill_all)
