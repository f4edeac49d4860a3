"""An interpreter for the benches' child processes that imports nothing extra at start-up.

The benches used to start every program with ``sys.executable``, the
development virtual environment's Python. Its ``site-packages`` holds the
editable install's ``.pth`` finder, and processing it imports ``pathlib``,
``re``, ``enum``, ``collections``, ``functools``, ``contextlib``,
``importlib.util``, ``urllib.parse`` and more (about 10 ms here) in *every*
process: ``python -c pass`` then cost as much as a program that needs those
modules, and the ``.pyz`` got them for free. A user's ``python3`` has none of
that, so a ratio measured that way flattered us.

:func:`bare_python` makes a throwaway virtual environment (no pip, no
packages, no ``.pth`` file; a few milliseconds to create) beside the bench's
other temporary files and returns its interpreter: the same Python binary and
standard library as ``sys.executable``, with an empty ``site-packages``. Both
programs of every comparison run on it. :func:`one_line_zipapp` packs a
one-line program as a zipapp: the floor of any ``.pyz``'s start (the
interpreter imports ``runpy`` before an archive's first line runs).
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
import venv
import zipapp
from pathlib import Path

__all__ = ["bare_python", "extra_startup_modules", "one_line_zipapp"]

_made: list[str] = []


def bare_python() -> str:
    """The path of a clean interpreter (made once per bench process, removed at exit)."""
    if _made:
        return _made[0]
    root = Path(tempfile.mkdtemp(prefix="reasonix-bench-python-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    venv.EnvBuilder(with_pip=False, symlinks=True, clear=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    if not python.exists():  # Windows layout
        python = root / "venv" / "Scripts" / "python.exe"
    _made.append(str(python))
    return _made[0]


def one_line_zipapp(source: str) -> Path:
    """``source`` as the ``__main__`` of a zipapp in a temporary directory (removed at exit)."""
    root = Path(tempfile.mkdtemp(prefix="reasonix-bench-zipapp-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    (root / "src").mkdir()
    (root / "src" / "__main__.py").write_text(source)
    zipapp.create_archive(root / "src", root / "one-line.pyz")
    return root / "one-line.pyz"


def extra_startup_modules(python: str) -> list[str]:
    """Modules ``python -c pass`` has loaded that a clean interpreter of the same binary
    has not (what a ``.pth`` file or ``sitecustomize`` imports): empty for :func:`bare_python`."""
    probe = "import sys; print(' '.join(sorted(sys.modules)))"
    clean = subprocess.run([bare_python(), "-c", probe], capture_output=True, text=True, check=True)
    mine = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    return sorted(set(mine.stdout.split()) - set(clean.stdout.split()))


if __name__ == "__main__":
    print(bare_python())
    print("modules the current interpreter loads at start-up beyond a clean one:")
    print(" ".join(extra_startup_modules(sys.executable)) or "(none)")
