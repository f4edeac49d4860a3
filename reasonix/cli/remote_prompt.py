"""The terminal side of ssh's prompts: host-key confirmation (TOFU) and secrets.

``remote`` never reads the terminal; it calls the callback made here from its
askpass listener. Without a terminal an unknown host key is refused with the
fingerprint and the way to accept it (``--trust FINGERPRINT``).
"""

from __future__ import annotations

import getpass
import sys

from reasonix.cli.safe_text import printable
from reasonix.lazy import Pattern
from reasonix.remote.askpass import PromptCallback

__all__ = ["fingerprint", "make_prompt"]

_FP = Pattern(r"SHA256:[A-Za-z0-9+/=]+")


def fingerprint(text: str) -> str:
    """The SHA256 fingerprint quoted in an ssh prompt ("" when none)."""
    found = _FP.search(text)
    return found.group(0) if found else ""


def _tty() -> bool:
    try:
        with open("/dev/tty"):
            return sys.stdin.isatty()
    except OSError:
        return False


def make_prompt(name: str, trust: str = "") -> PromptCallback:
    """The callback for host ``name``; ``trust`` pre-approves one fingerprint."""

    def on_prompt(kind: str, text: str) -> str | None:
        if kind == "hostkey":
            fp = fingerprint(text)
            if trust and fp == trust:
                print(printable(f"reasonix: trusting {name} host key {fp} (--trust)"),
                      file=sys.stderr)  # fmt: skip
                return "yes"
            if not _tty():
                print(
                    printable(
                        f"reasonix: {name}: unknown host key {fp or '(no fingerprint)'}; "
                        f"check it, then run again in a terminal or with --trust {fp}"
                    ),
                    file=sys.stderr,
                )
                return "no"
            print(printable(text), file=sys.stderr)
            with open("/dev/tty", "r+") as tty:
                tty.write(f"Trust the host key of {name} ({fp})? [yes/no] ")
                tty.flush()
                answer = tty.readline().strip().lower()
            return "yes" if answer in ("y", "yes") else "no"
        if kind in ("password", "passphrase") and _tty():
            return getpass.getpass(printable(text.strip()) + " ")
        if kind in ("password", "passphrase"):
            print(printable(f"reasonix: {name}: ssh asks for a {kind}, but there is no "
                            "terminal; use a key (or an agent) for this host"),
                  file=sys.stderr)  # fmt: skip
        return None

    return on_prompt
