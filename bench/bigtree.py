"""Big trees (issue 38, item 2): grep, glob, ls, ``@`` completion and checkpoints.

Generates (once, cached under the temp dir) a tree of ``--files`` files
(default 100,000; ``--kb`` per file, default 2) in 20 packages × 10 × 10
folders, with a root ``.gitignore`` (``build/``, ``*.log``) and one nested
``.gitignore`` per package (``gen/``); the ignored folders hold files too.
Each figure is the median of ``--runs`` interleaved rounds against its floor
measured in the same round:

* ``grep`` — our grep tool (ripgrep engine when ``rg`` is installed) against
  ``rg -n`` for the same pattern; our own Python engine is measured too and
  printed against the same floor (no target: it is the fallback). The
  engines must agree, and our count must equal rg's. Target ≤ 1.5×.
* ``glob`` — a deep pattern (``**/d3/**/*.py``) against ``find`` with the same
  filter (the ignored folders pruned, ``-path``/``-name``) printing each match's
  mtime (``-printf '%T@ %p'``: glob sorts newest first, so it reads them too);
  glob lists the tree with ``rg --files`` when ripgrep is installed. Target ≤ 1.5×.
* ``ls`` — a recursive listing of one folder (520 entries, with sizes) against
  ``find -printf '%p\t%s\n'`` of it.
  Target ≤ 1.5×.
* ``@`` — completion of a path typed one key at a time, per keystroke (it
  reads one folder level), modules already loaded. Target ≤ 50 ms for the
  slowest keystroke.
* ``checkpoint`` — a turn whose file tool changed 3 files: its checkpoints
  as the agent takes them (:class:`TurnRecorder`: "before" at the first write,
  "after" at the end, from those files alone), in this tree against a 100-file
  tree holding the same three files at the same paths (the same depth and folder
  size: only the number of files elsewhere differs). Target ≤ 1.2×. A turn that
  ran ``bash`` still snapshots the whole tree: printed against the same floor, no
  target.

Prints one line per figure::

    bigtree: grep ours=… ms floor(rg)=… ms ratio=…x target<=1.5x ok
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reasonix.tool import ToolContext
from reasonix.tool.builtin.glob import TOOL as GLOB
from reasonix.tool.builtin.grep import TOOL as GREP
from reasonix.tool.builtin.ls import TOOL as LS

PATTERN = r"def needle_\w+\("
DEEP_GLOB = "**/d3/**/*.py"


def build_tree(root: Path, files: int, kb: int) -> Path:
    """The generated tree under ``root`` (kept between runs; ``.complete`` marks it whole)."""
    if (root / ".complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n*.log\n")
    line = "    value = compute(index, offset) + transform(value)  # keep going\n"
    body = ("def f_{n}(index):\n" + line * max(1, kb * 1024 // len(line))).encode()
    per_leaf = max(1, files // 2000)
    n = 0
    for p in range(20):
        pkg = root / f"pkg{p:02d}"
        pkg.mkdir()
        (pkg / ".gitignore").write_text("gen/\n")
        for a in range(10):
            for b in range(10):
                leaf = pkg / f"d{a}" / f"e{b}"
                leaf.mkdir(parents=True)
                for i in range(per_leaf):
                    n += 1
                    extra = b"\ndef needle_%d(x):\n    return x\n" % n if n % 997 == 0 else b""
                    (leaf / f"m{i}.py").write_bytes(body.replace(b"{n}", b"%d" % n) + extra)
                (leaf / "run.log").write_text("def needle_in_a_log(x):\n")  # ignored
        for ignored in ("gen", "build"):
            d = pkg / ignored
            d.mkdir()
            for i in range(20):
                (d / f"g{i}.py").write_text("def needle_generated(x):\n")
    (root / ".complete").write_text(str(n))
    return root


def _small_tree(root: Path, files: int) -> Path:
    """The 100-file tree: two folders at the big tree's depth, the first holding the big
    tree's first folder's files (the ones a turn touches) at the same paths, under the
    same ``.gitignore`` files; so the two differ in how many files are elsewhere, not in
    the touched files' depth or their folder's size."""
    shutil.rmtree(root, ignore_errors=True)
    per_leaf = max(1, files // 2000)  # as build_tree fills each folder
    (root / "pkg00").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "pkg00" / ".gitignore").write_text("gen/\n")
    for i in range(100):
        leaf = root / "pkg00" / "d0" / f"e{i // per_leaf}"
        leaf.mkdir(parents=True, exist_ok=True)
        (leaf / f"m{i % per_leaf}.py").write_text(f"def f_{i}(index):\n    return index\n")
    return root


def _tool(tool: object, args: dict[str, object], ctx: ToolContext) -> str:
    res = tool.execute(json.dumps(args), ctx)  # type: ignore[attr-defined]
    if res.is_error:
        raise SystemExit(f"bigtree: {args} failed: {res.content}")
    return str(res.content)


def _count(text: str) -> int:
    """Results in a tool's output: its lines plus the "[N more …]" it left out."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    more = 0
    if lines and lines[-1].startswith("["):
        more = int(lines.pop()[1:].split()[0])
    return len([ln for ln in lines if not ln.startswith("(")]) + more


def _run(argv: list[str], cwd: Path | None = None) -> str:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False).stdout


def interleaved(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median ms of each function over ``runs`` rounds (after a warm-up), in rotating order."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    names = list(fns)
    for r in range(runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            fns[name]()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {k: statistics.median(v) for k, v in samples.items()}


def _line(name: str, ours: float, floor: float, target: float, label: str) -> bool:
    ratio = ours / floor if floor else float("inf")
    ok = ratio <= target
    print(f"bigtree: {name} ours={ours:.1f} ms floor({label})={floor:.1f} ms ratio={ratio:.2f}x "
          f"target<={target:g}x {'ok' if ok else 'OVER'}")  # fmt: skip
    return ok


def _checkpoint_turn(ws: Path, state: Path) -> Callable[[], None]:
    """One turn per call: the checkpoints of a turn whose file tool changed 3 files (its
    "before" at the first write, the write, its "after" at the end), as the agent takes
    them."""
    from reasonix.agent.checkpoints import CheckpointStore
    from reasonix.agent.turnrecorder import TurnRecorder

    store = CheckpointStore(ws, root=state)
    store.snapshot("first")  # the repository (and in the big tree its index) exist
    recorder = TurnRecorder(store)
    files = sorted(ws.rglob("m*.py"))[:3]
    turns = [0]

    def turn() -> None:
        r = turns[0] = turns[0] + 1
        recorder.begin("bench", r, f"turn {r}")
        recorder.tools_starting(full=False)  # the round's calls all name their files
        for f in files:
            recorder.before_write([f])
            with open(f, "a", encoding="utf-8") as fh:
                fh.write(f"# turn {r}\n")
        recorder.tools_done()
        recorder.end()
        recorder.settle()  # its end is recorded
        assert not recorder.off, recorder.off

    return turn


def _full_ms(ws: Path, state: Path, runs: int) -> list[float]:
    """Per turn: the snapshot of the whole tree a turn that ran bash still takes."""
    from reasonix.agent.checkpoints import CheckpointStore

    store = CheckpointStore(ws, root=state)
    store.snapshot("first")
    files = sorted(ws.rglob("m*.py"))[:3]
    times = []
    for r in range(runs):
        for f in files:
            with open(f, "a", encoding="utf-8") as fh:
                fh.write(f"# bash turn {r}\n")
        start = time.perf_counter()
        store.snapshot(f"after turn {r}")
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> int:
    """Build the trees, measure, print one line per figure."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--kb", type=int, default=2)
    ap.add_argument("--skip-checkpoint", action="store_true", help="leave out the checkpoints")
    ns = ap.parse_args()
    rg, find = shutil.which("rg"), shutil.which("find")
    if find is None:
        print("bigtree: needs find on PATH", file=sys.stderr)
        return 2
    where = Path(tempfile.gettempdir()) / f"reasonix-bigtree-{ns.files}-{ns.kb}"
    root = build_tree(where, ns.files, ns.kb)
    print(f"bigtree: {root} ({(root / '.complete').read_text()} files, ~{ns.kb} KiB each, "
          f"runs={ns.runs}, rg={'yes' if rg else 'no'}) — under load")  # fmt: skip
    ctx = ToolContext(workspace=root, extra={"grep_engine": "rg" if rg else "python"})
    py_ctx = ToolContext(workspace=root, extra={"grep_engine": "python"})
    ok = True

    grep_args = {"pattern": PATTERN, "timeout_seconds": 600}
    ours_out = _tool(GREP, grep_args, ctx)
    assert ours_out == _tool(GREP, grep_args, py_ctx), "grep engines disagree"
    if rg:
        rg_argv = [rg, "-n", "--no-require-git", PATTERN, str(root)]
        rg_hits = len(_run(rg_argv).splitlines())
        assert _count(ours_out) == rg_hits, (_count(ours_out), rg_hits)
        t = interleaved({"ours": lambda: _tool(GREP, grep_args, ctx),
                         "python": lambda: _tool(GREP, grep_args, py_ctx),
                         "rg": lambda: _run(rg_argv)}, ns.runs)  # fmt: skip
        ok &= _line("grep", t["ours"], t["rg"], 1.5, "rg")
        print(f"bigtree: grep (own Python engine) ours={t['python']:.1f} ms "
              f"ratio={t['python'] / t['rg']:.2f}x against rg (no target)")  # fmt: skip
    else:
        print("bigtree: grep skipped (no rg on PATH)")

    prune = [
        "(",
        "-name",
        "build",
        "-o",
        "-name",
        "gen",
        "-o",
        "-name",
        ".git",
        ")",
        "-prune",
        "-o",
    ]
    # glob answers newest first, so it reads each match's mtime: find prints it too
    find_glob = [find, ".", *prune, "-type", "f", "-path", "*/d3/*", "-name", "*.py",
                 "-printf", "%T@ %p\n"]  # fmt: skip
    found = len(_run(find_glob, cwd=root).splitlines())
    glob_out = _tool(GLOB, {"pattern": DEEP_GLOB}, ctx)
    assert _count(glob_out) == found, (_count(glob_out), found)
    t = interleaved({"ours": lambda: _tool(GLOB, {"pattern": DEEP_GLOB}, ctx),
                     "find": lambda: _run(find_glob, cwd=root)}, ns.runs)  # fmt: skip
    ok &= _line(f"glob {DEEP_GLOB}", t["ours"], t["find"], 1.5, "find")

    sub = "pkg07/d3"  # ls lists every entry (no ignore rules) with sizes, as find -printf does
    find_ls = [find, sub, "-mindepth", "1", "-printf", "%p\t%s\n"]
    assert _count(_tool(LS, {"path": sub, "recursive": True}, ctx)) == len(
        _run(find_ls, cwd=root).splitlines()
    )
    t = interleaved({"ours": lambda: _tool(LS, {"path": sub, "recursive": True}, ctx),
                     "find": lambda: _run(find_ls, cwd=root)}, ns.runs)  # fmt: skip
    ok &= _line(f"ls -R {sub}", t["ours"], t["find"], 1.5, "find -printf")

    from reasonix.command.refs import complete_reference

    typed = "pkg07/d3/e4/m1"
    complete_reference("@", workspace=root)  # the chat view has its modules loaded by then
    keys: list[float] = []
    for _ in range(ns.runs):
        for i in range(1, len(typed) + 1):
            start = time.perf_counter()
            complete_reference("@" + typed[:i], workspace=root)
            keys.append((time.perf_counter() - start) * 1000)
    at = statistics.median(keys)
    worst = max(keys)
    print(f"bigtree: @ completion per keystroke median={at:.2f} ms max={worst:.2f} ms "
          f"target<=50ms {'ok' if worst <= 50 else 'OVER'}")  # fmt: skip
    ok &= worst <= 50

    from reasonix.agent.checkpoints import CheckpointStore

    if ns.skip_checkpoint:
        pass
    elif CheckpointStore.available():
        scratch = Path(tempfile.mkdtemp(prefix="reasonix-bench-bigtree-"))
        try:
            small = _small_tree(scratch / "small", ns.files)
            # the turns append a comment to 3 files of the cached tree (no pattern changes)
            t = interleaved({"big": _checkpoint_turn(root, scratch / "state-big"),
                             "small": _checkpoint_turn(small, scratch / "state-small")},
                            ns.runs)  # fmt: skip
            big, little = t["big"], t["small"]
            ok &= _line("checkpoint of a 3-file turn", big, little, 1.2, "100-file tree")
            # the same store: its repository and index exist already
            full = statistics.median(_full_ms(root, scratch / "state-big", ns.runs))
            print(f"bigtree: checkpoint of a bash turn (the whole tree) ours={full:.1f} ms "
                  f"ratio={full / little:.2f}x against the same floor (no target)")  # fmt: skip
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    else:
        print("bigtree: checkpoint skipped (no git)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
