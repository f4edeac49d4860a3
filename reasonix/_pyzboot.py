"""The start of ``reasonix.pyz`` after ``--version``: where the code is imported from.

The archive carries each module's source and, for the Python that built it, its
byte-code (``x.pyc`` beside ``x.py``, which zipimport uses when the magic number
matches), so a first start imports from the archive without compiling.

A build is unpacked once into ``<cache>/pyz/<build-id>/`` (the cache dir of
:func:`reasonix.config.home.cache_str`): there the normal importer keeps
``__pycache__`` for whichever Python runs it, and the byte-code cache
(:mod:`reasonix._codecache`) spares the path search. The unpacking is never on
the way to a first request: a start that finds no complete copy runs from the
archive and unpacks at exit, writing the archive's byte-code into the copy's
``__pycache__`` when it suits the running Python. Older copies are pruned then:
the current build and the one unpacked before it are kept.

The archive is one ordinary zip with a short directory (every start reads it):
the entry point, this boot and ``reasonix-payload.zip``, an ordinary zip of the
whole build. A start without a complete copy extracts that member as one file and
imports from it (:mod:`reasonix._pyzarchive`): ``<cache>/pyz/<build-id>.zip``,
beside where the copy goes, or, when nothing may be written under the home
(``REASONIX_NO_UNPACK``, a help request, an unwritable cache), a temporary file
removed at exit. The unpacking at exit reads that file.

Nothing is written under the home when it is not writable (any failure falls back
to a temporary file), with ``REASONIX_NO_UNPACK`` set, or for a help request (``-h``,
``--help``, ``help``: an existing copy is used, read only).

This module needs only the standard library and :mod:`reasonix.config.home`.
"""

from __future__ import annotations

import os
import sys

__all__ = ["DONE", "is_complete", "start", "use_copy"]

DONE = ".complete"  # written last into a copy: the rest of it is there


def _is_help(args: list[str]) -> bool:
    """A help request: argparse answers -h/--help anywhere before ``--``."""
    opts = args[: args.index("--")] if "--" in args else args
    return "-h" in opts or "--help" in opts or args[:1] == ["help"]


def is_complete(copy: str) -> bool:
    """``copy`` is a whole unpacked build."""
    return os.path.isfile(os.path.join(copy, DONE))


def start(main_file: str, build_id: str) -> None:
    """Run the command line from the archive holding ``main_file`` or from its copy."""
    look = _is_help(sys.argv[1:])
    if look:
        sys.dont_write_bytecode = True  # help writes nothing under the home
    archive = os.path.dirname(os.path.abspath(main_file))
    root = copy = ""
    if build_id and not os.environ.get("REASONIX_NO_UNPACK") and os.path.isfile(archive):
        from reasonix.config.home import cache_str

        copy = os.path.join(cache_str(), "pyz", build_id)
        if is_complete(copy):
            root = copy
        elif look:
            copy = ""  # a help request writes nothing under the home
    if not root and os.path.isfile(archive):
        import atexit

        from reasonix._pyzarchive import payload, unpack

        root = payload(archive, copy)
        if copy:
            # After the command's work, so the first request never waits for it.
            atexit.register(unpack, root, copy)
    if root:
        use_copy(archive, os.path.dirname(main_file), root)
    if sys.version_info < (3, 11):
        # tomllib arrived in 3.11; the archive carries tomli for 3.10 only.
        sys.path.insert(1, os.path.join(root or archive, "_vendor"))
    if root and root == copy:
        # The byte-code of what runs is kept in one file beside the copy, in a folder of
        # its own: the cache watches the folders on sys.path, and rewriting a file in the
        # copy's own folder would change it at every save.
        try:
            from reasonix._codecache import install

            install(os.path.join(root, ".codecache"), save=not look)
        except Exception:  # noqa: BLE001 - only an optimisation
            pass

    import reasonix
    from reasonix.__main__ import _main

    reasonix.ARCHIVE = archive  # the package may come from the copy: say where it started
    _main()


def use_copy(archive: str, given: str, copy: str) -> None:
    """Import everything from ``copy`` (the unpacked copy or the extracted payload) from
    now on, in the archive's place on sys.path."""
    names = (archive, given, copy)
    at = next((i for i, p in enumerate(sys.path) if p in names), 0)
    sys.path[:] = [p for p in sys.path if p not in names]
    sys.path.insert(at, copy)
    # The few modules of ours this start imported from the archive (this one, the
    # package, the home lookup) are forgotten, so the whole package comes from the
    # copy: one place for every module. Nothing holds them but this call's frame.
    for name in [n for n in sys.modules if n == "reasonix" or n.startswith("reasonix.")]:
        del sys.modules[name]
