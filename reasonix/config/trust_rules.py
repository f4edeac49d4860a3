"""What in a workspace's own files needs trust, item by item (DESIGN §5.1).

Inert declarations (instructions, commands, skills, agents, model choices among
the user's providers, narrowing rules) always load. These need trust, because
they run code or widen reach:

* hooks (``.claude/settings*.json``, ``[hooks]`` in ``./reasonix.toml``);
* MCP servers (``.mcp.json``, ``[[mcp.servers]]`` / ``[[plugins]]``), stdio ones run
  a command and remote ones receive the session's data; an entry that only
  switches a server off is inert;
* providers that would send the conversation to a host no built-in or user-level
  provider names, or a user's key to a host its owner's definition does not
  name, or that set HTTP headers;
* ``permissions.allow`` rules, ``allow_dynamic_bash``, and a ``mode`` wider than
  asking (auto, acceptEdits, bypassPermissions);
* sandbox changes that widen it: a weaker ``bash`` setting, ``network`` back on,
  ``allow_write`` roots, a moved ``workspace_root``;
* ``[serve]`` host, auth mode and proxy trust (who may reach the browser UI).

Each rule returns the text of a :class:`reasonix.config.trust.TrustItem`, or
None when the declaration is inert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from typing import Any

    from reasonix.config.model import McpServerConfig, ProviderConfig

__all__ = [
    "URL_FIELDS",
    "KeyOwners",
    "mcp_item",
    "origin",
    "provider_item",
    "scalar_item",
]

URL_FIELDS = ("base_url", "request_url", "chat_url")
_WIDE_MODES = {"auto", "acceptEdits", "bypassPermissions"}
_BASH_STRICTNESS = {"off": 0, "auto": 1, "enforce": 2}
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, lower-cased with the default port filled in."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip().lower()
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = port or (443 if scheme == "https" else 80)
    return f"{scheme}://{host}:{port}"


def _origins(urls: Any) -> set[str]:
    return {origin(u) for u in urls if u}


class KeyOwners:
    """Where the user (or a built-in preset) sends each provider key, and every known host.

    Taken from the providers as they stand before the workspace's file is applied.
    """

    def __init__(self, providers: list[ProviderConfig]) -> None:
        self.known: set[str] = set()
        self.by_key: dict[str, set[str]] = {}
        for p in providers:
            hosts = _origins(getattr(p, f) for f in URL_FIELDS)
            self.known |= hosts
            if p.api_key_env:
                self.by_key.setdefault(p.api_key_env, set()).update(hosts)

    def hosts_for(self, key_env: str) -> set[str]:
        """The origins the key in ``key_env`` is meant for (empty: none configured)."""
        return self.by_key.get(key_env, set())


def provider_item(
    name: str, current: ProviderConfig | None, values: dict[str, Any], owners: KeyOwners
) -> str | None:
    """Why a workspace's ``[[providers]]`` entry needs trust, or None when it is inert."""

    def now(key: str, default: Any = "") -> Any:
        if key in values:
            return values[key]
        return getattr(current, key, default) if current is not None else default

    hosts = sorted(_origins(now(f) for f in URL_FIELDS))
    key_env = str(now("api_key_env"))
    stranger = [h for h in hosts if h not in owners.known]
    if key_env:
        stranger += [h for h in hosts if h not in owners.hosts_for(key_env) and h not in stranger]
    if stranger:
        where = ", ".join(_host_text(h) for h in stranger)
        key = f" with the key in {key_env}" if key_env else ""
        return f"provider {name!r} sends requests{key} to {where}"
    if values.get("headers") and values["headers"] != getattr(current, "headers", None):
        return f"provider {name!r} sets HTTP headers {', '.join(sorted(values['headers']))}"
    return None


def _host_text(host: str) -> str:
    """``https://api.example.com`` for the default port, the full origin otherwise."""
    for scheme, port in (("https", ":443"), ("http", ":80")):
        if host.startswith(f"{scheme}://") and host.endswith(port):
            return host[: -len(port)]
    return host


def mcp_item(server: McpServerConfig) -> str | None:
    """Why a workspace's MCP server needs trust (every enabled one does)."""
    if not server.enabled:
        return None
    if server.type == "stdio":
        command = " ".join([server.command, *server.args]).strip()
        return f"MCP server {server.name!r} runs `{command}`"
    return f"MCP server {server.name!r} connects to {server.url}"


def scalar_item(dotted: str, value: Any, current: Any) -> str | None:
    """Why setting ``dotted = value`` (over ``current``) from a workspace needs trust."""
    if dotted == "permissions.allow" and value:
        return f"permissions.allow = {value!r} (runs these without asking)"
    if dotted == "permissions.allow_dynamic_bash" and value and not current:
        return "permissions.allow_dynamic_bash = true"
    if dotted == "permissions.mode" and value in _WIDE_MODES and value != current:
        return f"permissions.mode = {value!r}"
    if dotted == "sandbox.bash" and _BASH_STRICTNESS.get(value, 0) < _BASH_STRICTNESS.get(
        current, 0
    ):
        return f"sandbox.bash = {value!r} (weaker than {current!r})"
    if dotted == "sandbox.network" and value and not current:
        return "sandbox.network = true"
    if dotted == "sandbox.allow_write" and value:
        return f"sandbox.allow_write = {value!r} (writable outside the workspace)"
    if dotted == "sandbox.workspace_root" and value and value != current:
        return f"sandbox.workspace_root = {value!r}"
    if dotted == "serve.host" and value != current and value not in _LOOPBACK:
        return f"serve.host = {value!r} (the browser UI reachable from other machines)"
    if dotted == "serve.auth_mode" and value == "none" and current != "none":
        return "serve.auth_mode = 'none'"
    if dotted == "ui.status_command" and value and value != current:
        return f"ui.status_command = {value!r} (runs this command for the status line)"
    if dotted == "serve.behind_proxy" and value and not current:
        return "serve.behind_proxy = true"
    return None
