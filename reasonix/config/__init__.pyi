# The types of reasonix/config/__init__.py's lazy entry points. That module is on the chat's
# first-frame path (trust_store and home are its submodules), so it names no type at run
# time and imports no typing; its three functions only delegate to config/loader.py.
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
) -> Config: ...
def require_api_key(provider: ProviderConfig) -> str: ...
def workspace_trust(cwd: Path, trust: bool | None = None) -> WorkspaceTrust: ...
