"""``reasonix trust``: trust a workspace, take the trust back, list trusted workspaces.

``reasonix trust`` (in the workspace, or ``--dir DIR``) shows what the
workspace declares that needs trust (hooks, MCP servers, providers at other
hosts, widening rules, sandbox changes) and records the trust in the user's
home. ``--show`` only shows it; ``--revoke`` forgets the trust; ``--list``
names every trusted workspace. See docs/PERMISSIONS.md, "Workspace trust".
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cli.safe_text import printable

if TYPE_CHECKING:
    from reasonix.config.trust import TrustItem

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the trust flags."""
    parser.description = (
        "Trust a workspace: its hooks, MCP servers, providers, allow rules and sandbox "
        "changes take effect (a cloned repository is untrusted until you trust it)."
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--show", action="store_true", help="show what trust would enable")
    what.add_argument("--revoke", action="store_true", help="stop trusting the workspace")
    what.add_argument("--list", action="store_true", help="list the trusted workspaces")
    parser.add_argument(
        "--dir", metavar="DIR", help="the workspace (default: the current directory)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def execute(args: argparse.Namespace) -> int:
    """Carry out one trust action; return the exit code."""
    from reasonix import config as config_mod
    from reasonix.boot import RuntimeOptions
    from reasonix.config import trust

    if args.list:
        rows = trust.trusted_workspaces()
        if args.json:
            print(json.dumps([{"workspace": p} for p in rows]))
        else:
            for path in rows:
                print(printable(path))
            if not rows:
                print("no trusted workspaces")
        return 0
    workspace = RuntimeOptions(workspace=args.dir).resolved_workspace()
    if args.revoke:
        was = trust.revoke(workspace)
        if args.json:
            print(json.dumps({"workspace": str(workspace), "revoked": was}))
        else:
            print(printable(f"{workspace}: {'no longer trusted' if was else 'was not trusted'}"))
        return 0
    state = config_mod.workspace_trust(workspace)
    if not args.show:
        trust.grant(workspace)
    trusted = True if not args.show else state.trusted
    if args.json:
        items = [{"kind": i.kind, "text": i.text, "file": i.file} for i in state.items]
        print(json.dumps({"workspace": str(workspace), "trusted": trusted, "items": items}))
        return 0
    _print_text(workspace, trusted, state.items, granted=not args.show)
    return 0


def _print_text(workspace: Path, trusted: bool, items: list[TrustItem], *, granted: bool) -> None:
    from reasonix.cli.trust_prompt import describe

    if granted:
        print(printable(f"trusted: {workspace}"))
    else:
        print(printable(f"{workspace}: {'trusted' if trusted else 'not trusted'}"))
    if items:
        print("what it declares that needs trust" + (" (now in effect):" if trusted else ":"))
        print(printable(describe([(i.kind, i.line()) for i in items])))
    else:
        print("it declares nothing that needs trust")
