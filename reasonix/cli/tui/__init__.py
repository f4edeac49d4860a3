"""``reasonix`` in a terminal: the curses chat view, or line mode where it cannot run.

This module is what ``reasonix`` with no command dispatches to. It stays
light (its flags only; a plain command line is read without argparse, from
the flag table ``reasonix/cli/flags.py``) so the first frame paints
before the runtime is built. The full-screen view
(:mod:`reasonix.cli.tui.app`) runs when stdin and stdout are terminals,
``TERM`` is set and not ``dumb``, curses imports, and ``--plain`` was not
given; otherwise the line-mode chat (:mod:`reasonix.cli.chat_cmd`) runs.
"""

from __future__ import annotations

import os
import sys

__all__ = ["configure", "execute", "wants_view"]


def configure(parser: object) -> None:
    """The chat flags: the run flags plus ``--plain`` (the same as line mode's; cli/flags.py).

    ``parser`` is an :class:`argparse.ArgumentParser`, named only here: this module is on
    the first frame's path, which loads neither argparse nor typing.
    """
    import argparse

    from reasonix.cli.flag_parser import add_flags
    from reasonix.cli.flags import CHAT

    assert isinstance(parser, argparse.ArgumentParser)
    parser.description = "Interactive chat in the current directory."
    add_flags(parser, CHAT)


def wants_view(args: object, environ: dict[str, str] | None = None) -> bool:
    """True when the full-screen view can and should run."""
    env = os.environ if environ is None else environ
    if getattr(args, "plain", False):
        return False
    term = env.get("TERM", "")
    if not term or term == "dumb":
        return False
    try:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return False
    except (AttributeError, ValueError):
        return False
    try:
        import curses  # noqa: F401 - absent on some builds (Windows without windows-curses)
    except ImportError:
        return False
    return True


def execute(args: object) -> int:
    """Run the chat: the curses view when possible, else line mode.

    ``args``: the parsed chat flags (an argparse or a plain namespace, cli/argspec.py).
    The workspace trust question (cli/trust_prompt.py) comes first, on the plain
    terminal, before either view starts.
    """
    from reasonix.cli.trust_prompt import settle_trust

    if not getattr(args, "trust", False) and settle_trust(getattr(args, "dir", None)):
        setattr(args, "trust", True)  # noqa: B010 - either kind of namespace takes it
    if wants_view(args):
        from reasonix.cli.tui.app import run

        return run(args)
    from reasonix.cli import chat_cmd

    return chat_cmd.execute(args)
