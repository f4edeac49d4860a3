"""Reasonix: a terminal coding agent driving LLMs through tools.

Importing this package does nothing (``__version__`` is read on first use); every
capability is imported lazily by the CLI so that ``--version`` stays fast.
"""

from __future__ import annotations

__all__ = ["ARCHIVE", "__version__"]

# The .pyz this process started from (set by reasonix._pyzboot), also when the modules
# come from its unpacked copy: what Remote-SSH installs on a host. None from a checkout.
ARCHIVE: str | None = None


def _read_version() -> str:
    # build_zipapp.py writes reasonix/_version.py into the archive; a source
    # checkout has none.
    try:
        from reasonix._version import VERSION  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return "0+unknown"
    return str(VERSION)


__version__: str  # read on first use (module __getattr__): a chat's first frame needs none


def __getattr__(name: str) -> str:
    if name == "__version__":
        version = globals()["__version__"] = _read_version()
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
