"""MCP server declarations: TOML ``[[mcp.servers]]`` / ``[[plugins]]`` and ``.mcp.json``.

Precedence for one name (D16, MCP-22): the project beats the user-global
config, and inside a project ``reasonix.toml`` beats ``.mcp.json``.
``${VAR}`` references are kept verbatim at load; :func:`expand_server`
expands them when the server is started, so an unset variable only fails the
server that needs it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.expand import Lookup, expand_vars
from reasonix.config.layers import Layer, check_fields, check_type, header_problem
from reasonix.config.model import McpConfig, McpServerConfig
from reasonix.config.safe_read import CONFIG_LIMIT, read_text
from reasonix.config.schema import MCP_CONCURRENCY, MCP_DEFER_MODES, MCP_TYPES
from reasonix.errors import ConfigError
from reasonix.lazy import replace

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "expand_server",
    "merge_servers",
    "read_mcp_json",
    "servers_from_toml",
    "settings_from_toml",
]

_FIELDS = {
    "name": "str",
    "type": "str",
    "transport": "str",
    "command": "str",
    "args": "list[str]",
    "env": "dict[str]",
    "url": "str",
    "headers": "dict[str]",
    "concurrency": "str",
    "startup_timeout_seconds": "float",
    "call_timeout_seconds": "float",
    "tool_timeout_seconds": "dict[float]",
    "enabled": "bool",
    "always_load": "bool",
}


def _build(values: dict[str, Any], source: str, fail: Any) -> McpServerConfig:
    """Turn checked field values into a server; ``fail(message, key)`` makes the error."""
    if "transport" in values:
        if "type" in values and values["type"] != values["transport"]:
            raise fail("type and transport disagree; set only one", "transport")
        values["type"] = values.pop("transport")
    if "type" not in values:
        # Claude Code's rule: a command means stdio, a bare url means HTTP.
        if values.get("command"):
            values["type"] = "stdio"
        elif values.get("url"):
            values["type"] = "http"
        else:
            raise fail("needs either command (stdio) or url (http/sse)", "command")
    if values["type"] not in MCP_TYPES:
        raise fail(
            f"unknown MCP transport {values['type']!r}: expected one of {', '.join(MCP_TYPES)}",
            "type",
        )
    if values["type"] == "stdio" and not values.get("command"):
        raise fail("a stdio server needs a command", "command")
    if values["type"] != "stdio" and not values.get("url"):
        raise fail(f"a {values['type']} server needs a url", "url")
    if values.get("concurrency", "") not in MCP_CONCURRENCY:
        raise fail("concurrency must be serial or parallel", "concurrency")
    timeout = values.get("startup_timeout_seconds")
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise fail(f"startup_timeout_seconds must be > 0, got {timeout}", "startup_timeout_seconds")
    call = values.get("call_timeout_seconds")
    if call is not None and call < 0:
        raise fail(f"call_timeout_seconds must be >= 0 (0 = the default), got {call}",
                   "call_timeout_seconds")  # fmt: skip
    caps = values.get("tool_timeout_seconds") or {}
    bad = [k for k, v in caps.items() if v < 0]
    if bad:
        raise fail(
            f"tool_timeout_seconds must be >= 0 for {', '.join(bad)}", "tool_timeout_seconds"
        )
    if caps:
        values["tool_timeout_seconds"] = {k: float(v) for k, v in caps.items()}
    for key, value in (values.get("headers") or {}).items():
        problem = header_problem(key, value)
        if problem:
            raise fail(problem, f"headers.{key}")
    return McpServerConfig(**values, source=source)


def servers_from_toml(layer: Layer, warnings: list[str]) -> list[McpServerConfig]:
    """Servers declared in one TOML file (``[[mcp.servers]]`` then ``[[plugins]]``)."""
    out: list[McpServerConfig] = []
    mcp = layer.data.get("mcp")
    if mcp is not None and not isinstance(mcp, dict):
        raise layer.error("expected a table [mcp]", "", "mcp")
    sections = [("mcp.servers", (mcp or {}).get("servers")), ("plugins", layer.data.get("plugins"))]
    for table, entries in sections:
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise layer.error(f"expected an array of tables [[{table}]]", "", table)
        for index, entry in enumerate(entries):

            def fail(
                message: str,
                key: str,
                index: int = index,
                table: str = table,
                entry: dict[str, Any] = entry,
            ) -> ConfigError:
                name = entry.get("name")
                prefix = f"MCP server {name!r}: " if isinstance(name, str) else ""
                return layer.error(prefix + message, table, key, index)

            values = check_fields(layer, table, index, entry, _FIELDS, warnings)
            if not values.get("name"):
                raise fail("every MCP server needs a name", "name")
            out.append(_build(values, layer.name, fail))
    return out


def settings_from_toml(layer: Layer, cfg: McpConfig, warnings: list[str]) -> None:
    """Apply the ``[mcp]`` keys other than ``servers`` (``defer_tools``) from one file.

    Choosing how tool schemas are offered runs no code and widens no reach, so a
    workspace file may set it like any inert key (DESIGN 5.1).
    """
    mcp = layer.data.get("mcp")
    if not isinstance(mcp, dict):
        return  # absent; a non-table [mcp] is reported by servers_from_toml
    for key, value in mcp.items():
        if key == "servers":
            continue
        if key != "defer_tools":
            warnings.append(f"{layer.name}: unknown key mcp.{key} (ignored)")
            continue
        mode = check_type(layer, "mcp", key, value, "str")
        if mode not in MCP_DEFER_MODES:
            raise layer.error(
                f"expected one of {', '.join(MCP_DEFER_MODES)}, got {mode!r}", "mcp", key
            )
        cfg.defer_tools = mode


def read_mcp_json(path: Path, warnings: list[str]) -> list[McpServerConfig]:
    """Servers from a Claude Code style ``.mcp.json``; a missing file gives none.

    A file that is not JSON, or has no ``mcpServers`` object, is a ConfigError;
    one malformed entry is skipped with a warning naming it and the file, and an
    entry with ``"disabled": true`` is skipped quietly.
    """
    try:
        text = read_text(path, CONFIG_LIMIT, encoding="utf-8-sig")  # a BOM from Windows is fine
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    except RecursionError:
        raise ConfigError("invalid JSON: nested too deeply", file=str(path)) from None
    if isinstance(data, dict) and "mcpServers" not in data:
        # "{}" declares no servers; other keys (VS Code's "servers") are not our schema.
        if data:
            warnings.append(f'{path}: no "mcpServers" object; no servers read from it')
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(
            'expected an object {"mcpServers": {...}}', file=str(path), key="mcpServers"
        )
    out: list[McpServerConfig] = []
    for name, entry in servers.items():
        # As in Claude Code, one bad entry is skipped with a warning; the others load.
        try:
            server = _json_server(path, name, entry, warnings)
        except ConfigError as exc:
            key = f" ({exc.key})" if exc.key and exc.key != f"mcpServers.{name}" else ""
            detail = exc.detail.removeprefix(f"MCP server {name!r}: ")
            warnings.append(f"{path}: MCP server {name!r} skipped{key}: {detail}")
            continue
        if server is not None:
            out.append(server)
    return out


def _json_server(path: Path, name: str, entry: Any, warnings: list[str]) -> McpServerConfig | None:
    """One ``mcpServers`` entry; None for ``"disabled": true``; ConfigError when malformed."""

    def fail(message: str, key: str) -> ConfigError:
        dotted = f"mcpServers.{name}.{key}" if key else f"mcpServers.{name}"
        return ConfigError(f"MCP server {name!r}: {message}", file=str(path), key=dotted)

    if not name.strip():
        raise fail("a server name must not be empty", "")
    if not isinstance(entry, dict):
        raise fail("expected an object", "")
    if entry.get("disabled") is True:
        return None  # switched off in the file: quietly not there (the entry may be partial)
    values: dict[str, Any] = {"name": name}
    for key, value in entry.items():
        kind = _FIELDS.get(key)
        if key == "disabled" and value is False:
            continue
        if kind is None or key == "name":
            warnings.append(f"{path}: unknown key mcpServers.{name}.{key} (ignored)")
            continue
        layer = Layer(str(path), {}, "", path)
        try:
            values[key] = check_type(layer, "", key, value, kind)
        except ConfigError as exc:
            raise fail(exc.detail, key) from None
    return _build(values, str(path), fail)


def merge_servers(*groups: list[McpServerConfig]) -> list[McpServerConfig]:
    """Merge groups given lowest precedence first; a later same-name entry replaces."""
    merged: dict[str, McpServerConfig] = {}
    for group in groups:
        for server in group:
            merged.pop(server.name, None)  # the winner takes the later position
            merged[server.name] = server
    return list(merged.values())


def expand_server(server: McpServerConfig, lookup: Lookup | Mapping[str, str]) -> McpServerConfig:
    """A copy of ``server`` with ``${VAR}`` expanded in command, args, env, url and headers.

    An unset variable without a default raises ConfigError naming the
    variable and the server (D22).
    """
    where = f"MCP server {server.name!r}"

    def x(text: str, key: str) -> str:
        return expand_vars(text, lookup, where, file=server.source or None, key=key)

    def header(name: str, value: str) -> str:
        expanded = x(value, f"headers.{name}")
        problem = header_problem(name, expanded)  # a variable may bring what the file did not
        if problem:
            raise ConfigError(f"{where}: {problem} after expansion", file=server.source or None,
                              key=f"headers.{name}")  # fmt: skip
        return expanded

    return replace(
        server,
        command=x(server.command, "command"),
        args=[x(a, "args") for a in server.args],
        env={k: x(v, f"env.{k}") for k, v in server.env.items()},
        url=x(server.url, "url"),
        headers={k: header(k, v) for k, v in server.headers.items()},
    )
