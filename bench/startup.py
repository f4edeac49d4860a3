"""Startup cost of the .pyz: `python3 dist/reasonix.pyz --version` vs `python3 -c pass`.

Median of N alternating runs of each (N >= 11). Prints one line with both
medians and the ratio (target <= 1.2x). Build first: `make build`.

``--max-ratio R`` makes it a budget check (``.ci/run`` uses 1.3): exit 1 when
the ratio is over ``R`` in each of three measurements (a busy machine can
spoil one; the target itself is reported, not asserted).
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
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-ratio", type=float, default=0.0, help="fail above this ratio")
    args = ap.parse_args()
    if not PYZ.is_file():
        print("build the archive first: make build", file=sys.stderr)
        return 1
    for attempt in range(3 if args.max_ratio else 1):
        ratio = measure()
        if not args.max_ratio or ratio <= args.max_ratio:
            return 0
        print(f"startup: over the budget of {args.max_ratio:.2f}x (attempt {attempt + 1} of 3)")
    return 1


def measure() -> float:
    """One measurement: print the line, return the ratio."""
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
    return o / b


if __name__ == "__main__":
    sys.exit(main())
