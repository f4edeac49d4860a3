"""Splitting a command's argument text into words (D24: shell quoting rules)."""

from __future__ import annotations

import shlex

__all__ = ["split_args"]


def split_args(text: str) -> list[str]:
    """``'a "b c" d'`` → ``["a", "b c", "d"]``; unbalanced quotes fall back to whitespace.

    A stray apostrophe (``don't``) is common in typed text, so an unparsable
    line is split on whitespace instead of being refused.
    """
    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return text.split()
