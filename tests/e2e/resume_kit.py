"""Helpers for the resume tests: a shifted clock, a second build, a run that can be killed.

``shifted(pyz, days)`` is the argv prefix that runs ``pyz`` with the wall clock
moved ``days`` ahead (or as many days as a file says, read at every call, so the
date can change mid-session): a tiny wrapper shifts ``time.time``/``time_ns``/``gmtime``/
``localtime``/``strftime`` (what the program reads the date and time through)
and runs the archive with ``runpy``, as ``python reasonix.pyz`` would.

``build_variant(tmp, version, patch)`` builds a second .pyz from a copy of this
tree with another version string and ``patch(copy_root)`` applied: the same
program as it might look one release earlier.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

_SHIFT = """\
import runpy, sys, time
src = sys.argv[1]
def off():
    try:
        with open(src) as fh:
            return float(fh.read()) * 86400.0
    except OSError:
        return float(src) * 86400.0
_t, _tn, _gm, _lt, _sf = time.time, time.time_ns, time.gmtime, time.localtime, time.strftime
time.time = lambda: _t() + off()
time.time_ns = lambda: _tn() + int(off() * 1e9)
time.gmtime = lambda s=None: _gm(time.time() if s is None else s)
time.localtime = lambda s=None: _lt(time.time() if s is None else s)
time.strftime = lambda f, t=None: _sf(f, time.localtime() if t is None else t)
pyz = sys.argv[2]
sys.argv = [pyz, *sys.argv[3:]]
runpy.run_path(pyz, run_name="__main__")
"""


def shifted(pyz: Path, days: float | Path) -> list[str]:
    """argv that runs ``pyz`` with the clock ``days`` ahead (append the program's args);
    a file holding the number of days moves the clock while the program runs."""
    return [sys.executable, "-c", _SHIFT, str(days), str(pyz)]


def plain(pyz: Path) -> list[str]:
    """argv that runs ``pyz`` as it is."""
    return [sys.executable, str(pyz)]


def run_json(argv: list[str], ws: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """``<argv> run --json <args>``: the final JSON line (exit 0 required)."""
    proc = subprocess.run(
        [*argv, "run", "--json", *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, (proc.stderr + proc.stdout)[
        -3000:
    ]
    got: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return got


def build_variant(tmp: Path, version: str, patch: Callable[[Path], None]) -> Path:
    """A .pyz of a patched copy of this tree whose version reads ``version``."""
    src = tmp / "old-tree"
    shutil.copytree(ROOT / "reasonix", src / "reasonix",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    text = (ROOT / "build_zipapp.py").read_text()
    marker = 'def git_version() -> str:\n    """'
    assert marker in text
    text = text.replace(marker, f'def git_version() -> str:\n    return {version!r}\n    """')
    (src / "build_zipapp.py").write_text(text)
    patch(src)
    out = tmp / "old.pyz"
    subprocess.run([sys.executable, "build_zipapp.py", "--output", str(out)], cwd=src,
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    return out


def version_of(pyz: Path) -> str:
    """What ``pyz --version`` prints, without the program name."""
    out = subprocess.run([sys.executable, str(pyz), "--version"], capture_output=True,
                         text=True, timeout=60, check=True)  # fmt: skip
    return out.stdout.strip().removeprefix("reasonix ")
