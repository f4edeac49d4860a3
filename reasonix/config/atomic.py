"""Atomic file replacement shared by the .env and TOML writers."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(
    path: Path, text: str, *, mode: int | None = None, default_mode: int = 0o644
) -> None:
    """Replace ``path`` with ``text`` so readers see the old or the new file, never half.

    ``mode`` forces the permission bits; otherwise an existing file keeps its
    bits and a new one gets ``default_mode``. The temp file lives in the same
    directory because ``os.replace`` is only atomic within one filesystem.
    """
    # Write through a symlink (dotfile managers link config files) instead of
    # replacing the link with a regular file.
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = default_mode
    import tempfile  # when something is written: it imports shutil and random

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # chmod before writing so a secret never sits in a world-readable file.
        with contextlib.suppress(OSError):
            os.chmod(tmp, mode)
        # newline="" keeps the caller's line endings exactly.
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
