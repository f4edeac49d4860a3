"""The trust question an interactive frontend asks once per workspace, on its terminal.

The line chat, the curses view (before it takes the screen) and ``serve`` ask
it when the workspace declares something that needs trust and nothing has
answered yet (``--trust``, ``REASONIX_TRUST_WORKSPACE``, the user's store).
The answer "yes" is recorded in the user's home; "once" trusts this process
only; anything else runs with those declarations left out (the runtime's
notices then name each one). Nobody is asked when stdin or stdout is not a
terminal: that is a headless start.

The common cases (no declaration file, an answer in the environment, a folder
already trusted) cost a few ``stat`` calls and one small read with nothing but
:mod:`os`, so the chat's first frame does not wait.
"""

from __future__ import annotations

import os
import sys

__all__ = ["DECLARATION_FILES", "describe", "settle_trust"]

# The workspace files whose declarations may need trust (config/trust_rules.py).
DECLARATION_FILES = (
    "reasonix.toml",
    ".mcp.json",
    os.path.join(".claude", "settings.json"),
    os.path.join(".claude", "settings.local.json"),
    os.path.join(".claude", "commands"),  # shell lines and allowed-tools (command_trust)
    os.path.join(".reasonix", "commands"),
)


def describe(items: list[tuple[str, str]]) -> str:
    """The list shown before the question: what trust would enable, by kind (``items``:
    each trust item's ``(kind, line())``, see :class:`reasonix.config.trust.TrustItem`)."""
    titles = {
        "hook": "hooks (commands run on events)",
        "mcp": "MCP servers",
        "provider": "providers at hosts you did not configure",
        "permissions": "permission rules and modes that widen access",
        "sandbox": "sandbox changes",
        "serve": "browser UI settings",
        "command": "command files that run shell lines or pre-approve tools",
    }
    lines: list[str] = []
    for kind, title in titles.items():
        mine = [line for item_kind, line in items if item_kind == kind]
        if mine:
            lines.append(f"  {title}:")
            lines += [f"    - {line}" for line in mine]
    return "\n".join(lines)


def _needs_question(workspace: str) -> bool:
    from reasonix.config import trust_store

    if trust_store.env_trusts():
        return False
    if not any(os.path.exists(os.path.join(workspace, f)) for f in DECLARATION_FILES):
        return False
    return not trust_store.is_trusted(workspace)


def settle_trust(workspace_arg: str | None, *, allow_once: bool = True) -> bool | None:
    """Ask the trust question when it is needed; the ``RuntimeOptions.trust`` to build with.

    True: trusted for this process only ("once"). None: let the store decide
    (it now holds the user's "yes", or the workspace stays untrusted).
    """
    workspace = os.path.abspath(os.path.expanduser(workspace_arg or os.getcwd()))
    if not _needs_question(workspace):
        return None
    try:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return None
    except (AttributeError, ValueError):
        return None
    from pathlib import Path

    from reasonix import config as config_mod
    from reasonix.config import trust
    from reasonix.errors import ConfigError

    try:
        items = config_mod.workspace_trust(Path(workspace)).items
    except ConfigError:
        return None  # the build reports the broken file with its line
    if not items:
        return None
    from reasonix.cli.safe_text import printable

    print(printable(f"This folder is not trusted yet: {os.path.realpath(workspace)}"))
    print("Its files declare what would run code or widen access:")
    print(printable(describe([(i.kind, i.line()) for i in items])))
    print("A cloned repository is not you. Trust it only if you trust its authors.")
    once = ", [o]nce (this session only)" if allow_once else ""
    question = f"Trust this folder? [y]es, remember{once}, [N]o (leave them out): "
    try:
        answer = input(question).strip().lower()
    except EOFError:
        answer = ""
    if answer in ("y", "yes"):
        recorded = trust.grant(workspace)
        print(printable(f"trusted: {recorded} (`reasonix trust --revoke` takes it back)"))
        return None
    if allow_once and answer in ("o", "once"):
        return True
    print("not trusted: these declarations are left out this time")
    return None
