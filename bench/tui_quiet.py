"""A quiet, flicker-free chat view (issue 38, item 3), measured on the built .pyz in a pty.

Called by ``bench/tui.py`` (``--quiet-only`` runs just this part). Each figure
is printed beside a floor measured in the same minutes:

* **idle CPU**: the view, started and left alone, against a bare curses program
  blocked in ``getch`` on a terminal of its own, both running at once; CPU
  time from ``/proc/<pid>/task/*/schedstat`` (nanoseconds, every thread) over
  ``--idle-seconds`` cut into 5 windows (median). Target <= 0.5 % of a core.
* **streaming CPU**: the fake model streams 100 tokens/s for
  ``--stream-seconds`` to the view and, at the same time, the same stream to a
  bare painter (urllib + ``json.loads`` + ``addstr``/``refresh`` per token);
  CPU per window (5 windows, median). Target <= 15 % of a core.
* **bytes per streamed token** against what the changed cells need: the
  view runs under the test driver (``tests/cli/tui_pty.py``, importing the
  .pyz) that adds up, frame by frame, the UTF-8 bytes of the cells that differ
  from the frame before; the bytes are counted through the pty. Target <= 2x.
* **scroll cost**: two views resume a 5,000-block and a 50-block session;
  each round types the same PgUp/PgDn/Home/End script into each (one key at
  a time, each frame written before the next key) and takes the CPU it cost;
  median of ``--scroll-rounds`` rounds, the two in alternating order. Target
  <= 2x.
"""

from __future__ import annotations

import os
import select
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BARE_IDLE = """\
import curses
def main(s):
    s.addstr(0, 0, "Ask anything"); s.refresh(); s.getch()
curses.wrapper(main)
"""
BARE_STREAM = """\
import curses, json, sys, urllib.request, locale
locale.setlocale(locale.LC_ALL, "")
url = sys.argv[1]
def main(s):
    s.scrollok(True); s.addstr(0, 0, "Ask anything"); s.refresh()
    s.getch()
    body = json.dumps({"model": "fake-model", "stream": True,
                       "messages": [{"role": "user", "content": "go"}]}).encode()
    req = urllib.request.Request(url + "/chat/completions", body,
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        for line in resp:
            if line.startswith(b"data: {"):
                delta = json.loads(line[6:])["choices"][0]["delta"].get("content")
                if delta:
                    s.addstr(delta); s.refresh()
    s.addstr("\\nstream-end"); s.refresh(); s.getch()
curses.wrapper(main)
"""
RATE = 100  # tokens a second
SCROLL_SCRIPT = ["\x1b[H"] + ["\x1b[6~"] * 5 + ["\x1b[5~"] * 5 + ["\x1b[F"] + ["\x1b[5~"] * 5
SCROLL_SCRIPT += ["\x1b[6~"] * 5  # Home, PgDn x5, PgUp x5, End, PgUp x5, PgDn x5


def cpu(pid: int) -> float:
    """Seconds of CPU the process has used, all its threads, from the scheduler's ns counts."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between the listing and the read
    return total / 1e9


def pump(terms: list[Any], seconds: float) -> None:
    """Read (and count into ``term.got``) what the terminals write, for ``seconds``."""
    end = time.perf_counter() + seconds
    while (left := end - time.perf_counter()) > 0:
        ready, _, _ = select.select([t.master for t in terms], [], [], left)
        for t in terms:
            if t.master in ready:
                try:
                    data = os.read(t.master, 65536)
                except OSError:
                    data = b""
                t.got = getattr(t, "got", 0) + len(data)


def settle(term: Any, quiet: float = 0.015, limit: float = 5.0) -> None:
    """Read until the terminal has been silent for ``quiet`` seconds."""
    end = time.perf_counter() + limit
    while time.perf_counter() < end and select.select([term.master], [], [], quiet)[0]:
        try:
            if not os.read(term.master, 65536):
                return
        except OSError:
            return


def windows(terms: list[Any], seconds: float, n: int = 5) -> list[list[float]]:
    """CPU share (of one core) of each terminal's program in ``n`` windows of ``seconds / n``."""
    out: list[list[float]] = [[] for _ in terms]
    for _ in range(n):
        before = [cpu(t.proc.pid) for t in terms]
        start = time.perf_counter()
        pump(terms, seconds / n)
        took = time.perf_counter() - start
        for i, t in enumerate(terms):
            out[i].append((cpu(t.proc.pid) - before[i]) / took)
    return out


def _prose(tokens: int) -> list[str]:
    words = []
    for n in range(tokens):
        words.append(f"word{n % 89} " if n % 60 != 59 else f"end{n}.\n\n")
    return words


def idle(ours: list[str], python: str, env: dict[str, str], cwd: Path, seconds: float) -> None:
    from tui import Pty

    view, bare = Pty(ours, env, cwd), Pty([python, "-c", BARE_IDLE], env, cwd)
    try:
        view.wait_for(b"to compact)")
        bare.wait_for(b"Ask anything")
        pump([view, bare], 2.0)  # the runtime's start-up settles
        mine, floor = (statistics.median(w) for w in windows([view, bare], seconds))
    finally:
        view.close()
        bare.close()
    verdict = "ok" if mine <= 0.005 else "OVER"
    print(
        f"tui: idle CPU reasonix={mine:.3%} of a core bare-curses-getch={floor:.3%} "
        f"target<=0.5% {verdict} ({seconds:.0f}s, median of 5 windows, both at once)"
    )


def streaming(ours: list[str], python: str, env: dict[str, str], tmp: Path, seconds: float) -> None:
    from fakes import FakeServer, Turn
    from tui import Pty, make_session

    tokens = _prose(int(RATE * (seconds + 4)))
    turn = Turn.text_only(tokens, delay=1 / RATE)
    with FakeServer("openai", [turn]) as srv, FakeServer("openai", [turn]) as floor_srv:
        ws = tmp / "stream"
        make_session(ws, srv.url, 0)
        from reasonix.config.trust import grant

        grant(ws)
        view = Pty(ours, env, ws)
        bare = Pty([python, "-c", BARE_STREAM, floor_srv.url], env, ws)
        try:
            view.wait_for(b"to compact)")
            bare.wait_for(b"Ask anything")
            pump([view, bare], 1.0)
            os.write(view.master, b"stream please\r")
            os.write(bare.master, b"\r")
            pump([view, bare], 2.0)  # the requests are under way
            mine, floor = (statistics.median(w) for w in windows([view, bare], seconds))
        finally:
            view.close()
            bare.close()
    verdict = "ok" if mine <= 0.15 else "OVER"
    print(
        f"tui: streaming CPU reasonix={mine:.1%} of a core bare-curses-painter={floor:.1%} "
        f"ratio={mine / max(floor, 1e-9):.2f}x target<=15% {verdict} ({RATE} tokens/s, "
        f"{seconds:.0f}s, median of 5 windows, both at once)"
    )


def bytes_per_token(pyz: str, python: str, env: dict[str, str], tmp: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "cli"))
    from fakes import FakeServer, Turn
    from tui import make_session
    from tui_pty import PtyView

    tokens = _prose(RATE * 10)
    with FakeServer("openai", [Turn.text_only(tokens, delay=1 / RATE)]) as srv:
        ws = tmp / "bytes"
        make_session(ws, srv.url, 0)
        from reasonix.config.trust import grant

        grant(ws)
        view = PtyView(ws, {**env, "TUI_DRIVER_PYZ": pyz}, tmp / "bytes.jsonl", python=python)
        try:
            view.wait_log(["ready"])
            before = view.quiet(0.5)
            view.send("stream please\r")
            view.wait_log(["job_done"], timeout=60)
            after = view.quiet(0.5)
            view.send("\x04")
        finally:
            view.close()
    log = view.log()
    need = sum(e[1] for e in log[log.index(["key", "enter", ""]) :] if e[0] == "draw")
    written = after - before
    ratio = written / max(need, 1)
    verdict = "ok" if ratio <= 2 else "OVER"
    print(
        f"tui: bytes per streamed token reasonix={written / len(tokens):.1f} changed-cells="
        f"{need / len(tokens):.1f} ratio={ratio:.2f}x target<=2x {verdict}; the tokens' own text "
        f"{sum(len(t.encode()) for t in tokens) / len(tokens):.1f} ({len(tokens)} tokens "
        f"at {RATE}/s, 80x24, {sum(1 for e in log if e[0] == 'draw')} frames)"
    )


def scroll(ours: list[str], env: dict[str, str], tmp: Path, rounds: int) -> None:
    from fakes import FakeServer
    from tui import Pty, make_session

    from reasonix.config.trust import grant

    with FakeServer("openai", []) as srv:
        terms: dict[int, Any] = {}
        try:
            for blocks in (5000, 50):
                ws = tmp / f"scroll{blocks}"
                make_session(ws, srv.url, blocks // 2 * 17)  # 17 rows a turn, 2 blocks a turn
                grant(ws)
                terms[blocks] = Pty([*ours, "-c"], env, ws)
                terms[blocks].wait_for(b"to compact)", timeout=120)
            for term in terms.values():  # every block counted once, as a first Home does
                for key in ("\x1b[H", "\x1b[F"):
                    os.write(term.master, key.encode())
                    settle(term, 0.3, 60)
            costs: dict[int, list[float]] = {5000: [], 50: []}
            for r in range(rounds):
                for blocks in (5000, 50) if r % 2 == 0 else (50, 5000):
                    term = terms[blocks]
                    before = cpu(term.proc.pid)
                    for key in SCROLL_SCRIPT * 4:
                        os.write(term.master, key.encode())
                        settle(term)
                    costs[blocks].append(cpu(term.proc.pid) - before)
        finally:
            for term in terms.values():
                term.close()
    keys = len(SCROLL_SCRIPT) * 4
    big, small = statistics.median(costs[5000]), statistics.median(costs[50])
    verdict = "ok" if big / small <= 2 else "OVER"
    print(
        f"tui: scroll cost 5000-blocks={big / keys * 1000:.2f}ms/key 50-blocks="
        f"{small / keys * 1000:.2f}ms/key ratio={big / small:.2f}x target<=2x {verdict} "
        f"(PgUp/PgDn/Home/End, {keys} keys a round, median of {rounds} alternating rounds)"
    )


def run(args: Any, ours: list[str], python: str, env: dict[str, str], tmp: Path) -> None:
    """Every quiet-terminal figure (see the module's docstring)."""
    fresh = tmp / "quiet-idle"
    from fakes import FakeServer
    from tui import make_session

    from reasonix.config.trust import grant

    with FakeServer("openai", []) as srv:
        make_session(fresh, srv.url, 0)
        grant(fresh)
        idle(ours, python, env, fresh, args.idle_seconds)
    streaming(ours, python, env, tmp, args.stream_seconds)
    bytes_per_token(args.pyz, python, env, tmp)
    scroll(ours, env, tmp, args.scroll_rounds)
