"""SHA-1 and SHA-256 hex digests that load OpenSSL only where it pays.

``import hashlib`` imports ``_hashlib``, which initialises OpenSSL: about
3 ms on the development machine, spent before a run's first request because
a project's slug (``config.paths.project_slug``) hashes its path. The
interpreter's own implementations (``_sha1``; ``_sha256`` up to 3.11,
``_sha2`` from 3.12) give the same digests and load in a fraction of that;
they are about ten times slower per byte than OpenSSL, so data of
:data:`SMALL` bytes or more still goes to ``hashlib``. A build without the
built-in hashes (``--without-builtin-hashlib-hashes``) uses ``hashlib`` for
everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    _Maker = Callable[[bytes], Any]

__all__ = ["SMALL", "sha1_hex", "sha256_hex"]

SMALL = 64 * 1024  # bytes: from here on OpenSSL's speed outweighs its start-up

_makers: dict[str, _Maker] = {}


def _builtin(name: str) -> _Maker:
    maker = _makers.get(name)
    if maker is None:
        maker = _makers[name] = _find(name)
    return maker


def _find(name: str) -> _Maker:
    for module in ("_sha1",) if name == "sha1" else ("_sha2", "_sha256"):
        try:
            found: _Maker = getattr(__import__(module), name)
        except (ImportError, AttributeError):
            continue
        return found
    return _openssl(name)


def _openssl(name: str) -> _Maker:
    import hashlib

    made: Any = getattr(hashlib, name)
    # SHA-1 names git objects: not a security use, so a FIPS-mode OpenSSL allows it too
    return (lambda data: made(data, usedforsecurity=False)) if name == "sha1" else made


def sha1_hex(data: bytes) -> str:
    """The SHA-1 of ``data`` in hex (git's object names: not a security use)."""
    maker = _builtin("sha1") if len(data) < SMALL else _openssl("sha1")
    return str(maker(data).hexdigest())


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex."""
    maker = _builtin("sha256") if len(data) < SMALL else _openssl("sha256")
    return str(maker(data).hexdigest())
