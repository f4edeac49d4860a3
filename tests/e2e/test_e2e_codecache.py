"""The .pyz's byte-code cache never changes which file Python imports (issue 34).

A module stored by earlier runs must give way as soon as the path search would find
another file for its name: one that appears in a ``PYTHONPATH`` folder ahead of the
standard library, or a ``reasonix/`` package in the folder the program runs from
when that folder is on the path. Each case is checked against the same run with no
cache at all (``REASONIX_NO_UNPACK=1``), which is what Python itself imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_MARK = "imported the user's own {name}"


def _env(tmp_path: Path, lib: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(tmp_path / "rx"),
        "PYTHONPATH": str(lib),
        **extra,
    }


def _rx(pyz: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(pyz), "config", "compact-ratio"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def _stored(tmp_path: Path) -> set[str]:
    """The module names the cache file of the (one) unpacked copy holds."""
    import marshal

    from reasonix._codecache import _FORMAT

    (copy,) = [p for p in (tmp_path / "rx" / "cache" / "pyz").iterdir() if p.is_dir()]
    (cache,) = (copy / ".codecache").glob("codecache-*.bin")
    raw = cache.read_bytes()
    assert raw.startswith(_FORMAT)
    size = int.from_bytes(raw[len(_FORMAT) : len(_FORMAT) + 8], "little")
    index = marshal.loads(raw[len(_FORMAT) + 8 : len(_FORMAT) + 8 + size])[-1]
    return set(index)


@pytest.mark.e2e
def test_a_module_that_appears_earlier_on_the_path_is_imported_not_the_cached_one(
    pyz: Path, tmp_path: Path
) -> None:
    lib = tmp_path / "lib"  # a PYTHONPATH folder: ahead of the standard library
    lib.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path, lib)
    for _ in range(3):  # unpack, store, serve
        out = _rx(pyz, ws, env)
        assert out.returncode == 0 and out.stdout.startswith("0.80"), out.stderr[-2000:]
    assert "argparse" in _stored(tmp_path)  # the standard argparse is in the cache now

    mark = _MARK.format(name="argparse")
    (lib / "argparse.py").write_text(f"import sys\nsys.stderr.write({mark!r})\nsys.exit(7)\n")
    plain = _rx(pyz, ws, {**env, "REASONIX_NO_UNPACK": "1"})  # no copy, no cache
    assert (plain.returncode, plain.stderr) == (7, mark)
    for _ in range(2):  # and it stays so: the next save does not bring the old one back
        cached = _rx(pyz, ws, env)
        assert (cached.returncode, cached.stderr) == (7, mark)

    (lib / "argparse.py").unlink()  # gone again: the standard one, served once more
    for _ in range(3):
        out = _rx(pyz, ws, env)
        assert out.returncode == 0 and out.stdout.startswith("0.80"), out.stderr[-2000:]


@pytest.mark.e2e
def test_a_reasonix_package_in_the_current_folder_on_the_path_changes_nothing_python_would_not(
    pyz: Path, tmp_path: Path
) -> None:
    """``PYTHONPATH=.`` in a checkout of some other ``reasonix``: the archive's own copy
    comes first on the path, so Python imports ours; the cache must agree, before and after
    the folder appears, and a module of the standard library it shadows is the user's."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path, ws)
    for _ in range(3):
        assert _rx(pyz, ws, env).returncode == 0
    assert {"json", "reasonix.config"} <= _stored(tmp_path)
    mark = _MARK.format(name="json")
    (ws / "reasonix").mkdir()
    (ws / "reasonix" / "__init__.py").write_text("raise SystemExit('not ours')\n")
    (ws / "json").mkdir()
    (ws / "json" / "__init__.py").write_text(
        f"import sys\nsys.stderr.write({mark!r})\nsys.exit(9)\n"
    )
    plain = _rx(pyz, ws, {**env, "REASONIX_NO_UNPACK": "1"})
    cached = _rx(pyz, ws, env)
    assert (cached.returncode, cached.stderr) == (plain.returncode, plain.stderr) == (9, mark)
