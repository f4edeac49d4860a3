"""Which session a runtime starts with: new, the latest, a resumed one, or a copy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.session import (
    Session,
    copy_session,
    find_session,
    latest_session,
    read_records,
)
from reasonix.errors import SessionError, UsageError

from .options import RuntimeOptions

if TYPE_CHECKING:
    from typing import Any

__all__ = ["open_session"]


def open_session(
    opts: RuntimeOptions, workspace: Path, meta: dict[str, Any]
) -> tuple[Session, bool]:
    """The session to run in and whether it was resumed (``-c``, ``-r``, ``--copy``)."""
    path: Path | None = None
    if opts.resume is not None:
        if not opts.resume:
            info = latest_session(workspace)
            if info is None:
                raise UsageError("--resume: this project has no sessions yet")
            path = info.path
        else:
            try:
                path = find_session(workspace, opts.resume)
            except SessionError as err:  # no match or several: the flag's value is wrong
                raise UsageError(f"--resume: {err}") from err
    elif opts.continue_latest:
        info = latest_session(workspace)
        if info is None:
            raise UsageError("--continue: this project has no sessions yet")
        path = info.path
    if path is None:
        if opts.copy:
            raise UsageError("--copy needs -c/--continue or -r/--resume")
        return Session.create(workspace, meta), False
    if opts.copy:
        return copy_session(read_records(path), workspace, meta), True
    return Session.open(path), True
