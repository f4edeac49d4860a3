"""Regenerate docs/TOOL_CONTRACT.md and docs/TOOL_CONTRACT.zh-CN.md from the registry.

Usage: python -m reasonix.cli.gen_contract [--check] [--docs DIR]   (``make contract``)

--check writes nothing and exits 1 when a committed file differs from a fresh
render (CI and the drift test use the same comparison).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.tool import Registry
from reasonix.tool.builtin import load_all
from reasonix.tool.contract import CONTRACT_FILES, drifted, render_contract

if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, verify) the contract documents; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only; exit 1 on drift")
    parser.add_argument("--docs", default="docs", help="output directory (default: ./docs)")
    args = parser.parse_args(argv)
    docs = Path(args.docs)
    load_all()
    registry = Registry.from_builtins()
    for tool in _host_tools():
        registry.add(tool)
    if args.check:
        stale = drifted(registry, docs)
        for name in stale:
            sys.stderr.write(f"{name} is out of date; run: make contract\n")
        return 1 if stale else 0
    docs.mkdir(parents=True, exist_ok=True)
    for name, lang in CONTRACT_FILES.items():
        (docs / name).write_text(render_contract(registry, lang), encoding="utf-8")
    sys.stdout.write(f"wrote {len(CONTRACT_FILES)} files for {len(registry)} tools in {docs}\n")
    return 0


def _host_tools() -> list[Any]:
    """The sub-agent tools every runtime adds next to the built-ins (same schemas)."""
    from reasonix.agent.subagent.completion import complete_subtask_tool
    from reasonix.agent.subagent.tools import contract_tools

    return [*contract_tools(), complete_subtask_tool()]


if __name__ == "__main__":
    sys.exit(main())
