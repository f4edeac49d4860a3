"""The .pyz as one ordinary zip: a short directory, and the build in one stored member.

Real parts: archives written by ``build_zipapp.archive`` (the function the build
uses) around a small package, run by a child interpreter as ``python app.pyz``, so
zipimport reads the file exactly as it reads the real .pyz; the payload extracted
by :func:`reasonix._pyzarchive.payload` and unpacked by
:func:`reasonix._pyzarchive.unpack`.
"""

from __future__ import annotations

import importlib.util
import io
import json
import marshal
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from reasonix._pyzarchive import PAYLOAD, unpack

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from build_zipapp import BOOT, archive  # noqa: E402

# The entry point of the test archives: what it can import before and after the payload
# is on sys.path. COPY names where the unpacked copy would go ("" for none).
_MAIN = """
BUILD_ID = 'b'  # the copy unpack makes is named by it
import json, os, sys
sys.path.append(os.environ["ROOT"])  # reasonix._pyzarchive from the checkout
from reasonix._pyzarchive import payload
out = {}
try:
    import pkg.m
except ImportError:
    out["before"] = "missing"
out["root"] = payload(os.path.dirname(__file__), os.environ.get("COPY", ""))
sys.path.insert(0, out["root"])
import pkg.m
out["value"], out["file"], out["data"] = pkg.m.VALUE, pkg.m.__file__, pkg.m.data()
print(json.dumps(out))
"""

_FILES = {
    "__main__.py": _MAIN.encode(),
    "pkg/__init__.py": b"",
    "pkg/m.py": (
        b"VALUE = 1\n"
        b"def data():\n"
        b"    from importlib import resources\n"
        b"    return resources.files('pkg').joinpath('words.txt').read_text()\n"
    ),
    "pkg/words.txt": b"some words",
    "reasonix/_pyzboot.py": b"# the boot's modules are members of the .pyz itself\n",
}


def _write(path: Path) -> Path:
    files = dict(_FILES)
    code = compile(files["pkg/m.py"], "pkg/m.py", "exec", dont_inherit=True)
    magic = importlib.util.MAGIC_NUMBER + (0b01).to_bytes(4, "little")
    files["pkg/m.pyc"] = magic + importlib.util.source_hash(files["pkg/m.py"]) + marshal.dumps(code)
    path.write_bytes(archive(files))
    return path


def _run(app: Path, **env: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-I", str(app)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"ROOT": str(ROOT), "TMPDIR": env.pop("TMPDIR", ""), **env},
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_the_archive_is_one_plain_zip_with_the_build_in_one_stored_member(
    tmp_path: Path,
) -> None:
    app = _write(tmp_path / "app.pyz")
    with zipfile.ZipFile(app) as zf:  # what zipimport and zipfile read at every start
        assert zf.namelist() == ["__main__.py", PAYLOAD, "reasonix/_pyzboot.py"]
        assert zf.getinfo(PAYLOAD).compress_type == zipfile.ZIP_STORED  # no zlib to copy it
        inner = zipfile.ZipFile(io.BytesIO(zf.read(PAYLOAD)))
    assert "reasonix/_pyzboot" in BOOT
    assert inner.namelist() == sorted([*_FILES, "pkg/m.pyc"])  # the whole build, plainly
    assert inner.read("pkg/m.py") == _FILES["pkg/m.py"]


def test_a_start_without_a_copy_extracts_the_payload_beside_it_once(tmp_path: Path) -> None:
    app = _write(tmp_path / "app.pyz")
    copy = tmp_path / "cache" / "pyz" / "b"
    got = _run(app, COPY=str(copy))
    assert got["before"] == "missing"  # the package is not in the directory zipimport read
    payload = copy.parent / "b.zip"
    assert got["root"] == str(payload)
    # zipimport names the byte-code it imported: the payload's m.pyc, nothing compiled
    assert got["value"] == 1 and got["file"] == str(payload / "pkg" / "m.pyc")
    assert got["data"] == "some words"  # package data through importlib.resources
    assert sorted(p.name for p in copy.parent.iterdir()) == ["b.zip"]  # no half-made file
    before = payload.stat()
    assert _run(app, COPY=str(copy))["root"] == str(payload)  # the next start reuses it
    assert payload.stat().st_ino == before.st_ino and payload.stat().st_mtime == before.st_mtime


def test_without_a_writable_cache_the_payload_is_a_temporary_file_removed_at_exit(
    tmp_path: Path,
) -> None:
    app = _write(tmp_path / "app.pyz")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    temp = tmp_path / "tmp"
    temp.mkdir()
    for copy in ("", str(blocker / "pyz" / "b")):  # none (REASONIX_NO_UNPACK), unwritable
        got = _run(app, COPY=copy, TMPDIR=str(temp))
        root = Path(str(got["root"]))
        assert root.parent == temp and got["file"] == str(root / "pkg" / "m.pyc")
        assert got["value"] == 1 and got["data"] == "some words"
        assert list(temp.iterdir()) == []  # removed at exit
    assert blocker.read_text() == "x"


def test_unpacking_reads_the_extracted_payload(tmp_path: Path) -> None:
    app = _write(tmp_path / "app.pyz")
    copy = tmp_path / "cache" / "pyz" / "b"
    payload = Path(str(_run(app, COPY=str(copy))["root"]))
    unpack(str(payload), str(copy))
    assert (copy / "pkg" / "m.py").read_bytes() == _FILES["pkg/m.py"]
    assert (copy / "pkg" / "words.txt").is_file() and not (copy / PAYLOAD).exists()
    tag = sys.implementation.cache_tag
    assert (copy / "pkg" / "__pycache__" / f"m.{tag}.pyc").is_file()
    assert payload.is_file()  # a start that began before the copy may still import from it


_LIBRARY = """
import json, os, sys
app = sys.argv[1]
sys.path.insert(0, app)  # the .pyz as a library, as the remote serve daemon's starter puts it
sys.path.append(os.environ["ROOT"])
from reasonix._pyzarchive import importable
importable(app)
import pkg.m
print(json.dumps([pkg.m.VALUE, pkg.m.__file__, app in sys.path]))
"""


def test_the_archive_imported_as_a_library_has_every_module(tmp_path: Path) -> None:
    app = _write(tmp_path / "app.pyz")
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = subprocess.run(
        [sys.executable, "-I", "-c", _LIBRARY, str(app)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"ROOT": str(ROOT), "TMPDIR": str(temp)},
    )
    assert out.returncode == 0, out.stderr
    value, where, archive_on_path = json.loads(out.stdout)
    assert value == 1 and where.startswith(str(temp)) and where.endswith("/pkg/m.pyc")
    assert archive_on_path is False  # the payload took the archive's place
    assert list(temp.iterdir()) == []
    assert os.path.isfile(app)
