"""The Reasonix home as a plain string, with nothing but :mod:`os` (CFG-2).

:func:`reasonix.config.paths.home_dir` is the same directory as a ``Path``; this
form exists for the few checks that run before the chat's first frame (the
workspace trust store), where importing pathlib would cost more than the check,
and for the .pyz's boot (:mod:`reasonix._pyzboot`), which finds its unpacked copy
under :func:`cache_str` before anything else is imported.
"""

from __future__ import annotations

import os

__all__ = ["cache_str", "home_str"]


def home_str() -> str:
    """``$REASONIX_HOME`` (``~`` expanded), else ``~/.reasonix``.

    On Windows the default is ``%APPDATA%\\reasonix``.
    """
    override = os.environ.get("REASONIX_HOME")
    if override:
        return os.path.expanduser(override)
    if os.name == "nt":
        appdata = os.environ.get("APPDATA")
        if appdata:
            return os.path.join(appdata, "reasonix")
    return os.path.join(os.path.expanduser("~"), ".reasonix")


def cache_str() -> str:
    """``$REASONIX_CACHE_HOME`` (``~`` expanded), else ``<home>/cache`` (CFG-4)."""
    override = os.environ.get("REASONIX_CACHE_HOME")
    if override:
        return os.path.expanduser(override)
    return os.path.join(home_str(), "cache")
