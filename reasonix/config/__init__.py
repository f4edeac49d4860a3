"""Configuration: paths, loading and merging, .env, ${VAR}, presets and model resolution.

The public entry points are re-exported here and imported lazily, so
``import reasonix.config`` stays cheap for the CLI's fast paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from reasonix.config.model import Config, ProviderConfig
    from reasonix.config.trust import WorkspaceTrust

__all__ = ["load", "require_api_key", "workspace_trust"]


def load(
    cwd: Path,
    flags: dict[str, Any] | None = None,
    *,
    migrate: bool = True,
    check_mcp_vars: bool = True,
    trust: bool | None = None,
) -> Config:
    """Load the effective configuration; see :func:`reasonix.config.loader.load`."""
    from reasonix.config.loader import load as _load

    return _load(cwd, flags, migrate=migrate, check_mcp_vars=check_mcp_vars, trust=trust)


def require_api_key(provider: ProviderConfig) -> str:
    """The provider's key or MissingAPIKey; see :func:`reasonix.config.loader.require_api_key`."""
    from reasonix.config.loader import require_api_key as _require

    return _require(provider)


def workspace_trust(cwd: Path, trust: bool | None = None) -> WorkspaceTrust:
    """Whether ``cwd`` is trusted and what its files declare that needs trust.

    Reads the configuration without changing any file (no migration) and without
    requiring the MCP servers' variables, so a broken declaration can still be listed.
    """
    return load(cwd, migrate=False, check_mcp_vars=False, trust=trust).trust
