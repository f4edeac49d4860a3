"""Run a fake provider server in its own process.

    python -m fakes.serve --kind openai --script script.json --port-file port.txt \
        [--requests-log requests.jsonl] [--port 0]

``script.json`` is a JSON list of steps (``Turn.to_dict()`` / ``Fault.to_dict()``
shapes; an object without ``"type"`` is a turn). The chosen port is written to
``--port-file`` once the server listens (written atomically, so a poller never
reads half a number). Every request is appended to ``--requests-log`` as one
JSON line: method, path, headers, body (text). Stops on SIGTERM or SIGINT.
Run it with ``tests/`` on ``sys.path`` (``cd tests`` or ``PYTHONPATH=tests``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

from fakes.script import step_from_dict
from fakes.server import FakeServer


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    ap = argparse.ArgumentParser(prog="python -m fakes.serve")
    ap.add_argument("--kind", required=True, choices=["openai", "anthropic", "responses"])
    ap.add_argument("--script", required=True, help="JSON file: a list of steps")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--requests-log", default="")
    args = ap.parse_args(argv)
    steps = [step_from_dict(d) for d in json.loads(Path(args.script).read_text("utf-8"))]
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    with FakeServer(args.kind, steps, port=args.port) as srv:
        tmp = args.port_file + ".tmp"
        Path(tmp).write_text(str(srv.port), "utf-8")
        os.replace(tmp, args.port_file)
        logged = 0
        while not done.wait(0.05):
            logged = _flush_log(srv, args.requests_log, logged)
        _flush_log(srv, args.requests_log, logged)
    return 0


def _flush_log(srv: FakeServer, path: str, logged: int) -> int:
    reqs = srv.requests[logged:]
    if path and reqs:
        with open(path, "a", encoding="utf-8") as f:
            for r in reqs:
                rec: dict[str, Any] = {
                    "method": r.method,
                    "path": r.path,
                    "headers": r.headers,
                    "body": r.body.decode("utf-8", "replace"),
                }
                f.write(json.dumps(rec) + "\n")
    return logged + len(reqs)


if __name__ == "__main__":
    raise SystemExit(main())
