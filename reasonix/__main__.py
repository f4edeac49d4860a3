"""Entry point for ``python -m reasonix`` and the zipapp."""

from __future__ import annotations

import sys


def _main() -> None:
    import gc

    # Start-up allocates tens of thousands of objects (modules, functions,
    # classes) and frees almost none: cyclic collection then is pure cost.
    # The CLI turns it back on once the command's module is loaded.
    gc.disable()
    from reasonix.cli.main import main

    code = main(sys.argv[1:])
    # Every file of ours is closed by now; skip the interpreter's final sweep
    # over what is left (a few tens of milliseconds of exit time).
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    _main()
