"""Startup cost of the .pyz: `python3 dist/reasonix.pyz --version` vs `python3 -c pass`.

Median of N alternating runs of each (N >= 11), on a clean interpreter
(``bench/bare_python.py``: the development environment's Python imports a
dozen modules at start-up that a user's does not). Prints one line with the
medians and two ratios: against ``python -c pass`` and against a one-line
zipapp that prints a version (issue 38's target, <= 1.05x). The second is
the part the .pyz controls: for any zipapp the interpreter imports ``runpy``
(and ``importlib.util``, ``contextlib``, ``collections``, ``functools`` behind
it) before the archive's first line runs, which ``-c pass`` never does.
``--no-cold`` prints only this line. Build first: `make build`.

``--max-ratio R`` makes it a budget check (``.ci/run`` uses 1.3): exit 1 when
the ratio to the one-line zipapp is over ``R`` in each of three measurements
(a busy machine can spoil one; the targets are reported, not asserted).

Without ``--max-ratio`` it then measures a cold start (issue 38 item 5): the
first model request of ``bench/task.py``'s run (spawn to the fake receiving it)
with an empty cache directory each time (a fresh container), with
``REASONIX_NO_UNPACK`` (a throw-away home), and warm (a cache filled by earlier
runs: the unpacked copy and its byte-code cache), interleaved in rotating order,
median of ``--cold-rounds`` (>= 5) rounds; ratios against the warm figure
(target <= 1.5x), and what a cold run leaves in the cache.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
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
    ap.add_argument("--cold-rounds", type=int, default=7, help="rounds of the cold start (>= 5)")
    ap.add_argument("--no-cold", action="store_true", help="only --version, not the cold start")
    args = ap.parse_args()
    if not PYZ.is_file():
        print("build the archive first: make build", file=sys.stderr)
        return 1
    for attempt in range(3 if args.max_ratio else 1):
        ratio = measure()
        if not args.max_ratio:
            if not args.no_cold:
                cold_start(max(5, args.cold_rounds))
            return 0
        if ratio <= args.max_ratio:
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
        f"(the one-line zipapp is {z / b:.2f}x), {o / z:.2f}x to the one-line zipapp "
        f"(target <= 1.05x, issue 38; median of {RUNS} interleaved, clean interpreter)"
    )
    return o / z


def _size(folder: str) -> int:
    """Bytes of the files under ``folder``."""
    return sum(
        os.path.getsize(os.path.join(d, name)) for d, _, names in os.walk(folder) for name in names
    )


def cold_start(rounds: int) -> None:
    """Print the first request of a cold, a no-unpack and a warm run, with their ratios."""
    from task import one_run  # the scripted task and its timed fake (bench/task.py)

    python = bare_python()
    root = tempfile.mkdtemp(prefix="reasonix-bench-cold-")
    try:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": root,
            "LANG": "C.UTF-8",
            "FAKE_PROVIDER_KEY": "sk-fake",
            "REASONIX_TRUST_WORKSPACE": "1",  # the workspace the bench writes
        }
        prompt = "fix add() in calc.py and run its test"
        argv = [python, str(PYZ), "run", "--json", "-y", prompt]
        warm = dict(env, REASONIX_CACHE_HOME=os.path.join(root, "warm"))
        for _ in range(3):  # unpack, byte-code cache, served
            one_run(lambda url: argv, warm)
        times: dict[str, list[float]] = {"cold": [], "no-unpack": [], "warm": []}
        left: list[int] = []
        for n in range(rounds):
            names = list(times)
            for name in names[n % 3 :] + names[: n % 3]:  # rotating order
                cache = os.path.join(root, f"{name}-{n}")
                run_env = dict(env, REASONIX_CACHE_HOME=cache)
                if name == "warm":
                    run_env = warm
                elif name == "no-unpack":
                    run_env["REASONIX_NO_UNPACK"] = "1"
                times[name].append(one_run(lambda url: argv, run_env)["first_request_ms"])
                if name == "cold":
                    left.append(_size(cache))
                if name != "warm":
                    shutil.rmtree(cache, ignore_errors=True)
        c, u, w = (statistics.median(times[k]) for k in ("cold", "no-unpack", "warm"))
        print(
            f"startup: first request cold {c:.0f} ms, no-unpack {u:.0f} ms, warm {w:.0f} ms; "
            f"cold {c / w:.2f}x, no-unpack {u / w:.2f}x of warm (target <= 1.5x); a cold run "
            f"leaves {statistics.median(left) / 1e6:.1f} MB in the cache (median of {rounds} "
            "interleaved rounds, clean interpreter)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
