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
* each stored code carries its Adler-32 checksum, checked before it is unmarshalled;
* at exit, modules imported the normal way are added and stale ones replaced
  (the file is written anew, atomically, only when something changed); any
  failure to read or write it only means imports take the normal path.

Nothing here imports the rest of Reasonix, and it is used by the .pyz only.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib

TYPE_CHECKING = False  # typing (with re and enum behind it) is not imported at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["install"]

_FORMAT = b"reasonix-codecache-4\n"
_LIMIT = 64 * 1024 * 1024  # a file bigger than this is not ours to trust

# (offset, length, is_package, origin, mtime_ns, size, Adler-32 of the code) per module name
_Entry = tuple[int, int, bool, str, int, int, int]


def _key() -> bytes:
    """What a cache file is for: this interpreter and this search path, exactly."""
    from _frozen_importlib_external import MAGIC_NUMBER

    # -O / -OO compile differently (asserts, docstrings): their code is another file's
    parts = [MAGIC_NUMBER.hex(), sys.version, sys.executable, str(sys.flags.optimize), *sys.path]
    return "\0".join(parts).encode("utf-8", "replace")


def _name(key: bytes) -> str:
    """The file name for ``key``: two checksums, not hashlib (which loads OpenSSL). The
    file holds the whole key, and a file made for another key is not used."""
    return f"codecache-{zlib.crc32(key):08x}{zlib.adler32(key):08x}.bin"


class _Finder:
    """A meta-path finder that serves stored code for unchanged source files."""

    def __init__(self, path: str, key: bytes, index: dict[str, _Entry], data: Any) -> None:
        self.path, self.key, self.index, self.data = path, key, index, data
        # Only modules found through the search path this file is keyed by are stored,
        # and none imported before the finder was there (it can never serve those).
        self.roots = tuple(p.rstrip(os.sep) + os.sep for p in sys.path if p)
        self.before = frozenset(sys.modules)
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
            code = self.data[offset : offset + length]
            if len(code) != length or zlib.adler32(code) != check:
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
            if old is not None and old[3:6] == (origin, st.st_mtime_ns, st.st_size):
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
            blob = bytes(self.data[start : start + length])
            if len(blob) != length or zlib.adler32(blob) != check:
                continue  # damaged: left out
            index[name] = (offset, length, package, origin, mtime, size, check)
            blobs.append(blob)
            offset += length
        for name, (blob, package, origin, mtime, size) in fresh.items():
            index[name] = (offset, len(blob), package, origin, mtime, size, zlib.adler32(blob))
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


def _open(path: str, key: bytes) -> tuple[dict[str, _Entry], Any]:
    """The index and the mapped code of the file at ``path`` made for ``key`` (empty
    when absent, odd or another key's: such a file is written anew at exit)."""
    try:
        return _read(path, key)
    except Exception:  # noqa: BLE001 - whatever is wrong with it, it is not used
        return {}, b""


def _read(path: str, key: bytes) -> tuple[dict[str, _Entry], Any]:
    import mmap

    with open(path, "rb") as fh:  # absent: _open's empty answer
        size = os.fstat(fh.fileno()).st_size
        start = len(_FORMAT) + 8
        if size < start or size > _LIMIT or fh.read(len(_FORMAT)) != _FORMAT:
            return {}, b""
        head = int.from_bytes(fh.read(8), "little")
        if head <= 0 or start + head > size:
            return {}, b""
        made_for, index = marshal.loads(fh.read(head))
        if (
            made_for != key
            or not isinstance(index, dict)
            or not all(isinstance(e, tuple) and len(e) == 7 for e in index.values())
        ):
            return {}, b""
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    # Offsets in the index count from the end of the head.
    return index, memoryview(data)[start + head :]


def install(folder: str) -> None:
    """Serve imports from the cache file in ``folder`` and top it up at exit."""
    try:
        if sys.implementation.name != "cpython":
            return
        key = _key()
        path = os.path.join(folder, _name(key))
        index, data = _open(path, key)
    except Exception:  # noqa: BLE001 - a damaged cache means the normal path
        return
    finder = _Finder(path, key, index, data)
    sys.meta_path.insert(0, finder)

    import atexit

    atexit.register(finder.save)
