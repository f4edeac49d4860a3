"""Fixtures for tests that run the built dist/reasonix.pyz as a subprocess."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYZ = ROOT / "dist" / "reasonix.pyz"
MINORS = ("3.10", "3.11", "3.12", "3.13")


def find_python(minor: str) -> str | None:
    """A working ``python<minor>``: PATH first, then pyenv's versions, then /usr/bin."""
    candidates = [shutil.which(f"python{minor}") or ""]
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/{minor}.*/bin/python{minor}"))
    candidates.append(f"/usr/bin/python{minor}")
    for cand in candidates:
        if not cand or not os.access(cand, os.X_OK):
            continue
        ok = subprocess.run([cand, "-c", "pass"], capture_output=True, timeout=30)
        if ok.returncode == 0:
            return cand
    return None


@pytest.fixture(scope="session")
def pyz() -> Path:
    """The built archive; CI builds it before running tests/e2e."""
    if not PYZ.is_file():
        if os.environ.get("CI"):
            pytest.fail("dist/reasonix.pyz is missing: run `python build_zipapp.py` first")
        pytest.skip("dist/reasonix.pyz not built (run `make build`)")
    return PYZ


def interpreter(minor: str) -> str:
    """The interpreter for ``minor``; a missing one fails on CI and skips loudly elsewhere."""
    found = find_python(minor)
    if found is None:
        msg = f"python{minor} not found (PATH, pyenv, /usr/bin)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return found
