"""Regenerate the tool catalogs (the tools as data) from the live tools.

Usage: python -m reasonix.cli.gen_catalog [--check] [--output PATH | --output -]

Two files: reasonix/tool/builtin/_catalog.py (the built-ins; ``--output``
names where it goes) and reasonix/agent/memory/_catalog.py (the four memory
tools a parent runtime declares; always in place). The ``run`` and chat
command lines need no generated file: they are one hand-written table
(reasonix/cli/flags.py).

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
from typing import TYPE_CHECKING

from reasonix.tool import Registry, builtin_names
from reasonix.tool.builtin import BUILTIN_MODULES
from reasonix.tool.catalog import CATALOG_PATH, catalog_entry, render_catalog

if TYPE_CHECKING:
    from typing import Any

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


MEMORY_CATALOG_PATH = "reasonix/agent/memory/_catalog.py"


def memory_entries() -> dict[str, dict[str, Any]]:
    """name -> catalog entry of each memory tool, from tools over an empty store."""
    import tempfile

    from reasonix.agent.memory.catalog import Memory
    from reasonix.agent.memory.facts import FactStore
    from reasonix.agent.memory.wiring import controller_tools

    class _NoSession:
        id = ""

        def records(self) -> list[Any]:
            return []

    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(FactStore(Path(tmp) / "g", "global"), FactStore(Path(tmp) / "p", "project"))
        tools = controller_tools(memory, Path(tmp), _NoSession)
        modules = {"history": "reasonix.agent.memory.history"}
        return {
            t.name: catalog_entry(t, modules.get(t.name, "reasonix.agent.memory.tools"))
            for t in tools
        }


def _check_or_write(path: Path, text: str, check: bool) -> int:
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            sys.stderr.write(f"{path} is out of date; run: python -m reasonix.cli.gen_catalog\n")
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {path} ({len(text.splitlines())} lines)\n")
    return 0


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
    code = _check_or_write(Path(args.output), text, args.check)
    memory = render_catalog(memory_entries(), title="The memory tools")
    return _check_or_write(ROOT / MEMORY_CATALOG_PATH, memory, args.check) or code


if __name__ == "__main__":
    sys.exit(main())
