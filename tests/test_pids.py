"""One process-liveness check for every layer (issue 39): reasonix.pids.pid_alive."""

from __future__ import annotations

import os
import subprocess
import sys

from reasonix.pids import pid_alive


def test_this_process_is_alive_and_an_ended_child_is_not() -> None:
    assert pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    assert child.wait(timeout=30) == 0  # reaped: its pid is free again
    assert not pid_alive(child.pid)


def test_ids_that_name_no_single_process_are_not_alive() -> None:
    # os.kill(0, 0) and os.kill(-1, 0) signal process groups and succeed; a pid past
    # the platform's range overflows. None of them is a live process.
    for pid in (0, -1, 2**40):
        assert not pid_alive(pid), pid
