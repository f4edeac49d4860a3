"""Hostile shapes for a file a workspace, the home or the state dir is expected to hold.

``plant(path, shape)`` replaces ``path`` with one of :data:`SHAPES`: a FIFO
(``open`` would block forever), a symlink to ``/dev/zero`` (an endless read),
a unix socket (cannot be read), a 2 GiB sparse file (over every size cap),
or a symlink to ``/dev/null`` (a device that reads as empty). Shared by the
special-file tests of every layer.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

__all__ = ["SHAPES", "plant"]

SHAPES = ("fifo", "dev-zero", "socket", "huge", "dev-null")


def plant(path: Path, shape: str) -> Path:
    """Put ``shape`` at ``path`` (parents created, anything there replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if shape == "fifo":
        os.mkfifo(path)
    elif shape == "dev-zero":
        path.symlink_to("/dev/zero")
    elif shape == "dev-null":
        path.symlink_to("/dev/null")
    elif shape == "socket":
        # AF_UNIX paths are limited to ~107 bytes: bind relative to the directory.
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(path.name)
        finally:
            os.chdir(here)
    elif shape == "huge":
        with open(path, "wb") as fh:
            fh.truncate(2 << 30)  # sparse: no disk used
    else:
        raise ValueError(shape)
    return path
