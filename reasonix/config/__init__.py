"""Configuration: paths, loading and merging, .env, ${VAR}, presets and model resolution.

The public entry points are re-exported here and imported lazily, so
``import reasonix.config`` stays cheap for the CLI's fast paths.

Their signatures are in ``__init__.pyi``, which mypy and every caller read: this
package is imported on the chat's first-frame path (``config/home.py`` and
``config/trust_store.py`` are its modules), where neither ``typing`` nor the
config model is loaded, so the three delegations below name no type.
"""

__all__ = ["load", "require_api_key", "workspace_trust"]


def load(cwd, flags=None, *, migrate=True, check_mcp_vars=True, trust=None):
    """Load the effective configuration; see :func:`reasonix.config.loader.load`."""
    from reasonix.config.loader import load as _load

    return _load(cwd, flags, migrate=migrate, check_mcp_vars=check_mcp_vars, trust=trust)


def require_api_key(provider):
    """The provider's key or MissingAPIKey; see :func:`reasonix.config.loader.require_api_key`."""
    from reasonix.config.loader import require_api_key as _require

    return _require(provider)


def workspace_trust(cwd, trust=None):
    """Whether ``cwd`` is trusted and what its files declare that needs trust.

    Reads the configuration without changing any file (no migration) and without
    requiring the MCP servers' variables, so a broken declaration can still be listed.
    """
    return load(cwd, migrate=False, check_mcp_vars=False, trust=trust).trust
