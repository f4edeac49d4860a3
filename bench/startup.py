"""Startup cost of the .pyz: `python3 dist/reasonix.pyz --version` vs `python3 -c pass`.

Median of N alternating runs of each (N >= 11), on a clean interpreter
(``bench/bare_python.py``: the development environment's Python imports a
dozen modules at start-up that a user's does not). Prints one line with the
medians and two ratios: against ``python -c pass`` (issue 20's target,
<= 1.2x) and against a one-line zipapp that prints a version. The second is
the part the .pyz controls: for any zipapp the interpreter imports ``runpy``
(and ``importlib.util``, ``contextlib``, ``collections``, ``functools`` behind
it) before the archive's first line runs, which ``-c pass`` never does.
Build first: `make build`.

``--max-ratio R`` makes it a budget check (``.ci/run`` uses 1.3): exit 1 when
the ratio to the one-line zipapp is over ``R`` in each of three measurements
(a busy machine can spoil one; the targets are reported, not asserted).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from bare_python import bare_python, one_line_zipapp

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
    """One measurement: print the line, return the ratio to the one-line zipapp."""
    python = bare_python()
    argvs = {
        "bare": [python, "-c", "pass"],
        "zipapp": [python, str(one_line_zipapp('print("one-line 0.0")\n')), "--version"],
        "ours": [python, str(PYZ), "--version"],
    }
    for _ in range(3):  # warm the page cache
        for argv in argvs.values():
            timed(argv)
    times: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(RUNS):
        for name, argv in argvs.items():
            times[name].append(timed(argv))
    b, z, o = (statistics.median(times[name]) for name in ("bare", "zipapp", "ours"))
    print(
        f"startup: python -c pass {b * 1000:.1f} ms, one-line zipapp {z * 1000:.1f} ms, "
        f"reasonix.pyz --version {o * 1000:.1f} ms; ratio {o / b:.2f}x to -c pass "
        f"(target <= 1.20x; the one-line zipapp is {z / b:.2f}x), {o / z:.2f}x to the "
        f"one-line zipapp (median of {RUNS}, clean interpreter)"
    )
    return o / z


if __name__ == "__main__":
    sys.exit(main())
