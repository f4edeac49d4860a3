"""Benchmark the grep tool against ripgrep and GNU grep.

Builds (once, cached under the temp dir) a tree of >= 20k files by copying the
running interpreter's stdlib ``Lib/`` several times, then times the same query
with: our grep tool on the ripgrep engine, our grep tool on the Python engine,
plain ``rg -n`` and ``grep -rn``. Prints medians and the two ratios we track:

* ours(rg) / rg          target <= 1.5x
* ours(python) / grep -rn  target <= 5x

Usage: python bench/grep.py [--runs N] [--files N] [--pattern REGEX]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reasonix.tool import ToolContext
from reasonix.tool.builtin.grep import TOOL

_SKIP = shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc")


def build_tree(min_files: int) -> Path:
    """Copy the stdlib into a cached temp tree until it holds ``min_files`` files."""
    src = Path(sysconfig.get_paths()["stdlib"])
    root = Path(tempfile.gettempdir()) / f"reasonix-grep-bench-{min_files}"
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    count, copy = 0, 0
    while count < min_files:
        dest = root / f"lib{copy}"
        shutil.copytree(src, dest, ignore=_SKIP, symlinks=True)
        count += sum(1 for p in dest.rglob("*") if p.is_file())
        copy += 1
    done.write_text(str(count))
    return root


def timed(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median wall time of each function over ``runs`` rounds (after one warm-up).

    Rounds interleave the contenders, so load from other processes on a busy
    machine lands on all of them alike instead of on whichever ran last.
    """
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(vals) for name, vals in samples.items()}


def run_tool(root: Path, pattern: str, engine: str) -> str:
    ctx = ToolContext(workspace=root, extra={"grep_engine": engine})
    res = TOOL.execute(json.dumps({"pattern": pattern, "timeout_seconds": 300}), ctx)
    if res.is_error:
        raise SystemExit(f"grep tool failed: {res.content}")
    return res.content


def run_cmd(argv: list[str]) -> None:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--pattern", default=r"def \w+_hook\(")
    ns = ap.parse_args(argv)
    rg, gnu = shutil.which("rg"), shutil.which("grep")
    if rg is None or gnu is None:
        print("needs both rg and grep on PATH", file=sys.stderr)
        return 2
    root = build_tree(ns.files)
    nfiles = (root / ".complete").read_text()
    print(f"tree: {root} ({nfiles} files); pattern: {ns.pattern!r}; runs: {ns.runs}")
    out = run_tool(root, ns.pattern, "python")
    assert out == run_tool(root, ns.pattern, "rg"), "engines disagree"
    print(f"result: {out.count(chr(10)) + 1} lines (engines agree)")
    t = timed(
        {
            "ours(rg)": lambda: run_tool(root, ns.pattern, "rg"),
            "ours(python)": lambda: run_tool(root, ns.pattern, "python"),
            "rg -n": lambda: run_cmd([rg, "-n", ns.pattern, str(root)]),
            "grep -rn": lambda: run_cmd([gnu, "-rnE", ns.pattern, str(root)]),
        },
        ns.runs,
    )
    for name, secs in t.items():
        print(f"{name:>14}: {secs * 1000:8.1f} ms")
    r1 = t["ours(rg)"] / t["rg -n"]
    r2 = t["ours(python)"] / t["grep -rn"]
    print(f"ours(rg)/rg        = {r1:.2f}x  (target <= 1.5x) {'OK' if r1 <= 1.5 else 'MISS'}")
    print(f"ours(python)/grep  = {r2:.2f}x  (target <= 5x)   {'OK' if r2 <= 5 else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
