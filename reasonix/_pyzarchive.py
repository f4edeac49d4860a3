"""The .pyz's payload: extracted as one file to import from, and unpacked at exit.

``build_zipapp.py`` writes the archive as one ordinary zip with a short directory:
the entry point, the boot's modules and :data:`PAYLOAD`, a stored member that is an
ordinary zip of the whole build. A start from the unpacked copy never needs this
module. A start without one extracts the payload as one file with zipimport's
public ``get_data`` and imports from it like any zip on ``sys.path``
(:func:`payload`); the unpacking at exit reads that file (:func:`unpack`).

This module needs only the standard library and :mod:`reasonix._pyzboot`.
"""

from __future__ import annotations

import os
import sys

from reasonix._pyzboot import DONE, is_complete

__all__ = ["PAYLOAD", "importable", "payload", "unpack"]

PAYLOAD = "reasonix-payload.zip"  # build_zipapp.PAYLOAD
_STALE_UNPACK = 3600.0  # seconds: a half-made copy this old was left by a killed process


def payload(archive: str, copy: str = "") -> str:
    """A file holding the .pyz ``archive``'s payload, to put on ``sys.path``: ``copy``
    + ``.zip`` when ``copy`` (where the unpacked copy will go) is given and writable,
    written once for every start of the build; else a temporary file removed at exit.
    ``""`` for an archive without a payload (everything is in it already)."""
    import zipimport

    try:
        data = zipimport.zipimporter(archive).get_data(PAYLOAD)
    except OSError:
        return ""
    if copy:
        path = copy + ".zip"
        try:
            if os.path.getsize(path) == len(data):
                return path  # written whole by an earlier start (renamed into place)
        except OSError:
            pass
        try:
            _write(path, data)
            return path
        except OSError:
            pass  # an unwritable cache: a temporary file, as without one
    import atexit
    import tempfile

    try:
        fd, path = tempfile.mkstemp(prefix="reasonix-", suffix=".zip")
    except OSError as exc:
        raise SystemExit(f"reasonix: no folder to extract the archive's code into: {exc}") from exc
    # Registered before the caller registers the unpacking: removed after it.
    atexit.register(_remove, path)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def _write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a half-made file is renamed never)."""
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".payload-{os.getpid()}-{os.path.basename(path)}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        _remove(tmp)
        raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def importable(archive: str) -> None:
    """Make every module of the .pyz ``archive`` importable for a program that imports from
    it as a library (``archive`` on ``sys.path``, this module imported from it), as the
    remote serve daemon's starter does: its payload, in a temporary file, takes the
    archive's place on ``sys.path``."""
    from reasonix._pyzboot import use_copy

    root = payload(archive)
    if root:
        use_copy(archive, archive, root)


def unpack(source: str, copy: str) -> None:
    """Unpack the zip ``source`` (the extracted payload) into ``copy`` (unless done) and
    prune older copies; never raises: a failure (read-only home, odd file system, a full
    disk) only means the next start imports from the payload again."""
    for stream in (sys.stdout, sys.stderr):  # what the command wrote goes out first
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    try:
        if not is_complete(copy):
            _unpack(source, copy)
        _prune(os.path.dirname(copy), copy)
    except Exception:  # noqa: BLE001 - unpacking is only an optimisation
        pass


def _unpack(source: str, copy: str) -> None:
    import shutil
    import tempfile
    import zipfile
    from importlib.util import MAGIC_NUMBER

    parent = os.path.dirname(copy)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".unpack-", dir=parent)
    try:
        with zipfile.ZipFile(source) as zf:
            if repr(os.path.basename(copy)) not in zf.read("__main__.py").decode("utf-8"):
                return  # not this build's payload
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
        with open(os.path.join(tmp, DONE), "w"):
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
    most recently before it, the extracted payloads of other builds (with their copies, or
    once an hour old), and what killed processes left half-made."""
    import shutil
    import time

    now = time.time()
    builds: list[tuple[float, str]] = []
    payloads: list[str] = []
    for name in os.listdir(parent):
        path = os.path.join(parent, name)
        if name.startswith((".unpack-", ".payload-")):
            # Another process may be writing it right now: only an old one is abandoned.
            if now - os.stat(path).st_mtime > _STALE_UNPACK:
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    _remove(path)
            continue
        if name.endswith(".zip"):
            payloads.append(path)
        if path == current or not os.path.isdir(path):
            continue
        try:
            builds.append((os.stat(os.path.join(path, DONE)).st_mtime, path))
        except OSError:
            continue  # not a copy of ours
    builds.sort(reverse=True)
    removed = {path for _, path in builds[1:]}
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    for path in payloads:
        build = path[: -len(".zip")]
        # A start that began before its build's copy existed may still import from the
        # payload: another build's is removed with its copy or once it is an hour old.
        if build != current and (build in removed or now - os.stat(path).st_mtime > _STALE_UNPACK):
            _remove(path)
