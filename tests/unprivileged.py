"""Run a Python snippet where file permission bits apply, even when the tests run as root.

CI runs as root, and root ignores permission bits (CAP_DAC_OVERRIDE), so a
test of "the directory is read-only" would never run there. As root the
snippet runs under ``setpriv`` with the permission-override capabilities
dropped from the bounding set: still uid 0 (every path stays reachable), but
a 0500 directory is read-only to it as to anyone. Without root it runs as is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["run_python"]

ROOT = Path(__file__).resolve().parent.parent
_DROP = "-dac_override,-dac_read_search,-fowner"


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code args…`` with permission bits enforced; the finished process."""
    argv = [sys.executable, "-c", code, *args]
    if os.name == "posix" and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv (util-linux) is MISSING: needed to test permissions as root")
        argv = [setpriv, f"--bounding-set={_DROP}", "--inh-caps=-all", "--", *argv]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
