"""Read a file from a workspace, the home or the state dir without trusting what it is.

A cloned repository is untrusted input: ``reasonix.toml`` may be a symlink to
``/dev/zero`` (an endless read that grows until the OOM killer ends it), a
FIFO (``open`` blocks forever), a socket, or a 10 GB sparse file. Every
reader of such a file goes through this module: the file is opened
non-blocking (a FIFO opens at once instead of waiting for a writer), its type
is checked on the open descriptor (no race with a swap after a ``stat``),
only a regular file is read, and never more than a cap that fits its kind.
A refusal is a typed error naming the file; a missing file stays a
``FileNotFoundError`` and a directory an ``IsADirectoryError``, so callers
keep their "absent is fine" handling.

It lives in ``config`` because that is the lowest layer every reader of
these files may import (config, agent, plugin, command, boot and the
frontends); core stays errors and cancel. The tool layer, which reads
workspace files on the model's behalf, applies the same rule in
``tool/builtin/_files.py`` (it may import only permission and core).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import ConfigError, ReasonixError

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = [
    "CONFIG_LIMIT",
    "INSTRUCTIONS_LIMIT",
    "LEASE_LIMIT",
    "MEMORY_LIMIT",
    "STATE_LIMIT",
    "TRANSCRIPT_LIMIT",
    "open_regular",
    "read_bytes",
    "read_text",
]

# Caps per kind of file: far above any real file of that kind, far below a
# size that would hurt. A file over its cap is refused, never half-read
# (except instructions, which the caller truncates with a marker).
CONFIG_LIMIT = 4 << 20  # reasonix.toml, config.toml, .mcp.json, .env, hooks settings
INSTRUCTIONS_LIMIT = 1 << 20  # REASONIX.md / AGENTS.md / CLAUDE.md, commands, skills
MEMORY_LIMIT = 1 << 20  # one memory fact or revision
STATE_LIMIT = 4 << 20  # OAuth state, plans, goals, capsules
LEASE_LIMIT = 64 << 10  # a session lease (a few dozen bytes when we wrote it)
TRANSCRIPT_LIMIT = 512 << 20  # one session transcript

_KINDS = {
    stat.S_IFIFO: "is a FIFO (named pipe)",
    stat.S_IFCHR: "is a character device",
    stat.S_IFBLK: "is a block device",
    stat.S_IFSOCK: "is a socket",
}


def _refuse(path: Path, detail: str, error: type[ReasonixError]) -> ReasonixError:
    text = f"{detail}; Reasonix reads only regular files here"
    if issubclass(error, ConfigError):
        return error(text, file=str(path))
    return error(f"{path}: {text}")


def _size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n >> 20} MiB"
    return f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} bytes"


def open_regular(
    path: str | os.PathLike[str],
    *,
    error: type[ReasonixError] = ConfigError,
    follow: bool = True,
    writable: bool = False,
) -> BinaryIO:
    """Open ``path`` (binary, read or read-write) only if it is a regular file.

    ``follow=False`` also refuses a symlink (for state files only Reasonix
    writes). Raises ``error`` naming the file for a FIFO, device or socket
    (or a refused symlink); ``FileNotFoundError`` / ``IsADirectoryError`` /
    other ``OSError`` pass through as the OS reported them.
    """
    path = Path(path)
    flags = (os.O_RDWR if writable else os.O_RDONLY) | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ENXIO:  # a unix socket (or a FIFO opened for writing)
            raise _refuse(path, "is a socket or device", error) from None
        if err.errno == errno.ELOOP and not follow:
            raise _refuse(path, "is a symlink", error) from None
        if err.errno == errno.EISDIR:
            raise IsADirectoryError(err.errno, err.strerror, str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "is not a regular file")
            raise _refuse(path, kind, error)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file: ordinary reads from here on
        return os.fdopen(fd, "rb+" if writable else "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(
    path: str | os.PathLike[str],
    limit: int,
    *,
    error: type[ReasonixError] = ConfigError,
    follow: bool = True,
    truncate: bool = False,
) -> bytes:
    """The content of the regular file ``path``, at most ``limit`` bytes.

    A larger file is refused with ``error`` (checked before reading and again
    while reading, for a file that grows); with ``truncate`` its first
    ``limit + 1`` bytes are returned instead, so the caller can tell it was cut.
    """
    with open_regular(path, error=error, follow=follow) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit and not truncate:
            raise _too_large(Path(path), size, limit, error)
        data = fh.read(limit + 1)
    if len(data) > limit and not truncate:
        raise _too_large(Path(path), len(data), limit, error)
    return data


def _too_large(path: Path, size: int, limit: int, error: type[ReasonixError]) -> ReasonixError:
    detail = f"is too large ({size} bytes; the limit for this kind of file is {_size(limit)})"
    if issubclass(error, ConfigError):
        return error(detail, file=str(path))
    return error(f"{path}: {detail}")


def read_text(
    path: str | os.PathLike[str],
    limit: int,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
    error: type[ReasonixError] = ConfigError,
    follow: bool = True,
) -> str:
    """:func:`read_bytes` decoded; a decoding failure raises ``UnicodeDecodeError``."""
    return read_bytes(path, limit, error=error, follow=follow).decode(encoding, errors)
