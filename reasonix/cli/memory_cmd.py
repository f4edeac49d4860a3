"""``reasonix memory``: inspect and manage remembered facts from the shell.

``list [--scope S] | search QUERY | show ID | revisions ID | restore ID REV |
archived | recover NAME | forget ID`` over the project store of the current
directory (or ``--dir``) and the global store. The person running the
command is the approval, so no write policy applies; the same actions back
the chat view's ``/memory`` command (:mod:`reasonix.agent.memory.commands`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the ``memory`` sub-subcommands."""
    parser.description = "Inspect and manage remembered facts (project and global memory)."
    parser.add_argument("--dir", default=".", help="workspace whose project memory to use")
    sub = parser.add_subparsers(dest="memory_command", metavar="ACTION")
    ls = sub.add_parser("list", help="list active facts")
    ls.add_argument("--scope", choices=["all", "project", "global"], default="all")
    find = sub.add_parser("search", help="BM25 search over active facts")
    find.add_argument("query", nargs="+")
    find.add_argument("--scope", choices=["all", "project", "global"], default="all")
    sub.add_parser("show", help="print one fact in full").add_argument("id")
    sub.add_parser("revisions", help="every revision of a fact").add_argument("id")
    rest = sub.add_parser("restore", help="make an old revision current (as a new revision)")
    rest.add_argument("id")
    rest.add_argument("revision", type=int)
    sub.add_parser("archived", help="list forgotten facts")
    sub.add_parser("recover", help="bring an archived fact back").add_argument("path")
    sub.add_parser("forget", help="archive a fact").add_argument("id")


def execute(args: argparse.Namespace) -> int:
    """Run one memory action and print its result."""
    from reasonix.agent.memory import commands as c
    from reasonix.agent.memory.catalog import Memory
    from reasonix.cli.safe_text import printable
    from reasonix.errors import UsageError

    workspace = Path(args.dir).expanduser()
    if not workspace.is_dir():
        raise UsageError(f"--dir {args.dir}: not a directory")
    memory = Memory.for_workspace(workspace.resolve())
    action = args.memory_command or "list"
    if action == "list":
        out = c.list_facts(memory, getattr(args, "scope", "all"))
    elif action == "search":
        out = c.search(memory, " ".join(args.query), args.scope)
    elif action == "show":
        out = c.show(memory, args.id)
    elif action == "revisions":
        out = c.revisions(memory, args.id)
    elif action == "restore":
        out = c.restore(memory, args.id, args.revision)
    elif action == "archived":
        out = c.archived(memory)
    elif action == "recover":
        out = c.recover(memory, args.path)
    else:
        out = c.forget(memory, args.id)
    print(printable(out))
    return 0
