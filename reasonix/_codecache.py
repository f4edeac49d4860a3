"""One file of byte-code for the modules a run of the .pyz imports: imports without the search.

A plain import walks ``sys.path`` (a directory stat and a listing lookup per
entry), stats the source, opens and checks its ``.pyc`` and reads it: a
fraction of a millisecond per module, and a run imports some two hundred
and fifty. When the .pyz runs from its unpacked copy, its boot
(:mod:`reasonix._pyzboot`) installs :class:`_Finder` first on ``sys.meta_path``;
it answers from one file, ``<copy>/.codecache/codecache-<key>.bin``, that holds
the marshalled code of every module an earlier run of this build imported from
source, stdlib and ours alike. The file is read with ``os.pread``, never mapped
into memory: its index once at start, then each module's code when it is served.

What keeps it honest:

* the file is made for a key, the interpreter (its byte-code magic,
  version, executable, ``-O`` level and frozen-module choice), the whole
  ``sys.path`` and the finders on ``sys.meta_path``, which it holds and is
  checked against, so another Python, a virtual environment, ``-O`` or
  another ``PYTHONPATH`` uses a file of its own;
* it never changes which file Python would import. A module is stored only
  where the path search found it: with the search path that led to it (the
  entries of ``sys.path``, or of its package's ``__path__``, up to the one
  that holds it) and the state of those directories (device, inode and
  modification time: a name added to or removed from one changes it). It is
  served only while its search path reads the same and none of those
  directories has changed, so a module that appears earlier on the path (a
  ``reasonix/`` or ``json.py`` in a ``PYTHONPATH`` folder, a package beside
  a module of its name) is imported the normal way. Directories are looked at
  once a run (``importlib.invalidate_caches()`` looks again), as the path
  finder's own listing cache does;
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
  served), so neither ``mmap`` is loaded nor the whole file read (where there is
  no ``os.pread``, as on Windows, the code part is read at once);
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
import types
from collections.abc import Callable, Sequence  # no typing: this runs before every command
from importlib.machinery import ModuleSpec  # loaded already: runpy imports it

_Read = Callable[[int, int], bytes]  # (offset, length) -> the stored bytes there

__all__ = ["install"]

_FORMAT = b"reasonix-codecache-6\n"
_LIMIT = 64 * 1024 * 1024  # a file bigger than this is not ours to trust

_SEED = 0x5245_4153_4F4E_4958  # the checksum's key ("REASONIX"): any fixed number does

# Per module name: (offset, length, is_package, origin, mtime_ns, size, checksum of the code,
# the search path that found it: its entries up to the one holding the module)
_Entry = tuple[int, int, bool, str, int, int, bytes, tuple[str, ...]]
# A directory's state: (device, inode, mtime_ns); () when it does not exist
_State = tuple[int, ...]


def _check(code: bytes) -> bytes:
    """The checksum of stored code (8 bytes)."""
    return _imp.source_hash(_SEED, code)  # type: ignore[no-any-return]


def _key() -> bytes:
    """What a cache file is for: this interpreter and this search path, exactly."""
    from _frozen_importlib_external import MAGIC_NUMBER

    # -O / -OO compile differently (asserts, docstrings): their code is another file's.
    # -X frozen_modules decides whether os, codecs … come frozen or from their files, and
    # a finder ahead of the path search (an editable install's) may claim any name.
    frozen = str(getattr(sys, "_xoptions", {}).get("frozen_modules", ""))
    finders = [f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', type(f).__qualname__)}"
               for f in sys.meta_path]  # fmt: skip
    parts = [MAGIC_NUMBER.hex(), sys.version, sys.executable, str(sys.flags.optimize), frozen,
             "\1".join(finders), *sys.path]  # fmt: skip
    return "\0".join(parts).encode("utf-8", "replace")


def _state(folder: str) -> _State:
    """What a search-path entry looks like now; any name added or removed changes it."""
    try:
        st = os.stat(folder or os.curdir)  # "" on sys.path is the current directory
    except OSError:
        return ()
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


def _placed(name: str, origin: str, package: bool, path: Sequence[str]) -> tuple[str, ...] | None:
    """The search path that finds ``name`` at ``origin``: ``path``'s entries up to the one
    holding it, or None when the path search would not find it there (loaded some other
    way, or an earlier entry holds a directory of its name, a namespace portion that an
    ``__init__.py`` added later would make the winner)."""
    tail = name.rpartition(".")[2]
    holder, base = os.path.split(origin)
    if package:
        holder, folder = os.path.split(holder)
        if base != "__init__.py" or folder != tail:
            return None
    elif base != tail + ".py" or os.path.isdir(os.path.join(holder, tail)):
        return None
    entries = list(path)
    for i, entry in enumerate(entries):
        if not isinstance(entry, str):
            return None
        if os.path.abspath(entry or os.curdir) == holder:
            return tuple(entries[: i + 1])
        if os.path.isdir(os.path.join(entry or os.curdir, tail)):
            return None
    return None


def _needs(entry: _Entry) -> tuple[str, ...]:
    """The directories whose state an entry depends on: its search path, and a package's own
    directory (an ``__init__`` of another kind there would take its place)."""
    search = entry[7]
    return (*search, os.path.dirname(entry[3])) if entry[2] else search


def _name(key: bytes) -> str:
    """The file name for ``key``: its checksum, not hashlib (which loads OpenSSL). The
    file holds the whole key, and a file made for another key is not used."""
    return f"codecache-{_check(key).hex()}.bin"


class _Finder:
    """A meta-path finder that serves stored code for unchanged source files."""

    def __init__(
        self,
        path: str,
        key: bytes,
        stored: tuple[dict[str, _State], dict[str, _Entry]],
        read: _Read,
    ) -> None:
        self.path, self.key, self.read = path, key, read
        self.dirs, self.index = stored  # the directories' states when the file was written
        self.seen: dict[str, _State] = {}  # each directory's state when this run first looked
        # None imported before the finder was there is stored (it can never serve those).
        self.before = frozenset(sys.modules)
        self.damaged: set[str] = set()  # stored code that failed its checksum: stored anew
        from _frozen_importlib import ModuleSpec
        from _frozen_importlib_external import SourceFileLoader

        class _Loader(SourceFileLoader):  # type: ignore[misc, valid-type]
            """The normal source loader whose byte-code comes from the cache file."""

            def __init__(self, fullname: str, path: str, code: bytes) -> None:
                super().__init__(fullname, path)
                self._code: bytes | None = code

            def get_code(self, fullname: str) -> types.CodeType | None:
                if fullname == self.name and self._code is not None:
                    code, self._code = self._code, None
                    loaded: types.CodeType = marshal.loads(code)
                    return loaded
                return super().get_code(fullname)

        self._spec, self._loader = ModuleSpec, _Loader

    def _look(self, folder: str) -> _State:
        """The state of ``folder`` as this run first saw it."""
        got = self.seen.get(folder)
        if got is None:
            got = self.seen[folder] = _state(folder)
        return got

    def invalidate_caches(self) -> None:
        """``importlib.invalidate_caches()``: look at the directories afresh."""
        self.seen.clear()

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        """The spec of ``name`` when its stored code is still its source's and the search
        would still find its file, else None (the normal search then runs)."""
        try:
            search = list(sys.path if path is None else path)
            entry = self.index.get(name)
            if entry is None or not self._current(entry, search):
                for folder in search:  # what the normal search is about to read (save checks)
                    if isinstance(folder, str):
                        self._look(folder)
                return None
            offset, length, package, origin, mtime, size, check, _ = entry
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

    def _current(self, entry: _Entry, search: list[str]) -> bool:
        """The search would still find the stored file: the same path up to its entry, and
        none of its directories changed (no module of the name appeared earlier)."""
        found = entry[7]
        if tuple(search[: len(found)]) != found:
            return False
        return all(self._look(d) == self.dirs.get(d) for d in _needs(entry))

    def save(self) -> None:
        """Store the code of every module imported from source that the file lacks."""
        try:
            self._save()
        except Exception:  # noqa: BLE001 - the cache is an optimisation; exit must go on
            pass

    def _save(self) -> None:
        from _frozen_importlib_external import SourceFileLoader

        now: dict[str, _State] = {}

        def state(folder: str) -> _State:  # as it is at exit
            got = now.get(folder)
            if got is None:
                got = now[folder] = _state(folder)
            return got

        def steady(folder: str) -> bool:  # unchanged since this run first looked
            return self.seen.get(folder, state(folder)) == state(folder)

        # Stored entries whose search path is as it was (their directories unchanged).
        kept = {
            name: e
            for name, e in self.index.items()
            if name not in self.damaged
            and all(self.dirs.get(d) == state(d) and steady(d) for d in _needs(e))
        }
        fresh: dict[str, _Entry] = {}
        blobs: dict[str, bytes] = {}
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            loader = getattr(spec, "loader", None)
            origin = getattr(spec, "origin", None)
            if name in self.before or type(loader) is not SourceFileLoader:
                continue
            if getattr(spec, "name", None) != name:
                continue  # an alias (os.path): not what the search finds for this name
            if not isinstance(origin, str) or not origin.endswith(".py"):
                continue
            st = os.stat(origin)
            old = kept.get(name)
            if old is not None and old[3:6] == (origin, st.st_mtime_ns, st.st_size):
                continue  # stored and still current (served or not, it need not be again)
            package = getattr(spec, "submodule_search_locations", None) is not None
            parent = name.rpartition(".")[0]
            path = getattr(sys.modules.get(parent), "__path__", None) if parent else sys.path
            search = _placed(name, origin, package, path) if path is not None else None
            if search is None:
                continue  # not found by the path search: not ours to stand in for
            entry: _Entry = (0, 0, package, origin, st.st_mtime_ns, st.st_size, b"", search)
            if not all(steady(d) for d in _needs(entry)):
                continue  # a directory changed while we ran: what it held then is unknown
            code = loader.get_code(name)
            if code is None:
                continue
            blobs[name] = marshal.dumps(code)
            fresh[name] = entry
        if not fresh and len(kept) == len(self.index):
            return
        out: list[bytes] = []
        index: dict[str, _Entry] = {}
        offset = 0
        for name, entry in kept.items():
            if name in fresh:
                continue  # stale: replaced below
            start, length, package, origin, mtime, size, check, search = entry
            blob = self.read(start, length)
            if len(blob) != length or _check(blob) != check:
                continue  # damaged: left out
            index[name] = (offset, length, package, origin, mtime, size, check, search)
            out.append(blob)
            offset += length
        for name, entry in fresh.items():
            blob = blobs[name]
            _, _, package, origin, mtime, size, _, search = entry
            index[name] = (offset, len(blob), package, origin, mtime, size, _check(blob), search)
            out.append(blob)
            offset += len(blob)
        dirs = {d: state(d) for e in index.values() for d in _needs(e)}
        head = marshal.dumps((self.key, dirs, index))
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(_FORMAT + len(head).to_bytes(8, "little") + head)
                for blob in out:
                    fh.write(blob)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _nothing(offset: int, length: int) -> bytes:
    return b""


_Stored = tuple[dict[str, _State], dict[str, _Entry]]  # the directories' states, the index


def _open(path: str, key: bytes) -> tuple[_Stored, _Read]:
    """The directory states and index of the file at ``path`` made for ``key`` and a reader
    of its stored code (empty when absent, odd or another key's: written anew at exit)."""
    try:
        return _read(path, key)
    except Exception:  # noqa: BLE001 - whatever is wrong with it, it is not used
        return ({}, {}), _nothing


def _read(path: str, key: bytes) -> tuple[_Stored, _Read]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))  # absent: _open's answer
    try:
        found = _index(fd, key)
    except BaseException:
        os.close(fd)
        raise
    if found is None:
        os.close(fd)
        return ({}, {}), _nothing
    stored, base = found
    # The file stays open: it is replaced, never rewritten in place, so what it holds
    # cannot change under us.
    pread = getattr(os, "pread", None)
    if pread is None:  # not POSIX: the code is read at once
        with os.fdopen(fd, "rb") as fh:
            fh.seek(base)
            data = fh.read()
        return stored, lambda offset, length: data[offset : offset + length]
    return stored, lambda offset, length: pread(fd, length, base + offset)


def _index(fd: int, key: bytes) -> tuple[_Stored, int] | None:
    """The directory states and index of the open file ``fd`` and where its code starts
    (the index's offsets count from there), or None when it is odd or another key's."""
    size = os.fstat(fd).st_size
    start = len(_FORMAT) + 8
    lead = os.read(fd, start)
    if len(lead) < start or size > _LIMIT or lead[: len(_FORMAT)] != _FORMAT:
        return None
    head = int.from_bytes(lead[len(_FORMAT) :], "little")
    if head <= 0 or start + head > size:
        return None
    made_for, dirs, index = marshal.loads(_read_exactly(fd, head))
    if (
        made_for != key
        or not isinstance(dirs, dict)
        or not isinstance(index, dict)
        or not all(isinstance(e, tuple) and len(e) == 8 for e in index.values())
    ):
        return None
    return (dirs, index), start + head


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
        if save:
            # made before the finder first looks at the folders: the folder holding the
            # file should not be one of them (its change at each save would make every
            # module stored through it look shadowed), and making it later would be one
            os.makedirs(folder, exist_ok=True)
        key = _key()
        path = os.path.join(folder, _name(key))
        stored, read = _open(path, key)
    except Exception:  # noqa: BLE001 - a damaged cache means the normal path
        return
    finder = _Finder(path, key, stored, read)
    sys.meta_path.insert(0, finder)
    if not save:
        return

    import atexit

    atexit.register(finder.save)
