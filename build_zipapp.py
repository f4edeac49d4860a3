#!/usr/bin/env python3
"""Build dist/reasonix.pyz: one deterministic, stdlib-zipapp-compatible file.

* shebang ``#!/usr/bin/env python3``, executable;
* same source tree → byte-identical archive (fixed timestamps and modes,
  sorted entries, fixed compression level);
* the version from ``git describe --tags --always --dirty`` (``0+unknown``
  outside git) is written into ``reasonix/_version.py`` inside the archive;
* ``__main__.py`` is ``reasonix/_pyzmain.py`` with the version and the build id
  filled in: it answers ``--version`` and hands everything else to
  ``reasonix/_pyzboot.py`` (unpacking, the byte-code cache); it is stored
  uncompressed, so ``--version`` needs no ``zlib``;
* each module of the package also ships as byte-code for the Python running this
  build (``x.pyc`` beside ``x.py``, hash-based and unchecked, compiled in a child
  process with a fixed hash seed so the bytes are the same every time): zipimport
  uses it when the magic number matches, so a first start compiles nothing, and
  the boot copies it into the unpacked copy's ``__pycache__``; other Pythons
  compile the source as before. ``__main__.pyc`` (stored too) spares ``--version``
  compiling the entry point;
* a help request (``-h``/``--help``, ``help``) writes nothing under the home: no
  unpack, no byte-code, the byte-code cache file only read;
* one ordinary zip with a short directory: the entry point, the boot's modules and
  ``reasonix-payload.zip``, a stored member that is itself an ordinary zip of every
  file of the build. zipimport reads the .pyz's directory (a dozen entries instead of
  700: about 4 ms of Python code) at every start, ``--version`` too; the boot imports
  the rest from the unpacked copy, or from the payload extracted as one file
  (``reasonix/_pyzarchive.py``); ``unzip -l`` and ``zipfile`` show both levels plainly;
* tests, caches and stray byte-code are left out;
* tomli is vendored under ``_vendor/`` and put on ``sys.path`` only on
  Python 3.10 (3.11+ has tomllib);
* the built-in tool catalog (``reasonix/tool/builtin/_catalog.py``, the tools as
  data) is generated afresh from the tool classes; a stale checked-in copy is
  reported (run ``python -m reasonix.cli.gen_catalog``) but not shipped.

Usage: python build_zipapp.py [--output dist/reasonix.pyz]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import marshal
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "reasonix"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
SKIP_SUFFIXES = {".pyc", ".pyo", ".so", ".pyd"}

# The archive's entry point: this module with its two constants filled in (see build()).
MAIN_SOURCE = PACKAGE / "_pyzmain.py"


def git_version() -> str:
    """``git describe --tags --always --dirty``, or ``0+unknown`` outside git."""
    try:
        out = subprocess.run(
            ["git", "describe", "--tags", "--always", "--dirty"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "0+unknown"
    return out.stdout.strip() or "0+unknown"


def package_files() -> list[tuple[str, Path]]:
    """(archive name, source path) for every shipped file of the package."""
    files = []
    for dirpath, dirnames, filenames in os.walk(PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            path = Path(dirpath) / name
            if path.suffix in SKIP_SUFFIXES or path.name in ("_version.py", "_pyzmain.py"):
                continue  # written by build(); the entry point ships as __main__.py
            files.append((path.relative_to(ROOT).as_posix(), path))
    return files


def tomli_files() -> list[tuple[str, Path]]:
    """tomli's source files from the build environment, placed under _vendor/."""
    try:
        import tomli
    except ImportError:
        # Without it the archive would die on Python 3.10 at the first config read.
        raise SystemExit(
            "build_zipapp: tomli is not installed in the build environment; "
            "`pip install tomli` (a dev dependency) so the .pyz runs on Python 3.10"
        ) from None
    src = Path(tomli.__file__).resolve().parent
    out = []
    for path in sorted(src.iterdir()):
        if path.suffix == ".py" or path.name == "py.typed":
            out.append((f"_vendor/tomli/{path.name}", path))
    return out


CATALOG = "reasonix/tool/builtin/_catalog.py"


def fresh_catalog() -> bytes:
    """The tool catalog rendered from the tool classes (a fresh process imports them)."""
    out = subprocess.run(
        [sys.executable, "-m", "reasonix.cli.gen_catalog", "--output", "-"],
        cwd=ROOT,
        capture_output=True,
        check=False,
        timeout=120,
    )
    if out.returncode != 0:
        detail = out.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise SystemExit(f"build_zipapp: cannot generate the tool catalog: {detail[0]}")
    return out.stdout


def entry_point(version: str, ident: str) -> bytes:
    """``reasonix/_pyzmain.py`` with its two constants set to ``version`` and ``ident``."""
    text = MAIN_SOURCE.read_text(encoding="utf-8")
    for line, value in (('VERSION = "0+unknown"', version), ('BUILD_ID = ""', ident)):
        if text.count(line) != 1:
            raise SystemExit(f"build_zipapp: {MAIN_SOURCE.name} lost its line {line!r}")
        text = text.replace(line, f"{line.split(' = ')[0]} = {value!r}")
    return text.encode()


def byte_code(sources: dict[str, bytes]) -> dict[str, bytes]:
    """``x.pyc`` for every ``x.py`` of ``sources``, compiled by this Python in a child process
    whose hash seed is fixed (sets and frozensets in code are marshalled in hash order)."""
    out = subprocess.run(
        [sys.executable, __file__, "--compile-stdin"],
        input=marshal.dumps(sources),
        capture_output=True,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if out.returncode != 0:
        detail = out.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise SystemExit(f"build_zipapp: cannot compile the package: {detail[0]}")
    compiled: dict[str, bytes] = marshal.loads(out.stdout)
    return compiled


def compile_stdin() -> None:
    """The child of :func:`byte_code`: a marshalled ``{name: source}`` on stdin, the
    marshalled ``{name + "c": pyc}`` on stdout (hash-based, unchecked: the archive never
    changes under its byte-code)."""
    import importlib.util

    sources: dict[str, bytes] = marshal.loads(sys.stdin.buffer.read())
    pycs = {}
    for name in sorted(sources):
        code = compile(sources[name], name, "exec", dont_inherit=True)
        head = importlib.util.MAGIC_NUMBER + (0b01).to_bytes(4, "little")  # hash-based
        pycs[name + "c"] = head + importlib.util.source_hash(sources[name]) + marshal.dumps(code)
    sys.stdout.buffer.write(marshal.dumps(pycs))


def build_id(entries: dict[str, bytes]) -> str:
    """A short digest of the archive's content: names the unpack cache of this build."""
    digest = hashlib.sha256()
    for name in sorted(entries):
        digest.update(name.encode() + b"\0" + hashlib.sha256(entries[name]).digest())
    return digest.hexdigest()[:20]


# Stored, not deflated: zipimport reads these without importing zlib. The entry point is
# --version's path; the boot's own byte-code is all a start that runs from the unpacked
# copy reads from the archive (then no zlib before the chat's first frame: 0.4 ms).
BOOT = (
    "reasonix/__init__",
    "reasonix/_pyzarchive",  # a start without the copy: extracts the payload
    "reasonix/_pyzboot",
    "reasonix/config/__init__",
    "reasonix/config/home",
)
PAYLOAD = "reasonix-payload.zip"  # reasonix._pyzarchive.PAYLOAD
# The payload is stored too: the boot copies it out with zipimport's get_data, no zlib.
STORED = {"__main__.py", "__main__.pyc", PAYLOAD, *(name + ".pyc" for name in BOOT)}


def outer(name: str) -> bool:
    """A member of the .pyz itself (beside the payload): what runs before the boot has
    found the rest of the build, the entry point and the boot's modules."""
    stem = name.rsplit(".", 1)[0]
    return name.endswith((".py", ".pyc")) and (stem == "__main__" or stem in BOOT)


def packaged(name: str) -> bool:
    """A module of the package (its byte-code ships beside it)."""
    return name.startswith("reasonix/") and name.endswith(".py")


def _info(name: str, executable: bool = False) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED if name in STORED else zipfile.ZIP_DEFLATED
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.create_system = 3  # unix, whatever the build host is
    return info


def _zip(entries: dict[str, bytes]) -> bytes:
    """An ordinary zip of ``entries``: name order, fixed times and modes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compresslevel=9) as zf:
        for name in sorted(entries):
            zf.writestr(_info(name), entries[name])
    return out.getvalue()


def archive(entries: dict[str, bytes]) -> bytes:
    """The .pyz's bytes: the shebang and one zip of the :func:`outer` entries and
    :data:`PAYLOAD`, a zip of every entry (the boot's modules are in both: the payload
    alone is a whole build to import from or unpack)."""
    front = {name: data for name, data in entries.items() if outer(name)}
    front[PAYLOAD] = _zip(entries)
    return b"#!/usr/bin/env python3\n" + _zip(front)


def build(output: Path) -> str:
    """Write the archive to ``output``; return the version baked in."""
    version = git_version()
    entries: dict[str, bytes] = {}
    entries["reasonix/_version.py"] = (
        f'"""Version baked in by build_zipapp.py."""\n\nVERSION = {version!r}\n'
    ).encode()
    for name, path in package_files() + tomli_files():
        entries[name] = path.read_bytes()
    catalog = fresh_catalog()
    if entries.get(CATALOG) != catalog:
        sys.stderr.write(
            f"build_zipapp: {CATALOG} is out of date (shipping a fresh one); "
            "run: python -m reasonix.cli.gen_catalog\n"
        )
    entries[CATALOG] = catalog
    entries.update(byte_code({n: data for n, data in entries.items() if packaged(n)}))
    ident = build_id(entries)
    entries["__main__.py"] = entry_point(version, ident)
    # runpy imports __main__.pyc first when it suits the Python: --version compiles nothing
    entries.update(byte_code({"__main__.py": entries["__main__.py"]}))
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        fh.write(archive(entries))
    os.chmod(tmp, 0o755)
    os.replace(tmp, output)
    return version


def main(argv: list[str] | None = None) -> int:
    """Command-line entry."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "dist" / "reasonix.pyz"))
    parser.add_argument("--compile-stdin", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compile_stdin:
        compile_stdin()
        return 0
    version = build(Path(args.output))
    print(f"built {args.output} ({version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
