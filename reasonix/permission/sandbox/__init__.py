"""OS sandbox for the bash tool (bubblewrap on Linux, Seatbelt on macOS) — CFG-12.

The bash tool depends only on :class:`SandboxSettings` and :func:`wrap_command`:

* ``mode="off"``: argv and env unchanged.
* ``mode="auto"``: jailed when a working backend exists, else unchanged (the
  permission policy still applies; ``backend_status()`` says why, for a warning).
* ``mode="enforce"``: jailed, or :class:`SandboxUnavailable` — never silently
  unsandboxed.

Inside the jail writes are limited to the workspace, ``write_roots``, the
command cache roots and a private TMPDIR; ``forbid_read`` paths are hidden;
credential variables (:mod:`.env`) are removed from the environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from reasonix.errors import ConfigError, SandboxUnavailable
from reasonix.lazy import dataclass, field
from reasonix.permission.sandbox.env import is_credential_var, scrub_env

__all__ = [
    "SANDBOX_MODES",
    "SandboxSettings",
    "backend_status",
    "default_cache_roots",
    "is_credential_var",
    "scrub_env",
    "tools_under_tmp",
    "wrap_command",
]

SANDBOX_MODES = ("enforce", "auto", "off")


@dataclass
class SandboxSettings:
    """What the sandbox may touch. ``mode`` is "enforce" | "auto" | "off".

    ``cache_roots``: extra writable command caches; ``None`` means
    :func:`default_cache_roots` (``~/.cache``, ``~/.npm``, Go/Cargo caches that exist).
    ``tmp_dir``: the macOS per-run TMPDIR (created when ``None``); Linux uses a tmpfs.
    ``read_only``: paths kept read-only even inside a writable root (pass the Reasonix
    state directories here, so a granted ``$HOME`` still cannot touch sessions/config).
    """

    mode: str = "auto"
    workspace: Path = field(default_factory=Path.cwd)
    write_roots: list[Path] = field(default_factory=list)
    forbid_read: list[Path] = field(default_factory=list)
    network: bool = True
    cache_roots: list[Path] | None = None
    tmp_dir: Path | None = None
    read_only: list[Path] = field(default_factory=list)
    # False: the workspace stays read-only and only write_roots are writable (SUB-14)
    bind_workspace: bool = True
    # where a working backend is remembered between runs (bwrap.probe); None: probe each run
    remember: Path | None = None


def tools_under_tmp(env: dict[str, str]) -> list[Path]:
    """Interpreter and PATH directories that live under ``/tmp``.

    The sandbox hides the host's ``/tmp`` behind a private tmpfs (so agent and
    multiplexer sockets there stay out of reach), which would also hide a
    virtual environment or toolchain unpacked under ``/tmp`` — this one
    included. Those are re-bound read-only; a venv is bound whole (its
    ``pyvenv.cfg`` and ``lib/``), not just its ``bin/``.
    """
    found: list[Path] = []
    candidates = [sys.prefix, os.path.dirname(sys.executable)]
    candidates += [p for p in env.get("PATH", "").split(os.pathsep) if p]
    for raw in candidates:
        real = os.path.realpath(raw)
        if not real.startswith("/tmp/") or not os.path.isdir(real):
            continue
        parent = os.path.dirname(real)
        if os.path.basename(real) == "bin" and os.path.isfile(os.path.join(parent, "pyvenv.cfg")):
            real = parent
        path = Path(real)
        if path not in found:
            found.append(path)
    return found


def default_cache_roots(env: dict[str, str]) -> list[Path]:
    """Per-user build/package caches that exist; tools expect to write them."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    xdg = env.get("XDG_CACHE_HOME")
    candidates = [
        Path(xdg) if xdg else home / ".cache",
        home / ".npm",
        home / ".cargo" / "registry",
        home / "go" / "pkg" / "mod",
        home / "Library" / "Caches",
    ]
    return [p for p in candidates if p.is_dir()]


def _which(name: str, env: dict[str, str]) -> str | None:
    from reasonix.which import which

    return which(name, path=env.get("PATH", os.environ.get("PATH", os.defpath)))


def backend_status(settings: SandboxSettings, env: dict[str, str]) -> tuple[str, str]:
    """``(backend, problem)``: backend is "bwrap" | "seatbelt" | ""; problem says why not."""
    if sys.platform.startswith("linux"):
        from reasonix.permission.sandbox.bwrap import probe  # the backends load when used

        bwrap = _which("bwrap", env)
        if bwrap is None:
            return "", "bubblewrap (bwrap) is not installed or not on PATH"
        problem = probe(bwrap, settings.network, settings.remember)
        if problem:
            return "", f"bubblewrap cannot create a sandbox here: {problem}"
        return "bwrap", ""
    if sys.platform == "darwin":
        from reasonix.permission.sandbox.seatbelt import SANDBOX_EXEC

        if os.path.exists(SANDBOX_EXEC):
            return "seatbelt", ""
        return "", f"{SANDBOX_EXEC} is missing"
    return "", f"no OS sandbox for bash on {sys.platform}"


def wrap_command(
    argv: list[str], settings: SandboxSettings, env: dict[str, str]
) -> tuple[list[str], dict[str, str]]:
    """Return the argv and environment to execute ``argv`` inside the sandbox.

    "off", or "auto" without a backend: unchanged. "enforce" without a backend
    raises :class:`SandboxUnavailable` — never silently unsandboxed.
    """
    if settings.mode not in SANDBOX_MODES:
        raise ConfigError(
            f"unknown sandbox mode {settings.mode!r}; expected enforce, auto or off",
            key="sandbox.bash",
        )
    if settings.mode == "off":
        return argv, env
    backend, problem = backend_status(settings, env)
    if not backend:
        if settings.mode == "enforce":
            raise SandboxUnavailable(
                f"sandbox enforcement is on but unavailable: {problem}; bash refuses to run "
                'unsandboxed (install bubblewrap, or set [sandbox] bash = "auto" or "off")'
            )
        return argv, env
    roots = list(settings.write_roots)
    roots += default_cache_roots(env) if settings.cache_roots is None else settings.cache_roots
    clean = scrub_env(env)
    if backend == "bwrap":
        from reasonix.permission.sandbox.bwrap import bwrap_argv

        wrapped = bwrap_argv(
            _which("bwrap", env) or "bwrap",
            argv,
            workspace=settings.workspace,
            write_roots=roots,
            forbid_read=settings.forbid_read,
            network=settings.network,
            read_only=[*settings.read_only, *tools_under_tmp(env)],
            bind_workspace=settings.bind_workspace,
        )
        clean["TMPDIR"] = "/tmp"
        return wrapped, clean
    import tempfile  # here only: it imports shutil and random

    from reasonix.permission.sandbox.seatbelt import seatbelt_argv, seatbelt_profile

    tmp = settings.tmp_dir or Path(tempfile.mkdtemp(prefix="reasonix-sbx-"))
    profile = seatbelt_profile(
        workspace=settings.workspace,
        write_roots=roots,
        forbid_read=settings.forbid_read,
        network=settings.network,
        tmp_dir=tmp,
        read_only=settings.read_only,
        bind_workspace=settings.bind_workspace,
    )
    clean["TMPDIR"] = str(tmp)
    return seatbelt_argv(argv, profile), clean
