"""The .pyz's boot: unpacking a build, its byte-code, pruning old copies, the cache path.

Real parts: a zip archive laid out as build_zipapp.py lays one out (sources, and
``x.pyc`` beside ``x.py``), unpacked into a temporary cache, and a child
interpreter importing from the copy with an audit hook counting compilations.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from reasonix._pyzarchive import unpack
from reasonix._pyzboot import _is_help, is_complete
from reasonix.config.home import cache_str
from reasonix.config.paths import cache_dir


def _pyc(source: bytes, name: str, magic: bytes = importlib.util.MAGIC_NUMBER) -> bytes:
    code = compile(source, name, "exec", dont_inherit=True)
    head = magic + (0b01).to_bytes(4, "little") + importlib.util.source_hash(source)
    return head + marshal.dumps(code)


def _archive(path: Path, build_id: str) -> Path:
    """An archive of build ``build_id`` (its entry point names it, as build_zipapp.py's does)."""
    files = {
        "__main__.py": f"BUILD_ID = {build_id!r}\n".encode(),
        "pkg/__init__.py": b"",
        "pkg/m.py": b"VALUE = 1\n",
        "pkg/n.py": b"VALUE = 2\n",
    }
    files["pkg/__init__.pyc"] = _pyc(files["pkg/__init__.py"], "pkg/__init__.py")
    files["pkg/m.pyc"] = _pyc(files["pkg/m.py"], "pkg/m.py")
    files["pkg/n.pyc"] = _pyc(files["pkg/n.py"], "pkg/n.py", magic=b"\0\0\r\n")  # another Python
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def _aged(path: Path, seconds_ago: float) -> None:
    when = time.time() - seconds_ago
    os.utime(path, (when, when))


# Imports pkg.m and pkg.n from the folder named first, and reports their values and the
# files it had to compile.
_IMPORT = r"""
import json, sys
compiled = []
sys.addaudithook(lambda e, a: compiled.append(a[1]) if e == "compile" else None)
sys.path.insert(0, sys.argv[1])
import pkg.m, pkg.n
print(json.dumps([pkg.m.VALUE, pkg.n.VALUE, [c for c in compiled if "pkg" in str(c)]]))
"""


def _import_from(copy: Path) -> list[object]:
    out = subprocess.run([sys.executable, "-I", "-c", _IMPORT, str(copy)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    result: list[object] = json.loads(out.stdout)
    return result


def test_unpack_writes_the_archives_byte_code_where_the_importer_looks(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "app.pyz", "build-b")
    copy = tmp_path / "cache" / "pyz" / "build-b"
    unpack(str(archive), str(copy))
    assert is_complete(str(copy))
    tag = sys.implementation.cache_tag
    assert (copy / "pkg" / "__pycache__" / f"m.{tag}.pyc").is_file()
    assert not (copy / "pkg" / "__pycache__" / f"n.{tag}.pyc").exists()  # another magic
    assert not (copy / "pkg" / "m.pyc").exists()  # the archive's own .pyc is not unpacked
    value_m, value_n, compiled = _import_from(copy)
    assert (value_m, value_n) == (1, 2)
    assert compiled == [str(copy / "pkg" / "n.py")]  # only the one without usable byte-code
    # the placed byte-code is checked against its source like any .pyc: an edit is seen
    (copy / "pkg" / "m.py").write_text("VALUE = 'edited'\n")
    assert _import_from(copy)[0] == "edited"


def test_unpacking_prunes_all_but_the_current_and_the_previous_copy(tmp_path: Path) -> None:
    parent = tmp_path / "pyz"
    for name, age in (("oldest", 300), ("older", 200), ("previous", 100)):
        (parent / name).mkdir(parents=True)
        (parent / name / ".complete").touch()
        _aged(parent / name / ".complete", age)
    (parent / "not-ours").mkdir()  # no .complete: nothing of ours, left alone
    (parent / ".unpack-killed").mkdir()
    _aged(parent / ".unpack-killed", 7200)  # left by a process killed long ago
    (parent / ".unpack-running").mkdir()  # another process may be unpacking now
    # Extracted payloads (<build>.zip) go with their copies; a start that began before its
    # copy existed may still import from one, so another's is kept while it is young.
    for name in ("oldest", "older", "previous", "current", "running"):
        (parent / f"{name}.zip").write_bytes(b"PK")
    _aged(parent / "previous.zip", 7200)
    _aged(parent / "current.zip", 7200)  # the current build's: next builds prune it
    (parent / ".payload-killed").write_bytes(b"PK")
    _aged(parent / ".payload-killed", 7200)
    (parent / ".payload-running").write_bytes(b"PK")
    unpack(str(_archive(tmp_path / "app.pyz", "current")), str(parent / "current"))
    left = sorted(p.name for p in parent.iterdir())
    assert left == [".payload-running", ".unpack-running", "current", "current.zip",
                    "not-ours", "previous", "running.zip"]  # fmt: skip


def test_unpacking_where_it_cannot_write_changes_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    unpack(str(_archive(tmp_path / "app.pyz", "b")), str(blocker / "pyz" / "b"))  # never raises
    assert blocker.read_text() == "x"


def test_an_archive_replaced_while_it_ran_is_not_unpacked_as_the_old_build(tmp_path: Path) -> None:
    """The copy is named by the build that started; the file at the archive's path at exit
    may be another build (upgraded in place): its content must not go under the old name."""
    archive = _archive(tmp_path / "app.pyz", "newer-build")
    unpack(str(archive), str(tmp_path / "pyz" / "started-build"))
    assert not (tmp_path / "pyz" / "started-build").exists()


@pytest.mark.parametrize(
    ("args", "help_"),
    [(["--help"], True), (["run", "-h"], True), (["help"], True), (["run", "--", "-h"], False),
     (["run", "x"], False), ([], False)],
)  # fmt: skip
def test_help_requests(args: list[str], help_: bool) -> None:
    assert _is_help(args) is help_


def test_the_cache_dir_expands_a_tilde_and_follows_appdata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("REASONIX_CACHE_HOME", "~/c")
    assert cache_str() == str(tmp_path / "c") == str(cache_dir())
    monkeypatch.delenv("REASONIX_CACHE_HOME")
    monkeypatch.setenv("REASONIX_HOME", "~/rx")
    assert cache_str() == str(tmp_path / "rx" / "cache") == str(cache_dir())
    monkeypatch.delenv("REASONIX_HOME")
    monkeypatch.setattr(os, "name", "nt")
    monkeypatch.setenv("APPDATA", str(tmp_path / "appdata"))
    assert cache_str() == os.path.join(str(tmp_path / "appdata"), "reasonix", "cache")
