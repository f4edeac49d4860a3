"""Linux backend: bubblewrap (``bwrap``).

The jail: the whole file system read-only, a fresh ``/dev`` and ``/proc``, a
private tmpfs on ``/tmp`` (exported as TMPDIR), the workspace and write roots
bound writable, the files that decide what runs later (``.git/hooks``,
``.git/config``, ``reasonix.toml``, ``.mcp.json``; a worktree's ``.git`` file)
re-bound read-only, ``.git`` pinned so it cannot be swapped for a copy, and
``forbid_read`` paths masked. ``--unshare-net`` when the network is off.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PROTECTED_NAMES", "bwrap_argv", "probe"]

# Relative to the workspace: re-bound read-only because they steer later executions
# (git hooks/config) or the permission policy itself (project config, MCP servers).
PROTECTED_NAMES: tuple[str, ...] = (".git/hooks", ".git/config", "reasonix.toml", ".mcp.json")

_probe_lock = threading.Lock()
_probe_cache: dict[tuple[str, bool], str] = {}


def probe(bwrap: str, network: bool, remember: Path | None = None) -> str:
    """Run ``bwrap --ro-bind / / true`` once per (binary, network) and cache the answer.

    Returns "" when bubblewrap works, else the reason (user namespaces disabled …).
    With ``remember`` (a directory), a working bubblewrap is also remembered
    there until the machine reboots or the binary changes, so later runs skip
    the probe. Only success is remembered: should the jail fail after all,
    every sandboxed command fails with bubblewrap's own error (closed, never
    unsandboxed) and a failure is probed afresh by the next run.
    """
    key = (bwrap, network)
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
        stamp = _stamp(bwrap, network) if remember is not None else ""
        note = (
            remember / ("bwrap-works" if network else "bwrap-works-offline") if remember else None
        )
        if note is not None and stamp and _read(note) == stamp:
            _probe_cache[key] = ""
            return ""
        cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if not network:
            cmd.append("--unshare-net")
        cmd += ["--", "true"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=15, check=False)
            reason = (
                "" if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")
            )
        except (OSError, subprocess.SubprocessError) as exc:
            reason = str(exc)
        _probe_cache[key] = reason
        if note is not None and stamp and not reason:
            _write(note, stamp)
        return reason


def _stamp(bwrap: str, network: bool) -> str:
    """What a remembered answer holds for: this boot, this binary, this user; "" if unknown."""
    try:
        # ASCII text; read as UTF-8, whose codec is loaded already (the ascii one is not)
        with open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as fh:
            boot = fh.read().strip()
        st = os.stat(bwrap)
    except OSError:
        return ""
    return f"{boot} {os.getuid()} {network} {st.st_ino} {st.st_size} {st.st_mtime_ns} {bwrap}\n"


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(4096)
    except (OSError, ValueError):
        return ""


def _write(path: Path, text: str) -> None:
    """Best effort: a cache that cannot be written only costs the next run a probe."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        pass


def _real(path: Path | str) -> str:
    return os.path.realpath(os.fspath(path))


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    workspace: Path,
    write_roots: Sequence[Path],
    forbid_read: Sequence[Path],
    network: bool,
    read_only: Sequence[Path] = (),
    bind_workspace: bool = True,
) -> list[str]:
    """The full bwrap command line for ``argv`` (pure apart from ``exists`` checks).

    ``bind_workspace`` False leaves the workspace read-only: only ``write_roots``
    are writable (a sub-agent's bash rebound to its write claim, SUB-14).
    """
    # --unshare-pid: when the command exits, everything it left running dies with
    # the namespace instead of holding the output pipe open.
    cmd = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid"]
    cmd += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    cmd += ["--tmpfs", "/tmp"]
    if not network:
        cmd.append("--unshare-net")
    # Binds are applied in order; later ones sit on top of earlier ones, so writable
    # roots come after the private /tmp and the read-only re-binds come after them.
    ws = _real(workspace)
    seen: set[str] = set()
    roots = [ws, *(_real(r) for r in write_roots)] if bind_workspace else []
    for root in roots:
        if root not in seen and root != "/" and os.path.isdir(root):
            seen.add(root)
            cmd += ["--bind", root, root]
    if not bind_workspace and ws != "/" and os.path.isdir(ws):
        cmd += ["--ro-bind", ws, ws]  # visible as it is (also under the private /tmp)
    for root in [] if bind_workspace else [_real(r) for r in write_roots]:
        # a claimed file is bound on its own; a missing path cannot be bound at all
        if root not in seen and root != "/" and os.path.exists(root):
            seen.add(root)
            cmd += ["--bind", root, root]
    git = os.path.join(ws, ".git")
    if bind_workspace and os.path.isdir(git) and not os.path.islink(git):
        # A mount point cannot be renamed or removed: without this self-bind a command
        # could `mv .git .old && cp -a .old .git` and plant hooks in the fresh copy.
        cmd += ["--bind", git, git]
        hooks = os.path.join(git, "hooks")
        if not os.path.lexists(hooks):
            cmd += ["--tmpfs", hooks, "--remount-ro", hooks]  # nor create a missing one
    protected = [os.path.join(ws, name) for name in PROTECTED_NAMES]
    if os.path.isfile(git) and not os.path.islink(git):
        protected.append(git)  # a worktree's `gitdir:` pointer decides where hooks come from
    bound: set[str] = set()  # the Reasonix home is often the config and the state home
    for target in [*protected, *(os.fspath(p) for p in read_only)]:
        real = _real(target)
        if real not in bound and os.path.exists(real):
            bound.add(real)
            cmd += ["--ro-bind", real, real]
    for path in forbid_read:
        target = _real(path)  # mask the real location: every symlinked route leads there
        if os.path.isdir(target):
            cmd += ["--tmpfs", target, "--remount-ro", target]
        elif os.path.exists(target):
            cmd += ["--ro-bind", "/dev/null", target]
    cmd += ["--setenv", "TMPDIR", "/tmp", "--"]
    cmd += list(argv)
    return cmd
