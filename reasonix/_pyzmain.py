"""The entry point of ``reasonix.pyz``: ``build_zipapp.py`` ships this file as the archive's
``__main__.py``, with :data:`VERSION` and :data:`BUILD_ID` filled in.

It answers ``--version`` before importing anything (the hot path of scripts and
health checks); everything else is :func:`reasonix._pyzboot.start`. It is stored
uncompressed in the archive, so ``--version`` needs no ``zlib`` either. Imported
as a module (not run), it does nothing.
"""

import sys

VERSION = "0+unknown"  # replaced by build_zipapp.py
BUILD_ID = ""  # replaced by build_zipapp.py: names this build's unpacked copy

if __name__ == "__main__":
    if sys.argv[1:] in (["--version"], ["-V"]):
        # Leave without the interpreter's teardown: nothing of ours needs it.
        import os

        try:
            sys.stdout.write("reasonix " + VERSION + "\n")
            sys.stdout.flush()
        except (AttributeError, OSError):  # stdout closed (None) or unwritable (full disk)
            os._exit(1)  # skip the exit-time flush that would fail again, noisily
        os._exit(0)

    from reasonix._pyzboot import start

    start(__file__, BUILD_ID)
