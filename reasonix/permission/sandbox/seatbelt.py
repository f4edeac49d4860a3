"""macOS backend: Seatbelt (``sandbox-exec -p PROFILE``).

Same jail as bubblewrap, written as an SBPL profile: deny by default, read
everything except ``forbid_read``, write only the workspace, the write roots and
a per-run TMPDIR, never the protected files, and no network when it is off.
In SBPL a later rule overrides an earlier one, so the denies come last.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from reasonix.permission.sandbox.bwrap import PROTECTED_NAMES

__all__ = ["SANDBOX_EXEC", "seatbelt_argv", "seatbelt_profile"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def _q(path: str) -> str:
    """An SBPL string literal."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _real(path: Path | str) -> str:
    return os.path.realpath(os.fspath(path))


def seatbelt_profile(
    *,
    workspace: Path,
    write_roots: Sequence[Path],
    forbid_read: Sequence[Path],
    network: bool,
    tmp_dir: Path,
    read_only: Sequence[Path] = (),
    bind_workspace: bool = True,
) -> str:
    """The SBPL profile text (pure except for resolving symlinks in the paths).

    ``bind_workspace`` False writes only ``write_roots`` (and the TMPDIR).
    """
    ws = _real(workspace)
    own = [ws] if bind_workspace else []
    writable = list(dict.fromkeys([*own, *(_real(r) for r in write_roots), _real(tmp_dir)]))
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec)",
        "(allow process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow ipc-posix-shm)",
        "(allow file-ioctl)",
        "(allow file-read*)",
        '(allow file-write-data (literal "/dev/null") (literal "/dev/zero")'
        ' (literal "/dev/tty") (regex #"^/dev/fd/"))',
        "(allow file-write* " + " ".join(f"(subpath {_q(p)})" for p in writable if p != "/") + ")",
    ]
    protected = [os.path.join(ws, name) for name in PROTECTED_NAMES]
    git = os.path.join(ws, ".git")
    lines.append(
        "(deny file-write* "
        + " ".join(
            f"(subpath {_q(p)})" if name.endswith("hooks") else f"(literal {_q(p)})"
            for name, p in zip(PROTECTED_NAMES, protected, strict=True)
        )
        # An existing `.git` itself: renaming it (and planting hooks in a copy) or, for a
        # worktree, rewriting its `gitdir:` file. (`git init` in a fresh dir still works.)
        + (f" (literal {_q(git)})" if os.path.lexists(git) else "")
        + "".join(f" (subpath {_q(_real(p))})" for p in read_only)
        + ")"
    )
    if forbid_read:
        masked = " ".join(f"(subpath {_q(_real(p))})" for p in forbid_read)
        lines.append(f"(deny file-read* {masked})")
        lines.append(f"(deny file-write* {masked})")
    if network:
        lines.append("(allow network*)")
    return "\n".join(lines) + "\n"


def seatbelt_argv(argv: Sequence[str], profile: str) -> list[str]:
    """``sandbox-exec -p PROFILE -- argv``."""
    return [SANDBOX_EXEC, "-p", profile, "--", *argv]
