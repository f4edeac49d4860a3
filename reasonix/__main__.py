"""Entry point for ``python -m reasonix`` and the zipapp."""

from __future__ import annotations

import sys


def _main() -> None:
    import gc

    # Start-up allocates tens of thousands of objects (modules, functions,
    # classes) and frees almost none: cyclic collection then is pure cost.
    # The CLI turns it back on once the command's module is loaded.
    gc.disable()
    from reasonix.cli.main import main, quick_exit_ok

    code = main(sys.argv[1:])
    if quick_exit_ok():
        leave(code)
    # Skip at least the interpreter's final sweep over what is left (a few tens of
    # milliseconds): what a long-lived command leaves open is flushed by the teardown.
    gc.freeze()
    sys.exit(code)


def leave(code: int) -> None:  # never returns (no typing import on the --version path)
    """End the process with ``code`` without the interpreter's teardown.

    Tearing down a process that loaded a few hundred modules (clearing every
    module, freeing every object) took 15–25 ms here, longer than the rest
    of a quick command. What of it matters is done first, in the order the
    interpreter does it: threads that are not daemons are waited for (with
    what ``threading`` runs before that, e.g. executors' shutdown), atexit
    handlers run (the byte-code cache is saved, temporary directories go),
    stdout and stderr are flushed. Only for commands that close every file
    they open (see :func:`reasonix.cli.main.quick_exit_ok`): what the kernel
    frees at exit is then all that is skipped.
    Without CPython's ``threading._shutdown`` the normal exit is taken.
    """
    import atexit
    import os
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_exitfuncs is None:
        sys.exit(code)
    shutdown()
    run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(code)


if __name__ == "__main__":
    _main()
