"""One file of byte-code for the modules a run of the .pyz imports: imports without the search.

A plain import walks ``sys.path`` (a directory stat and a listing lookup per
entry), stats the source, opens and checks its ``.pyc`` and reads it: a
fraction of a millisecond per module, and a run imports some two hundred
and fifty. The .pyz entry point (see ``build_zipapp.py``) installs
:class:`_Finder` first on ``sys.meta_path``; it answers from one
memory-mapped file that holds the marshalled code of every module an
earlier run of this build imported from source, stdlib and ours alike.

What keeps it honest:

* the file is made for a key, the interpreter (its byte-code magic,
  version, executable and ``-O`` level) and the whole ``sys.path``, which it
  holds and is checked against, so another Python, a virtual environment,
  ``-O`` or a ``PYTHONPATH`` that shadows a module uses a file of its own;
* each module is served only while its source file has the modification
  time and size it had when its code was stored (one ``stat``, the test a
  ``.pyc`` makes too): an edited or upgraded file is imported the normal way;
* it stands in for the path search only: the module gets the spec, file,
  ``__path__`` and loader class (:class:`SourceFileLoader`) it would have had,
  so resources, tracebacks and ``inspect`` see the real files;
* each stored code carries its checksum (the interpreter's own keyed SipHash,
  ``_imp.source_hash``, the one hash-based ``.pyc`` files use: built in, so no
  ``zlib`` is loaded for it), checked before it is unmarshalled;
* the file is read with ``os.pread`` (the index at start, each code when it is
  served), so neither ``mmap`` is loaded nor the whole file read;
* at exit, modules imported the normal way are added and stale ones replaced
  (the file is written anew, atomically, only when something changed); any
  failure to read or write it only means imports take the normal path.

Nothing here imports the rest of Reasonix, and it is used by the .pyz only.
"""

from __future__ import annotations

import _imp
import marshal
import os
import sys

TYPE_CHECKING = False  # typing (with re and enum behind it) is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    _Read = Callable[[int, int], bytes]  # (offset, length) -> the stored bytes there

__all__ = ["install"]

_FORMAT = b"reasonix-codecache-5\n"
_LIMIT = 64 * 1024 * 1024  # a file bigger than this is not ours to trust

_SEED = 0x5245_4153_4F4E_4958  # the checksum's key ("REASONIX"): any fixed number does

# (offset, length, is_package, origin, mtime_ns, size, checksum of the code) per module name
_Entry = tuple[int, int, bool, str, int, int, bytes]


def _check(code: bytes) -> bytes:
    """The checksum of stored code (8 bytes)."""
    return _imp.source_hash(_SEED, code)  # type: ignore[no-any-return]


def _key() -> bytes:
    """What a cache file is for: this interpreter and this search path, exactly."""
    from _frozen_importlib_external import MAGIC_NUMBER

    # -O / -OO compile differently (asserts, docstrings): their code is another file's
    parts = [MAGIC_NUMBER.hex(), sys.version, sys.executable, str(sys.flags.optimize), *sys.path]
    return "\0".join(parts).encode("utf-8", "replace")


def _name(key: bytes) -> str:
    """The file name for ``key``: its checksum, not hashlib (which loads OpenSSL). The
    file holds the whole key, and a file made for another key is not used."""
    return f"codecache-{_check(key).hex()}.bin"


class _Finder:
    """A meta-path finder that serves stored code for unchanged source files."""

    def __init__(self, path: str, key: bytes, index: dict[str, _Entry], read: _Read) -> None:
        self.path, self.key, self.index, self.read = path, key, index, read
        # Only modules found through the search path this file is keyed by are stored,
        # and none imported before the finder was there (it can never serve those).
        self.roots = tuple(p.rstrip(os.sep) + os.sep for p in sys.path if p)
        self.before = frozenset(sys.modules)
        self.damaged: set[str] = set()  # stored code that failed its checksum: stored anew
        from _frozen_importlib import ModuleSpec
        from _frozen_importlib_external import SourceFileLoader

        class _Loader(SourceFileLoader):  # type: ignore[misc, valid-type]
            """The normal source loader whose byte-code comes from the cache file."""

            def __init__(self, fullname: str, path: str, code: bytes) -> None:
                super().__init__(fullname, path)
                self._code: bytes | None = code

            def get_code(self, fullname: str) -> Any:
                if fullname == self.name and self._code is not None:
                    code, self._code = self._code, None
                    return marshal.loads(code)
                return super().get_code(fullname)

        self._spec, self._loader = ModuleSpec, _Loader

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        """The spec of ``name`` when its stored code is still its source's, else None."""
        entry = self.index.get(name)
        if entry is None:
            return None
        try:
            offset, length, package, origin, mtime, size, check = entry
            st = os.stat(origin)
            if st.st_mtime_ns != mtime or st.st_size != size:
                return None
            code = self.read(offset, length)
            if len(code) != length or _check(code) != check:
                self.damaged.add(name)
                return None
        except Exception:  # noqa: BLE001 - a changed file or a damaged entry: the normal path
            return None
        spec = self._spec(name, self._loader(name, origin, code), origin=origin,
                          is_package=package)  # fmt: skip
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        return spec

    def save(self) -> None:
        """Store the code of every module imported from source that the file lacks."""
        try:
            self._save()
        except Exception:  # noqa: BLE001 - the cache is an optimisation; exit must go on
            pass

    def _save(self) -> None:
        from _frozen_importlib_external import SourceFileLoader

        fresh: dict[str, tuple[bytes, bool, str, int, int]] = {}
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            loader = getattr(spec, "loader", None)
            origin = getattr(spec, "origin", None)
            if name in self.before or type(loader) is not SourceFileLoader:
                continue
            if not isinstance(origin, str) or not origin.endswith(".py"):
                continue
            if not origin.startswith(self.roots):
                continue  # found some other way (a path added later): not the key's to keep
            st = os.stat(origin)
            old = self.index.get(name)
            current = old is not None and old[3:6] == (origin, st.st_mtime_ns, st.st_size)
            if current and name not in self.damaged:
                continue  # stored and still current (served or not, it need not be again)
            code = loader.get_code(name)
            if code is None:
                continue
            package = getattr(spec, "submodule_search_locations", None) is not None
            fresh[name] = (marshal.dumps(code), package, origin, st.st_mtime_ns, st.st_size)
        if not fresh:
            return
        blobs: list[bytes] = []
        index: dict[str, _Entry] = {}
        offset = 0
        for name, entry in self.index.items():
            if name in fresh:
                continue  # stale: replaced below
            start, length, package, origin, mtime, size, check = entry
            blob = self.read(start, length)
            if len(blob) != length or _check(blob) != check:
                continue  # damaged: left out
            index[name] = (offset, length, package, origin, mtime, size, check)
            blobs.append(blob)
            offset += length
        for name, (blob, package, origin, mtime, size) in fresh.items():
            index[name] = (offset, len(blob), package, origin, mtime, size, _check(blob))
            blobs.append(blob)
            offset += len(blob)
        head = marshal.dumps((self.key, index))
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(_FORMAT + len(head).to_bytes(8, "little") + head)
                for blob in blobs:
                    fh.write(blob)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _nothing(offset: int, length: int) -> bytes:
    return b""


def _open(path: str, key: bytes) -> tuple[dict[str, _Entry], _Read]:
    """The index of the file at ``path`` made for ``key`` and a reader of its stored code
    (empty when absent, odd or another key's: such a file is written anew at exit)."""
    try:
        return _read(path, key)
    except Exception:  # noqa: BLE001 - whatever is wrong with it, it is not used
        return {}, _nothing


def _read(path: str, key: bytes) -> tuple[dict[str, _Entry], _Read]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))  # absent: _open's answer
    try:
        found = _index(fd, key)
    except BaseException:
        os.close(fd)
        raise
    if found is None:
        os.close(fd)
        return {}, _nothing
    index, base = found
    # The file stays open: it is replaced, never rewritten in place, so what it holds
    # cannot change under us.
    pread = getattr(os, "pread", None)
    if pread is None:  # not POSIX: the code is read at once
        with os.fdopen(fd, "rb") as fh:
            fh.seek(base)
            data = fh.read()
        return index, lambda offset, length: data[offset : offset + length]
    return index, lambda offset, length: pread(fd, length, base + offset)


def _index(fd: int, key: bytes) -> tuple[dict[str, _Entry], int] | None:
    """The index of the open file ``fd`` and where its code starts (the index's offsets
    count from there), or None when the file is odd or made for another key."""
    size = os.fstat(fd).st_size
    start = len(_FORMAT) + 8
    lead = os.read(fd, start)
    if len(lead) < start or size > _LIMIT or lead[: len(_FORMAT)] != _FORMAT:
        return None
    head = int.from_bytes(lead[len(_FORMAT) :], "little")
    if head <= 0 or start + head > size:
        return None
    made_for, index = marshal.loads(_read_exactly(fd, head))
    if (
        made_for != key
        or not isinstance(index, dict)
        or not all(isinstance(e, tuple) and len(e) == 7 for e in index.values())
    ):
        return None
    return index, start + head


def _read_exactly(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        part = os.read(fd, left)
        if not part:
            break  # a short file: the head does not unmarshal, and _open answers empty
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def install(folder: str, *, save: bool = True) -> None:
    """Serve imports from the cache file in ``folder`` and top it up at exit.

    ``save=False`` only reads it (``--help`` writes nothing under the home).
    """
    try:
        if sys.implementation.name != "cpython":
            return
        key = _key()
        path = os.path.join(folder, _name(key))
        index, read = _open(path, key)
    except Exception:  # noqa: BLE001 - a damaged cache means the normal path
        return
    finder = _Finder(path, key, index, read)
    sys.meta_path.insert(0, finder)
    if not save:
        return

    import atexit

    atexit.register(finder.save)
