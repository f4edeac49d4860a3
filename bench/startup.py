"""Startup cost of the .pyz: `python3 dist/reasonix.pyz --version` vs `python3 -c pass`.

Median of N alternating runs of each (N >= 11). Prints one line with both
medians and the ratio (target <= 1.2x). Build first: `make build`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYZ = ROOT / "dist" / "reasonix.pyz"
RUNS = 21


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    if not PYZ.is_file():
        print("build the archive first: make build", file=sys.stderr)
        return 1
    python = sys.executable
    bare_argv = [python, "-c", "pass"]
    pyz_argv = [python, str(PYZ), "--version"]
    for _ in range(3):  # warm the page cache
        timed(bare_argv)
        timed(pyz_argv)
    bare, ours = [], []
    for _ in range(RUNS):
        bare.append(timed(bare_argv))
        ours.append(timed(pyz_argv))
    b, o = statistics.median(bare), statistics.median(ours)
    print(
        f"startup: python -c pass {b * 1000:.1f} ms, reasonix.pyz --version {o * 1000:.1f} ms, "
        f"ratio {o / b:.2f}x (target <= 1.20x, median of {RUNS})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
