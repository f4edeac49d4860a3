"""The terminal side of ssh's prompts: host-key confirmation (TOFU) and secrets.

``remote`` never reads the terminal; it calls the callback made here from its
askpass listener. Without a terminal an unknown host key is refused with the
fingerprint and the way to accept it (``--trust FINGERPRINT``).
"""

from __future__ import annotations

import getpass
import os
import sys

from reasonix.cli.safe_text import printable
from reasonix.lazy import Pattern
from reasonix.remote.askpass import PromptCallback

__all__ = ["ask_tty", "fingerprint", "make_prompt"]

_FP = Pattern(r"SHA256:[A-Za-z0-9+/=]+")
_ANSWER_LIMIT = 1024  # a yes/no answer; more is not read


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


def ask_tty(question: str) -> str:
    """Write ``question`` to the controlling terminal and read one line of answer.

    Unbuffered binary I/O on the terminal device: a text ``open("/dev/tty", "r+")``
    wants a seekable file and fails on every tty. End of input reads as "".
    """
    fd = os.open("/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    with open(fd, "r+b", buffering=0) as tty:
        tty.write(printable(question).encode("utf-8", "replace"))
        line = tty.readline(_ANSWER_LIMIT)
    return line.decode("utf-8", "replace")


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
            answer = ask_tty(f"Trust the host key of {name} ({fp})? [yes/no] ").strip().lower()
            if answer in ("y", "yes"):
                print(printable(f"reasonix: {name}: host key {fp} accepted; ssh records it "
                                "in known_hosts"), file=sys.stderr)  # fmt: skip
                return "yes"
            return "no"
        if kind in ("password", "passphrase") and _tty():
            return getpass.getpass(printable(text.strip()) + " ")
        if kind in ("password", "passphrase"):
            print(printable(f"reasonix: {name}: ssh asks for a {kind}, but there is no "
                            "terminal; use a key (or an agent) for this host"),
                  file=sys.stderr)  # fmt: skip
        return None

    return on_prompt
