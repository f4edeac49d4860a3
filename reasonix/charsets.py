"""ASCII character sets for name checks, without importing :mod:`string`.

``string`` compiles ``Template``'s pattern when it is imported (about 0.6 ms
of a run's start-up); these are the same characters as
``string.ascii_letters`` and ``string.digits`` (``tests/test_digest.py``
holds them to it).
"""

from __future__ import annotations

__all__ = ["ASCII_ALNUM", "ASCII_DIGITS", "ASCII_LETTERS"]

ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
ASCII_DIGITS = "0123456789"
ASCII_ALNUM = ASCII_LETTERS + ASCII_DIGITS
