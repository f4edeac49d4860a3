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

Nothing is written when the home is not writable (any failure falls back to the
archive), with ``REASONIX_NO_UNPACK`` set, or for a help request (``-h``,
``--help``, ``help``: an existing copy is used, read only).

This module needs only the standard library and :mod:`reasonix.config.home`.
"""

from __future__ import annotations

import os
import sys

__all__ = ["is_complete", "start", "unpack"]

_DONE = ".complete"  # written last into a copy: the rest of it is there
_STALE_UNPACK = 3600.0  # seconds: a half-made copy this old was left by a killed process


def _is_help(args: list[str]) -> bool:
    """A help request: argparse answers -h/--help anywhere before ``--``."""
    opts = args[: args.index("--")] if "--" in args else args
    return "-h" in opts or "--help" in opts or args[:1] == ["help"]


def is_complete(copy: str) -> bool:
    """``copy`` is a whole unpacked build."""
    return os.path.isfile(os.path.join(copy, _DONE))


def start(main_file: str, build_id: str) -> None:
    """Run the command line from the archive holding ``main_file`` or from its copy."""
    look = _is_help(sys.argv[1:])
    if look:
        sys.dont_write_bytecode = True  # help writes nothing under the home
    archive = os.path.dirname(os.path.abspath(main_file))
    root = archive
    if build_id and not os.environ.get("REASONIX_NO_UNPACK") and os.path.isfile(archive):
        from reasonix.config.home import cache_str

        copy = os.path.join(cache_str(), "pyz", build_id)
        if is_complete(copy):
            root = copy
            _use_copy(archive, os.path.dirname(main_file), copy)
        elif not look:
            import atexit

            # After the command's work, so the first request never waits for it.
            atexit.register(unpack, archive, copy)
    if sys.version_info < (3, 11):
        # tomllib arrived in 3.11; the archive carries tomli for 3.10 only.
        sys.path.insert(1, os.path.join(root, "_vendor"))
    if root != archive:
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


def _use_copy(archive: str, given: str, copy: str) -> None:
    """Import everything from ``copy`` from now on, in the archive's place on sys.path."""
    names = (archive, given, copy)
    at = next((i for i, p in enumerate(sys.path) if p in names), 0)
    sys.path[:] = [p for p in sys.path if p not in names]
    sys.path.insert(at, copy)
    # The few modules of ours this start imported from the archive (this one, the
    # package, the home lookup) are forgotten, so the whole package comes from the
    # copy: one place for every module. Nothing holds them but this call's frame.
    for name in [n for n in sys.modules if n == "reasonix" or n.startswith("reasonix.")]:
        del sys.modules[name]


def unpack(archive: str, copy: str) -> None:
    """Unpack ``archive`` into ``copy`` (unless done) and prune older copies; never raises:
    a failure (read-only home, odd file system, a full disk) only means the next start
    imports from the archive again."""
    for stream in (sys.stdout, sys.stderr):  # what the command wrote goes out first
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    try:
        if not is_complete(copy):
            _unpack(archive, copy)
        _prune(os.path.dirname(copy), copy)
    except Exception:  # noqa: BLE001 - unpacking is only an optimisation
        pass


def _unpack(archive: str, copy: str) -> None:
    import shutil
    import tempfile
    import zipfile
    from importlib.util import MAGIC_NUMBER

    parent = os.path.dirname(copy)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".unpack-", dir=parent)
    try:
        with zipfile.ZipFile(archive) as zf:
            if repr(os.path.basename(copy)) not in zf.read("__main__.py").decode("utf-8"):
                return  # the archive was replaced while we ran: not this build any more
            names = zf.namelist()
            sources = [n for n in names if not n.endswith(".pyc")]
            zf.extractall(tmp, sources)
            tag = sys.implementation.cache_tag
            shipped = set(sources)
            for name in names:
                if tag and name.endswith(".pyc") and name[:-1] in shipped:
                    data = zf.read(name)
                    if data[:4] == MAGIC_NUMBER:  # byte-code of this Python's version
                        _place_pyc(tmp, name[:-1], data, tag)
        with open(os.path.join(tmp, _DONE), "w"):
            pass
        try:
            os.rename(tmp, copy)
        except OSError:
            pass  # another process won the race; its copy is identical
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _place_pyc(root: str, source: str, data: bytes, tag: str) -> None:
    """Write the archive's byte-code of ``source`` where the normal importer looks for it,
    as a timestamp-checked ``.pyc`` of the unpacked file (edit the copy and it is
    compiled afresh, as anywhere else)."""
    path = os.path.join(root, *source.split("/"))
    st = os.stat(path)
    folder, base = os.path.split(path)
    cache = os.path.join(folder, "__pycache__")
    os.makedirs(cache, exist_ok=True)
    head = data[:4] + (0).to_bytes(4, "little")  # magic, flags: timestamp-based
    head += (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    head += (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    with open(os.path.join(cache, f"{base[:-3]}.{tag}.pyc"), "wb") as fh:
        fh.write(head + data[16:])


def _prune(parent: str, current: str) -> None:
    """Remove the copies of builds in ``parent`` other than ``current`` and the one unpacked
    most recently before it, and half-made copies that killed processes left behind."""
    import shutil
    import time

    builds: list[tuple[float, str]] = []
    for name in os.listdir(parent):
        path = os.path.join(parent, name)
        if path == current or not os.path.isdir(path):
            continue
        if name.startswith(".unpack-"):
            # Another process may be unpacking right now: only an old one is abandoned.
            if time.time() - os.stat(path).st_mtime > _STALE_UNPACK:
                shutil.rmtree(path, ignore_errors=True)
            continue
        try:
            builds.append((os.stat(os.path.join(path, _DONE)).st_mtime, path))
        except OSError:
            continue  # not a copy of ours
    builds.sort(reverse=True)
    for _, path in builds[1:]:
        shutil.rmtree(path, ignore_errors=True)
