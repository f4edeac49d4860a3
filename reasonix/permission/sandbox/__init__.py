"""OS sandbox for the bash tool (bubblewrap on Linux, Seatbelt on macOS).

INTERFACE ONLY for now: the permissions issue (#5) implements the backends.
The bash tool depends only on :class:`SandboxSettings` and :func:`wrap_command`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reasonix.errors import SandboxUnavailable

__all__ = ["SandboxSettings", "wrap_command"]


@dataclass
class SandboxSettings:
    """What the sandbox may touch. ``mode`` is "enforce" | "auto" | "off"."""

    mode: str = "auto"
    workspace: Path = field(default_factory=Path.cwd)
    write_roots: list[Path] = field(default_factory=list)
    forbid_read: list[Path] = field(default_factory=list)
    network: bool = True


def wrap_command(
    argv: list[str], settings: SandboxSettings, env: dict[str, str]
) -> tuple[list[str], dict[str, str]]:
    """Return the argv and environment to execute ``argv`` inside the sandbox.

    "off", or "auto" without a backend: unchanged. "enforce" without a backend
    raises :class:`SandboxUnavailable` — never silently unsandboxed.
    """
    if settings.mode == "enforce":
        raise SandboxUnavailable("sandbox backend not implemented yet (issue #5)")
    return argv, env
