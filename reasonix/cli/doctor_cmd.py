"""``reasonix doctor [--json]``: health checks, one line each, exit 1 on any failure."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reasonix.cli.safe_text import printable

__all__ = ["configure", "execute"]

_MARK = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the doctor flags."""
    parser.description = "Check the configuration, provider, sandbox, MCP servers and terminal."
    parser.add_argument("--json", action="store_true", help="print the checks as one JSON object")
    parser.add_argument("--dir", metavar="DIR", help="check the project in DIR")


def execute(args: argparse.Namespace) -> int:
    """Run every check; 0 when none failed, else 1."""
    from reasonix.boot.doctor import run_checks
    from reasonix.errors import UsageError

    workspace = Path(args.dir).expanduser() if args.dir else Path.cwd()
    if not workspace.is_dir():
        raise UsageError(f"--dir {args.dir}: not a directory")
    checks = run_checks(workspace.resolve())
    failed = any(c.status == "fail" for c in checks)
    if args.json:
        out = {"ok": not failed, "checks": [c.as_dict() for c in checks]}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return 1 if failed else 0
    width = max(len(c.name) for c in checks)
    for c in checks:
        print(
            printable(f"{_MARK[c.status]}  {c.name.ljust(width)}  {c.detail}", keep_newlines=False)
        )
        if c.fix and c.status != "ok":
            print(printable(f"      {' ' * width}  fix: {c.fix}", keep_newlines=False))
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    print(f"\n{fails} failed, {warns} warnings, {len(checks) - fails - warns} ok")
    return 1 if failed else 0
