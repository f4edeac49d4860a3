"""The scripted coding task: Reasonix (the built .pyz) against a minimal stdlib loop.

Both programs run as subprocesses of this script, on the same interpreter,
against the same in-process loopback fake (OpenAI wire format), doing the
same task: read a file, edit it, run its test with bash, answer. Per run we
measure:

* **first request** — from spawning the process to the fake receiving the
  first model request (startup + config + setup cost; a local server's
  window probe, GETs and Ollama's ``POST /api/show``, does not count);
* **overhead** — whole wall time minus the time the fake spent answering
  (what the agent itself costs, tools included);
* **peak RSS** — ``ru_maxrss`` of the process from ``wait4``.

Both programs, and the ``python`` the task's bash step runs, use a clean
interpreter (``bench/bare_python.py``): the development environment's Python
imports a dozen modules at start-up that a user's does not.

Every run is a first use by default (a new project directory and Reasonix
home: the sessions directory and the checkpoint repository are made during
the run); ``--returning`` keeps both between runs, as for a user's next task
in the same project.

Each figure is the median of ``--runs`` interleaved rounds (one run of each
program per round, alternating which goes first) and is printed with its
ratio to the reference (bench/ref_loop.py). Targets: first request ≤ 1.5×,
overhead ≤ 1.3×, peak RSS ≤ 40 MiB. Prints one line per figure::

    task: first_request_ms reasonix=… ref=… ratio=…x target<=1.5x ok
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bare_python import bare_python  # noqa: E402
from fakes import FakeServer, ToolSpec, Turn  # noqa: E402

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5\nprint('calc test ok')\n"
TARGETS = {"first_request_ms": 1.5, "overhead_ms": 1.3}
RSS_LIMIT_MIB = 40.0


def script() -> list[Turn]:
    """The four model answers of the task."""
    fix = '{"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}'
    cmd = json.dumps({"command": f"{bare_python()} test_calc.py"})
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]),
        Turn.tools([ToolSpec("edit_file", fix)]),
        Turn.tools([ToolSpec("bash", cmd)]),
        Turn.text_only("Fixed add(); the test passes."),
    ]


def _is_chat(path: str) -> bool:
    """A model request (not a local server's window probe such as Ollama's POST /api/show)."""
    return (
        path.split("?", 1)[0].rstrip("/").endswith(("/chat/completions", "/messages", "/responses"))
    )


class TimedServer:
    """A FakeServer that also records when requests arrive and how long answers take."""

    def __init__(self) -> None:
        self.srv = FakeServer("openai", script())
        self.first_at = 0.0
        self.busy = 0.0
        self.lock = threading.Lock()
        inner: Callable[[Any], None] = self.srv._handle

        def handle(h: Any) -> None:
            start = time.monotonic()
            with self.lock:  # the first model request; a window probe's GET or POST is none
                if not self.first_at and h.command == "POST" and _is_chat(h.path):
                    self.first_at = start
            try:
                inner(h)
            finally:
                with self.lock:
                    self.busy += time.monotonic() - start

        self.srv._handle = handle  # type: ignore[method-assign]


def one_run(
    argv_for: Callable[[str], list[str]],
    env: dict[str, str],
    extra_toml: str = "",
    place: Path | None = None,
) -> dict[str, float]:
    """Run one program on a fresh workspace; return its three figures.

    With ``place`` the workspace and the Reasonix home are the same directories
    on every run (a returning user: the project's sessions and checkpoint
    repository exist); the workspace's files are put back first.
    """
    with tempfile.TemporaryDirectory() as scratch:
        tmp = str(place) if place is not None else scratch
        ws = Path(tmp) / "repo"
        if ws.exists():
            shutil.rmtree(ws)
        ws.mkdir(parents=True)
        (ws / "calc.py").write_text(CALC)
        (ws / "test_calc.py").write_text(TEST)
        timed = TimedServer()
        with timed.srv as srv:
            (ws / "reasonix.toml").write_text(
                'default_model = "fake/fake-model"\n[[providers]]\nname = "fake"\n'
                f'kind = "openai"\nbase_url = "{srv.url}"\nmodels = ["fake-model"]\n'
                'api_key_env = "FAKE_PROVIDER_KEY"\n' + extra_toml
            )
            run_env = dict(env, REASONIX_HOME=str(Path(tmp) / "rx"))
            start = time.monotonic()
            proc = subprocess.Popen(
                argv_for(srv.url), cwd=ws, env=run_env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.monotonic() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0 or "a + b" not in (ws / "calc.py").read_text():
            raise SystemExit(f"task: {argv_for('URL')[:3]} failed (exit {proc.returncode})")
        return {
            "first_request_ms": (timed.first_at - start) * 1000,
            "overhead_ms": (wall - timed.busy) * 1000,
            "peak_rss_mib": usage.ru_maxrss / 1024,  # Linux reports KiB
        }


Program = tuple[Callable[[str], list[str]], str]  # argv for a URL, extra TOML


def interleaved(
    runs: int,
    ours: Program,
    ref: Program,
    env: dict[str, str],
    places: tuple[Path, Path] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """Per-figure medians over ``runs`` rounds of one run each, in alternating order
    (a slow spell of the machine then weighs on both programs alike)."""
    results: tuple[list[dict[str, float]], list[dict[str, float]]] = ([], [])
    for n in range(runs):
        order = (0, 1) if n % 2 == 0 else (1, 0)
        for i in order:
            argv_for, extra = (ours, ref)[i]
            results[i].append(one_run(argv_for, env, extra, places[i] if places else None))
    return tuple(  # type: ignore[return-value]
        {k: statistics.median(r[k] for r in rs) for k in rs[0]} for rs in results
    )


def main() -> int:
    """Measure both programs and print the figures with their ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pyz", default=str(ROOT / "dist" / "reasonix.pyz"))
    ap.add_argument(
        "--source", action="store_true", help="run `python -m reasonix` from this tree instead"
    )
    ap.add_argument(
        "--no-sandbox",
        action="store_true",
        help='set [sandbox] bash = "off" (the reference runs bash unsandboxed)',
    )
    ap.add_argument(
        "--returning",
        action="store_true",
        help="the same project directory and Reasonix home on every run (its sessions and "
        "checkpoint repository exist), instead of a first use every time",
    )
    ap.add_argument(
        "--max-first-request",
        type=float,
        default=0.0,
        metavar="R",
        help="budget check: exit 1 when the first-request ratio is over R in three measurements",
    )
    args = ap.parse_args()
    if not args.source and not Path(args.pyz).is_file():
        print(f"task: {args.pyz} missing; run `python build_zipapp.py` first", file=sys.stderr)
        return 2
    # A user's cache dir persists between runs (the .pyz unpacks itself there
    # once per build, and Python keeps its byte-code there), so it is shared by
    # every run here, and one unmeasured warm-up run fills it.
    cache = tempfile.mkdtemp(prefix="reasonix-bench-cache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)  # a bench leaves nothing behind
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.gettempdir(),
        "LANG": "C.UTF-8",
        "FAKE_PROVIDER_KEY": "sk-fake",
        "REASONIX_CACHE_HOME": cache,
        # the workspace the bench writes declares its (loopback) provider: trusted
        "REASONIX_TRUST_WORKSPACE": "1",
    }
    prompt = "fix add() in calc.py and run its test"
    python = bare_python()
    # The ratios depend on the interpreter (the reference's floor moves more than
    # our cost between 3.11 and 3.12), so every report says which one it ran on.
    print(f"task: python {platform.python_version()} ({sys.executable}), a clean copy "
          "for both programs and the task's test")  # fmt: skip
    program = ["-m", "reasonix"] if args.source else [args.pyz]
    if args.source:
        env["PYTHONPATH"] = str(ROOT)
    extra = '\n[sandbox]\nbash = "off"\n' if args.no_sandbox else ""

    def ours_argv(url: str) -> list[str]:
        return [python, *program, "run", "--json", "-y", prompt]

    places = None
    if args.returning:
        root = Path(tempfile.mkdtemp(prefix="reasonix-bench-returning-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        places = (root / "ours", root / "ref")
    one_run(ours_argv, env, extra, places[0] if places else None)  # warm-up: unpack, byte-code

    def ref_argv(url: str) -> list[str]:
        return [python, str(ROOT / "bench" / "ref_loop.py"), url, prompt]

    for attempt in range(3 if args.max_first_request else 1):
        ours, ref = interleaved(args.runs, (ours_argv, extra), (ref_argv, ""), env, places)
        report(ours, ref)
        ratio = ours["first_request_ms"] / ref["first_request_ms"]
        if not args.max_first_request or ratio <= args.max_first_request:
            return 0
        print(f"task: first request over the budget of {args.max_first_request:.2f}x "
              f"(attempt {attempt + 1} of 3)")  # fmt: skip
    return 1


def report(ours: dict[str, float], ref: dict[str, float]) -> None:
    """Print one line per figure with its ratio and target."""
    for key, target in TARGETS.items():
        ratio = ours[key] / ref[key] if ref[key] else float("inf")
        verdict = "ok" if ratio <= target else "OVER"
        print(f"task: {key} reasonix={ours[key]:.0f} ref={ref[key]:.0f} "
              f"ratio={ratio:.2f}x target<={target}x {verdict}")  # fmt: skip
    rss, ref_rss = ours["peak_rss_mib"], ref["peak_rss_mib"]
    verdict = "ok" if rss <= RSS_LIMIT_MIB else "OVER"
    print(f"task: peak_rss_mib reasonix={rss:.1f} ref={ref_rss:.1f} ratio={rss / ref_rss:.2f}x "
          f"target<={RSS_LIMIT_MIB:.0f}MiB {verdict}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
