"""Finding the Python interpreters of the compatibility matrix (3.10–3.13).

A uniquely named module, so tests can import it whatever other ``conftest``
pytest loaded first.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

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


def interpreter(minor: str) -> str:
    """The interpreter for ``minor``; a missing one fails on CI and skips loudly elsewhere."""
    found = find_python(minor)
    if found is None:
        msg = f"python{minor} not found (PATH, pyenv, /usr/bin)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return found
