"""Leaving without the interpreter's teardown still does what the teardown does that matters."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60,
        cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_threads_atexit_handlers_and_buffered_output_all_finish_before_the_exit(
    tmp_path: Path,
) -> None:
    done = _run(
        f"""
        import atexit, sys, threading, time
        from concurrent.futures import ThreadPoolExecutor
        from reasonix.__main__ import leave

        def late():
            time.sleep(0.3)
            open({str(tmp_path / "thread")!r}, "w").write("finished")

        threading.Thread(target=late).start()  # not a daemon: waited for
        pool = ThreadPoolExecutor(2)  # never shut down: threading's own exit hook does it
        pool.submit(time.sleep, 0.1)
        atexit.register(lambda: sys.stdout.write("atexit ran\\n"))
        sys.stdout.write("buffered, never flushed by the program\\n")
        sys.stderr.write("to stderr\\n")
        leave(3)
        """,
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "buffered, never flushed by the program\natexit ran\n"
    assert done.stderr == "to stderr\n"
    assert (tmp_path / "thread").read_text() == "finished"


def test_a_closed_stdout_does_not_turn_into_a_traceback(tmp_path: Path) -> None:
    done = _run(
        """
        import os, sys
        from reasonix.__main__ import leave

        sys.stdout.write("x" * 100)
        os.close(1)
        leave(0)
        """,
        tmp_path,
    )
    assert done.returncode == 0 and done.stderr == ""


def test_only_commands_that_close_everything_they_open_skip_the_teardown() -> None:
    import importlib

    from reasonix.cli import main as cli_main

    quick = {
        name
        for name, (module, _) in cli_main.COMMANDS.items()
        if getattr(importlib.import_module(module), "QUICK_EXIT", False)
    }
    assert quick == {"run"}  # chat, serve, acp and the rest end through the normal exit


def test_a_version_answer_and_a_failing_run_keep_their_output_and_exit_codes(
    tmp_path: Path,
) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "REASONIX_HOME": str(tmp_path)}
    version = subprocess.run([sys.executable, "-m", "reasonix", "--version"], env=env,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert version.returncode == 0 and version.stdout.startswith("reasonix ")
    run = subprocess.run([sys.executable, "-m", "reasonix", "run", "--json", "hi"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 1  # no API key anywhere: a runtime error, reported in full
    assert run.stdout.endswith("}\n") and '"MissingAPIKey"' in run.stdout
