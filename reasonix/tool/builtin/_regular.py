"""Open a workspace file only if it is a regular file (the tool layer's twin of
``config/safe_read.py``, which this layer may not import).

A FIFO would block ``open`` forever, a device such as ``/dev/zero`` never
ends, a socket cannot be read; a hostile repository can plant any of them
under a name a tool reads (``.gitignore``, a source file, the file the model
asked for). The file is opened non-blocking and its type checked on the
descriptor, so there is no window between a check and the open.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["NotRegularFile", "open_regular"]


class NotRegularFile(OSError):
    """``path`` is a FIFO, device or socket (an OSError, so "unreadable" handling covers it)."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for binary reading; :class:`NotRegularFile` unless it is a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ENXIO:  # a unix socket
            raise NotRegularFile(errno.ENXIO, "not a regular file", os.fspath(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
