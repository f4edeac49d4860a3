"""The folders the user trusts: ``<home>/trusted-workspaces``, one real path per line.

The file lives in the user's home, never in a workspace, so a checkout cannot
trust itself; the bash/hook jail and the file tools treat it as a secret
(``config.paths.secret_paths``), so nothing a model runs reads or writes it.
Lines starting with ``#`` are comments. A store that cannot be read trusts
nothing (fail closed).

Only :mod:`os` is imported here: the chat asks "is this folder trusted?" before
its first frame, and that answer must not wait for pathlib or json.
"""

from __future__ import annotations

import os

from reasonix.config.home import home_str

__all__ = [
    "STORE_NAME",
    "TRUST_ENV",
    "env_trusts",
    "grant",
    "is_trusted",
    "revoke",
    "store_file",
    "trusted_workspaces",
]

STORE_NAME = "trusted-workspaces"
TRUST_ENV = "REASONIX_TRUST_WORKSPACE"
_YES = ("1", "true", "yes", "on")
_LIMIT = 4 * 1024 * 1024  # a store larger than this is not ours
_HEADER = (
    "# Reasonix: the folders you trust, one real path per line.\n"
    "# `reasonix trust` adds the current folder; `reasonix trust --revoke` removes it.\n"
)


def store_file() -> str:
    """The store's path: ``<home>/trusted-workspaces``."""
    return os.path.join(home_str(), STORE_NAME)


def env_trusts() -> bool:
    """True when ``REASONIX_TRUST_WORKSPACE`` says yes for this process."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in _YES


def trusted_workspaces() -> list[str]:
    """The trusted folders' real paths, in the order they were trusted."""
    try:
        with open(store_file(), "rb") as fh:
            raw = fh.read(_LIMIT + 1)
    except OSError:
        return []
    if len(raw) > _LIMIT:
        return []
    text = raw.decode("utf-8", "surrogateescape")
    return [line for line in text.split("\n") if line and not line.startswith("#")]


def is_trusted(workspace: str | os.PathLike[str]) -> bool:
    """True when the store lists ``workspace``'s real path."""
    return os.path.realpath(workspace) in trusted_workspaces()


def _write(folders: list[str]) -> None:
    from pathlib import Path

    from reasonix.config.atomic import write_atomic

    write_atomic(Path(store_file()), _HEADER + "".join(f"{f}\n" for f in folders), mode=0o600)


def grant(workspace: str | os.PathLike[str]) -> str:
    """Record that the user trusts ``workspace``; returns the real path recorded."""
    real = os.path.realpath(workspace)
    if "\n" in real or "\r" in real:
        from reasonix.errors import ConfigError

        raise ConfigError(
            f"{real!r} cannot be recorded as trusted (a line break in its name); "
            f"use {TRUST_ENV}=1 or run --trust instead"
        )
    folders = trusted_workspaces()
    if real not in folders:
        _write([*folders, real])
    return real


def revoke(workspace: str | os.PathLike[str]) -> bool:
    """Forget the trust in ``workspace``; False when it was not trusted."""
    real = os.path.realpath(workspace)
    folders = trusted_workspaces()
    if real not in folders:
        return False
    _write([f for f in folders if f != real])
    return True
