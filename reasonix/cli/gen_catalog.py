"""Regenerate reasonix/tool/builtin/_catalog.py (the built-in tools as data) from the tools.

Usage: python -m reasonix.cli.gen_catalog [--check] [--output PATH | --output -]

Every module of ``BUILTIN_MODULES`` is imported in turn; the tools it registers
are attributed to it. --check writes nothing and exits 1 when the file differs
from a fresh render (``make lint``, the drift test and build_zipapp.py use it);
``--output -`` writes the text to stdout.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from reasonix.tool import Registry, builtin_names
from reasonix.tool.builtin import BUILTIN_MODULES
from reasonix.tool.catalog import CATALOG_PATH, catalog_entry, render_catalog

ROOT = Path(__file__).resolve().parents[2]


def live_entries() -> dict[str, dict[str, Any]]:
    """name -> catalog entry of every built-in, from the live tool objects.

    Must run in a process that has imported no built-in module yet, so each
    registration can be attributed to the module whose import made it.
    """
    owner: dict[str, str] = {}
    for module in BUILTIN_MODULES:
        before = set(builtin_names())
        if module in sys.modules:
            raise RuntimeError(f"{module} was imported before the catalog generator ran")
        importlib.import_module(module)
        for name in set(builtin_names()) - before:
            owner[name] = module
    registry = Registry.from_builtins(sorted(owner))
    return {tool.name: catalog_entry(tool, owner[tool.name]) for tool in registry.tools()}


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, verify) the catalog module; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only; exit 1 on drift")
    parser.add_argument(
        "--output",
        default=str(ROOT / CATALOG_PATH),
        help=f"file to write (default: {CATALOG_PATH})",
    )
    args = parser.parse_args(argv)
    text = render_catalog(live_entries())
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    path = Path(args.output)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            sys.stderr.write(f"{path} is out of date; run: python -m reasonix.cli.gen_catalog\n")
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {path} ({len(text.splitlines())} lines)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
