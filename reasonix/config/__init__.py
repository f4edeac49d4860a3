"""Configuration: paths, loading and merging, .env, ${VAR}, presets and model resolution.

The public entry points are re-exported here and imported lazily, so
``import reasonix.config`` stays cheap for the CLI's fast paths.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from reasonix.config.model import Config, ProviderConfig

__all__ = ["load", "require_api_key"]


def load(
    cwd: Path,
    flags: dict[str, Any] | None = None,
    *,
    migrate: bool = True,
    check_mcp_vars: bool = True,
) -> Config:
    """Load the effective configuration; see :func:`reasonix.config.loader.load`."""
    from reasonix.config.loader import load as _load

    return _load(cwd, flags, migrate=migrate, check_mcp_vars=check_mcp_vars)


def require_api_key(provider: ProviderConfig) -> str:
    """The provider's key or MissingAPIKey; see :func:`reasonix.config.loader.require_api_key`."""
    from reasonix.config.loader import require_api_key as _require

    return _require(provider)
