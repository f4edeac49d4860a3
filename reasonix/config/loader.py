"""Load the effective configuration: flag > ./reasonix.toml > <home>/config.toml > defaults.

:func:`load` reads both files, removes retired keys (CTX-15), validates every
known key with a message that names the file, line and key (never a
traceback), merges the layers, records where each value came from in
``Config.sources``, and fills provider keys from ``<home>/.env`` then the
environment (D29). Unknown keys only produce warnings (CFG-9).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config import paths
from reasonix.config.claude_settings import (
    RULE_LISTS,
    RuleOrigin,
    read_claude_permissions,
    settings_files,
    string_line,
)
from reasonix.config.dotenv import read_dotenv
from reasonix.config.expand import chain_lookup, environ_lookup, expand_vars
from reasonix.config.layers import FLAG, Layer, check_type, read_layer
from reasonix.config.legacy import drop_legacy_context_keys, find_legacy_context_keys
from reasonix.config.mcp import (
    expand_server,
    merge_servers,
    read_mcp_json,
    servers_from_toml,
    settings_from_toml,
)
from reasonix.config.model import Config, McpServerConfig, ProviderConfig
from reasonix.config.presets import preset_names
from reasonix.config.providers import ProviderSet
from reasonix.config.schema import (
    DEFAULT_MODEL_REF,
    LEGACY_AGENT_KEYS,
    LEGACY_UPDATE_KEYS,
    SANDBOX_BASH_MODES,
    SERVE_AUTH_MODES,
    compact_ratio_error,
    normalize_permission_mode,
)
from reasonix.config.trust import TrustItem, WorkspaceTrust, decide
from reasonix.config.trust_rules import KeyOwners, mcp_item, provider_item, scalar_item
from reasonix.errors import ConfigError, MissingAPIKey
from reasonix.lazy import replace

if TYPE_CHECKING:
    from typing import Any

__all__ = ["SCALAR_KEYS", "load", "require_api_key"]

# table -> key -> type name (see layers.check_type). "" is the top level.
SCALAR_KEYS: dict[str, dict[str, str]] = {
    "": {"default_model": "str"},
    "agent": {
        "temperature": "float",
        "reasoning_language": "str",
        "planner_model": "str",
        "compact_ratio": "float",
        "max_steps": "int",
        "effort": "str",
        "max_subagent_depth": "int",
        "goal_token_budget": "int",
        "task_time_budget_minutes": "float",
        "goal_cost_budget": "float",
        "max_cost": "float",
        "max_tokens": "int",
        "max_minutes": "float",
        "max_subagent_concurrency": "int",
        "max_parallel_writers": "int",
        "subagent_model": "str",
        "subagent_effort": "str",
        "subagent_models": "dict[str]",
        "subagent_efforts": "dict[str]",
        "subagent_max_tokens": "int",
        "subagent_max_cost": "float",
        "subagent_max_turns": "int",
        "subagent_max_minutes": "float",
        "max_subagent_spawns": "int",
        "keep": "any",
        "recent_keep": "any",
    },
    "tools": {
        "enabled": "list[str]",
        "bash_timeout_seconds": "float",
        "mcp_startup_timeout_seconds": "float",
        "mcp_call_timeout_seconds": "float",
    },
    "permissions": {
        "mode": "str",
        "allow": "list[str]",
        "ask": "list[str]",
        "deny": "list[str]",
        "allow_dynamic_bash": "bool",
    },
    "sandbox": {
        "workspace_root": "str",
        "allow_write": "list[str]",
        "forbid_read": "list[str]",
        "bash": "str",
        "network": "bool",
    },
    "serve": {
        "auth_mode": "str",
        "behind_proxy": "bool",
        "host": "str",
        "port": "int",
        "release_after_seconds": "float",
        "max_connections": "int",
        "head_timeout_seconds": "float",
    },
    "ui": {"confirm_cache_break": "bool", "status_command": "str"},
}
# Lists that accumulate across layers instead of replacing: rules and paths
# from the global file must survive a project file that adds its own.
_UNION_KEYS = {
    "permissions.allow",
    "permissions.ask",
    "permissions.deny",
    "sandbox.allow_write",
    "sandbox.forbid_read",
}
_SANDBOX_PATH_KEYS = ("allow_write", "forbid_read")
# "remote" ([[remote.hosts]]) is read by cli/remote_hosts.py from the user file only.
_TABLES_ELSEWHERE = {"providers", "mcp", "plugins", "hooks", "remote"}


def _validate(layer: Layer, table: str, key: str, value: Any) -> Any:
    """Semantic checks beyond the type; returns the (normalised) value."""
    dotted = f"{table}.{key}" if table else key

    def bad(message: str) -> ConfigError:
        return layer.error(message, table, key)

    if dotted == "agent.compact_ratio":
        problem = compact_ratio_error(value)
        if problem:
            raise bad(problem)
    elif dotted == "permissions.mode":
        try:
            return normalize_permission_mode(value)
        except ConfigError as exc:
            raise bad(exc.detail) from None
    elif dotted == "sandbox.bash" and value not in SANDBOX_BASH_MODES:
        raise bad(f"expected one of {', '.join(SANDBOX_BASH_MODES)}, got {value!r}")
    elif dotted == "serve.auth_mode" and value not in SERVE_AUTH_MODES:
        raise bad(f"expected one of {', '.join(SERVE_AUTH_MODES)}, got {value!r}")
    elif dotted == "agent.temperature" and not 0 <= value <= 2:
        raise bad(
            f"expected a number from 0 to 2 (leave it out for the vendor's default), got {value}"
        )
    elif (
        dotted
        in (
            "agent.goal_token_budget",
            "agent.goal_cost_budget",
            "agent.max_cost",
            "agent.max_tokens",
            "agent.max_minutes",
            "agent.subagent_max_tokens",
            "agent.subagent_max_cost",
            "agent.subagent_max_turns",
            "agent.subagent_max_minutes",
            "agent.max_subagent_spawns",
        )
        and value < 0
    ):
        raise bad(f"expected a number >= 0 (0 = no budget), got {value}")
    elif dotted == "serve.port" and not 0 <= value <= 65535:
        raise bad(f"expected a port number 0-65535 (0 = pick a free one), got {value}")
    elif dotted in ("agent.max_steps", "agent.max_subagent_depth") and value < 0:
        raise bad(f"expected an integer >= 0, got {value}")
    elif dotted in ("agent.max_subagent_concurrency", "agent.max_parallel_writers") and not (
        1 <= value <= 32
    ):
        raise bad(f"expected an integer from 1 to 32, got {value}")  # SUB-5
    elif dotted == "tools.bash_timeout_seconds" and value < 0:
        # 0 is meaningful here: no tool-local cap on foreground commands (TOOL-13).
        raise bad(f"expected a number of seconds >= 0 (0 = no cap), got {value}")
    elif dotted.endswith("_seconds") and dotted != "tools.bash_timeout_seconds" and value <= 0:
        raise bad(f"expected a number of seconds > 0, got {value}")
    return value


def _is_retired(table: str, key: str) -> bool:
    if table in ("", "agent") and key in LEGACY_AGENT_KEYS:
        return True
    return (table, key) in LEGACY_UPDATE_KEYS or (
        table == "" and key in {t for t, _ in LEGACY_UPDATE_KEYS if t}
    )


class _Guard:
    """Records what a workspace's files declare that needs trust, and says whether it applies."""

    def __init__(self, trust: WorkspaceTrust, owners: KeyOwners) -> None:
        self.trust, self.owners = trust, owners
        self.skipped_providers: dict[str, list[str]] = {}  # name -> the models it listed

    def admits(self, kind: str, text: str | None, file: str) -> bool:
        """False when ``text`` (a reason it needs trust) is set and the workspace is not trusted."""
        if text is None:
            return True
        self.trust.items.append(TrustItem(kind, text, file))
        return self.trust.trusted

    def admits_provider(
        self, layer: Layer, name: str, current: ProviderConfig | None, values: dict[str, Any]
    ) -> bool:
        """The admit callback of :meth:`ProviderSet.apply` for a workspace file."""
        if self.admits("provider", provider_item(name, current, values, self.owners), layer.name):
            return True
        self.skipped_providers[name] = list(values.get("models") or [])
        return False

    def refers_to_skipped(self, ref: str) -> bool:
        """True when a model reference names a provider (or its model) that was left out."""
        for name, models in self.skipped_providers.items():
            if ref == name or ref.startswith(f"{name}/") or ref in models:
                return True
        return False


class _Merger:
    """Applies layers in increasing precedence onto one Config."""

    def __init__(self, cfg: Config, expand: Callable[[str, Layer, str], str]) -> None:
        self.cfg = cfg
        self.expand = expand
        self.providers = ProviderSet()
        self.guard: _Guard | None = None  # set while a workspace's own file is applied
        for table, keys in SCALAR_KEYS.items():
            for key in keys:
                cfg.sources[f"{table}.{key}" if table else key] = "default"

    def _target(self, table: str) -> Any:
        return getattr(self.cfg, table) if table else self.cfg

    def set(
        self,
        layer: Layer,
        table: str,
        key: str,
        raw: Any,
        *,
        item: str = "",
        origins: list[RuleOrigin] | None = None,
    ) -> None:
        """Check and apply one scalar (or list) value from ``layer``.

        ``item`` words the trust item in the file's own terms (a Claude settings
        key); ``origins`` are the rules' own records when the caller has them.
        """
        dotted = f"{table}.{key}" if table else key
        value = _validate(
            layer, table, key, check_type(layer, table, key, raw, SCALAR_KEYS[table][key])
        )
        if table == "sandbox" and key in _SANDBOX_PATH_KEYS:
            value = [self.expand(v, layer, dotted) for v in value]
        elif dotted == "sandbox.workspace_root":
            value = self.expand(value, layer, dotted)
        current = getattr(self._target(table), key)
        needs = scalar_item(dotted, value, current)
        if needs is not None and item:
            needs = item
        admitted = self.guard is None or self.guard.admits(table, needs, layer.name)
        if table == "permissions" and key in RULE_LISTS:
            self._record(layer, key, value, origins, "" if admitted else "untrusted workspace")
        if not admitted:
            return
        if dotted in _UNION_KEYS:
            value = current + [v for v in value if v not in current]
        setattr(self._target(table), key, value)
        self.cfg.sources[dotted] = layer.name

    def _record(
        self, layer: Layer, kind: str, rules: list[str], origins: list[RuleOrigin] | None,
        skipped: str,
    ) -> None:  # fmt: skip
        """Remember where each rule of a ``permissions`` list came from."""
        if origins is None:
            at = layer.line_of("permissions", kind) or 1
            start = sum(len(x) for x in layer.text.splitlines(keepends=True)[: at - 1])
            file = layer.file or layer.name
            origins = [RuleOrigin(kind, r, file, string_line(layer.text, r, start)) for r in rules]
        self.cfg.permission_rules += [replace(o, skipped=skipped) for o in origins]

    def apply_claude(self, path: Path, cwd: Path, guard: _Guard | None) -> None:
        """``permissions`` of one Claude Code settings file (rules, mode, directories)."""
        found = read_claude_permissions(path, cwd, self.cfg.warnings)
        if found is None:
            return
        layer = Layer(found.file, {}, "", path)
        self.guard = guard
        try:
            for kind in RULE_LISTS:
                mine = [o for o in found.rules if o.kind == kind]
                if mine:
                    self.set(layer, "permissions", kind, [o.rule for o in mine], origins=mine)
            if found.mode:
                text = f"permissions.defaultMode = {found.mode_written!r}"
                self.set(layer, "permissions", "mode", found.mode, item=text)
            if found.directories:
                text = (
                    f"permissions.additionalDirectories = {found.directories!r} "
                    "(readable and writable outside the workspace)"
                )
                self.set(layer, "sandbox", "allow_write", found.directories, item=text)
            if found.status_command:
                text = f"statusLine.command = {found.status_command!r} (runs this command)"
                self.set(layer, "ui", "status_command", found.status_command, item=text)
        finally:
            self.guard = None

    def apply_file(self, layer: Layer) -> None:
        """Apply every table of a parsed file."""
        warn = self.cfg.warnings.append
        for top, value in layer.data.items():
            if top in _TABLES_ELSEWHERE:
                continue
            if top in SCALAR_KEYS[""]:
                self.set(layer, "", top, value)
            elif top in SCALAR_KEYS and top:
                if not isinstance(value, dict):
                    raise layer.error(f"expected a table [{top}]", "", top)
                for key, item in value.items():
                    if key in SCALAR_KEYS[top]:
                        self.set(layer, top, key, item)
                    elif not _is_retired(top, key):
                        warn(f"{layer.name}: unknown key {top}.{key} (ignored)")
            elif not _is_retired("", top):
                warn(f"{layer.name}: unknown key {top} (ignored)")
        if "providers" in layer.data:
            admit = self.guard.admits_provider if self.guard is not None else None
            self.providers.apply(layer, layer.data["providers"], self.cfg.warnings, admit)

    def apply_flags(self, flags: dict[str, Any]) -> None:
        """Apply command-line values given as dotted keys (``"agent.compact_ratio"``)."""
        layer = Layer(FLAG, {})
        for dotted, value in flags.items():
            if value is None:
                continue  # argparse default: the flag was not given
            table, _, key = dotted.rpartition(".")
            if key not in SCALAR_KEYS.get(table, {}):
                raise ConfigError(f"unknown configuration flag key {dotted!r}", key=dotted)
            self.set(layer, table, key, value)


def _absolute(entry: str, base: Path) -> str:
    path = Path(os.path.expanduser(entry))
    return os.path.normpath(path if path.is_absolute() else base / path)


def load(
    cwd: Path,
    flags: dict[str, Any] | None = None,
    *,
    migrate: bool = True,
    check_mcp_vars: bool = True,
    trust: bool | None = None,
) -> Config:
    """The effective configuration for a process working in ``cwd``.

    ``flags`` maps dotted keys (``default_model``, ``agent.compact_ratio``,
    ``permissions.mode``, ``sandbox.allow_write`` …) to command-line values;
    None values are skipped. With ``migrate`` retired context keys are
    removed from the file that holds them (CTX-15). With ``check_mcp_vars``
    an unset ``${VAR}`` (without a default) in an enabled MCP declaration is a
    ConfigError naming the file, the key, the variable and the server (D22);
    ``reasonix mcp`` turns it off so a broken declaration can still be removed.

    ``trust`` is the frontend's answer for this run (None: the environment, then
    the store; :func:`reasonix.config.trust.decide`). In a workspace that is not
    trusted, what its files declare that needs trust is left out and named in
    ``Config.warnings``; ``Config.trust`` lists it either way.
    """
    cwd = Path(os.path.abspath(cwd))
    cfg = Config()
    trusted, how = decide(cwd, trust)
    cfg.trust = WorkspaceTrust(trusted, how)
    cfg.project_env = {
        k: v
        for k, v in read_dotenv(paths.project_env_path(cwd)).values.items()
        if k not in paths.CONTROL_VARIABLES
    }
    lookup = chain_lookup(cfg.project_env, environ_lookup)

    def expand(text: str, layer: Layer, dotted: str) -> str:
        return expand_vars(text, lookup, dotted, file=layer.file, key=dotted)

    merger = _Merger(cfg, expand)
    cfg.default_model = DEFAULT_MODEL_REF
    user = read_layer(paths.user_config_path())
    project = read_layer(paths.project_config_path(cwd))
    servers: dict[str, list[McpServerConfig]] = {"user": [], "project": []}
    # Claude Code's settings (issue 35): the user's below <home>/config.toml, the
    # workspace's (settings.json < settings.local.json) below ./reasonix.toml
    claude = settings_files(cwd)
    merger.apply_claude(claude[0][0], cwd, None)
    if user is not None:
        _retire(cfg, user, migrate)
        merger.apply_file(user)
        servers["user"] = servers_from_toml(user, cfg.warnings)
        settings_from_toml(user, cfg.mcp, cfg.warnings)
    # what the user's own files and the presets say, before the workspace speaks
    owners = KeyOwners(merger.providers.result())
    guard = _Guard(cfg.trust, owners)
    before = {k: (_get(cfg, k), cfg.sources.get(k, "default")) for k in _MODEL_REFS}
    for path, _ in claude[1:]:
        merger.apply_claude(path, cwd, guard)
    if project is not None:
        _retire(cfg, project, migrate)
        merger.guard = guard
        merger.apply_file(project)
        merger.guard = None
        servers["project"] = servers_from_toml(project, cfg.warnings)
        settings_from_toml(project, cfg.mcp, cfg.warnings)
    if flags:
        merger.apply_flags(flags)

    cfg.providers = merger.providers.result()
    if cfg.sources.get("default_model") == "default":
        # No file or flag chose a model: a provider the user declared themselves is
        # a clearer intent than the embedded DeepSeek default.
        own = [p for p in merger.providers.configured() if p.name not in preset_names()]
        if own:
            cfg.default_model = own[0].name
            cfg.sources["default_model"] = own[0].source
    _fill_api_keys(cfg.providers, owners)
    _finish_sandbox(cfg, cwd)
    json_servers = read_mcp_json(paths.project_mcp_path(cwd), cfg.warnings)
    json_servers = _guarded_servers(guard, json_servers)
    servers["project"] = _guarded_servers(guard, servers["project"])
    # D16: global < project .mcp.json < project reasonix.toml
    cfg.mcp_servers = merge_servers(servers["user"], json_servers, servers["project"])
    cfg.hooks = _hooks(user, project, cwd, cfg.warnings, guard)
    if (cwd / ".claude" / "commands").is_dir() or (cwd / ".reasonix" / "commands").is_dir():
        from reasonix.config.command_trust import command_items  # only with command files

        for item in command_items(cwd):  # shell lines and allowed-tools (issue 35)
            guard.admits(item.kind, item.text, item.file)
    if project is not None and not trusted:
        _restore_model_refs(cfg, guard, before, project.name)
    cfg.warnings += cfg.trust.warnings(cwd)
    if check_mcp_vars:
        # the MCP layer also defines the workspace path variables for its servers
        ws_vars = {"REASONIX_WORKSPACE_ROOT": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
        server_lookup = chain_lookup(ws_vars, lookup)
        json_file = str(paths.project_mcp_path(cwd))
        usable = []
        for server in cfg.mcp_servers:
            try:
                if server.enabled:
                    expand_server(server, server_lookup)  # raises on an unset ${VAR} (D22)
            except ConfigError as exc:
                if server.source != json_file:
                    raise  # our own TOML: a located error, as for every other key
                # Claude Code's .mcp.json: that server is left out, the others start
                cfg.warnings.append(
                    f"{json_file}: MCP server {server.name!r} skipped ({exc.key}): {exc.detail}"
                )
                continue
            usable.append(server)
        cfg.mcp_servers = usable
    return cfg


# model references a workspace may set that could name a provider it declared itself
_MODEL_REFS = ("default_model", "agent.planner_model", "agent.subagent_model")


def _get(cfg: Config, dotted: str) -> Any:
    table, _, key = dotted.rpartition(".")
    return getattr(getattr(cfg, table) if table else cfg, key)


def _restore_model_refs(
    cfg: Config, guard: _Guard, before: dict[str, tuple[Any, str]], project: str
) -> None:
    """A workspace's model choice that names a provider left out falls back to the user's."""
    for dotted, (value, source) in before.items():
        ref = _get(cfg, dotted)
        if cfg.sources.get(dotted) != project or not ref or not guard.refers_to_skipped(ref):
            continue
        table, _, key = dotted.rpartition(".")
        setattr(getattr(cfg, table) if table else cfg, key, value)
        cfg.sources[dotted] = source
        cfg.warnings.append(
            f"{project}: {dotted} = {ref!r} names a provider that was left out "
            f"(untrusted workspace); using {value or 'the default'!r} instead"
        )


def _guarded_servers(guard: _Guard, found: list[McpServerConfig]) -> list[McpServerConfig]:
    """The workspace's MCP servers that may start (every enabled one needs trust)."""
    return [s for s in found if guard.admits("mcp", mcp_item(s), s.source)]


def _hooks(
    user: Layer | None, project: Layer | None, cwd: Path, warnings: list[str], guard: _Guard
) -> list[Any]:
    """Hooks from Claude Code's settings files and our ``[hooks]`` tables (user, then project).

    The workspace's hooks run only in a trusted workspace.
    """
    from reasonix.config.hooks import hooks_from_data, hooks_from_json_file

    claude_home = Path(os.path.expanduser("~")) / ".claude"
    found = hooks_from_json_file(claude_home / "settings.json", warnings)
    if user is not None:
        found += hooks_from_data(user.data.get("hooks"), user.name, warnings)
    theirs = []
    for name in ("settings.json", "settings.local.json"):
        theirs += hooks_from_json_file(cwd / ".claude" / name, warnings)
    if project is not None:
        theirs += hooks_from_data(project.data.get("hooks"), project.name, warnings)
    for hook in theirs:
        matcher = f"[{hook.matcher}]" if hook.matcher not in ("", "*") else ""
        text = f"hook {hook.event}{matcher} runs `{hook.command}`"
        if guard.admits("hook", text, hook.source):
            found.append(hook)
    return found


def _retire(cfg: Config, layer: Layer, migrate: bool) -> None:
    """Handle retired context keys in one file (CTX-15)."""
    retired = find_legacy_context_keys(layer.data)
    if not retired:
        return
    if migrate and layer.path is not None:
        try:
            removed = drop_legacy_context_keys(layer.path, layer.data)
        except (OSError, ConfigError) as exc:
            # A read-only config must not stop the start: the keys are ignored anyway.
            detail = exc.detail if isinstance(exc, ConfigError) else exc
            cfg.warnings.append(f"{layer.name}: could not remove retired keys: {detail}")
            return
        if removed:
            cfg.warnings.append(f"{layer.name}: removed retired keys {', '.join(removed)}")
            return
    # Not migrating, or the keys sit where the editor cannot remove them (an inline table).
    names = ", ".join(f"{t}.{k}" if t else k for t, k in retired)
    cfg.warnings.append(f"{layer.name}: retired keys ignored: {names}")


def _finish_sandbox(cfg: Config, cwd: Path) -> None:
    """Make the sandbox paths absolute; ``workspace_root`` defaults to ``cwd``."""
    box = cfg.sandbox
    root = cwd
    if box.workspace_root:
        root = Path(_absolute(box.workspace_root, cwd))
    box.workspace_root = str(root)
    box.allow_write = list(dict.fromkeys(_absolute(p, root) for p in box.allow_write))
    box.forbid_read = list(dict.fromkeys(_absolute(p, root) for p in box.forbid_read))


def _fill_api_keys(providers: list[ProviderConfig], owners: KeyOwners) -> None:
    """Provider keys: ``<home>/.env`` first, then the environment (D29, PROV-20).

    Each provider also learns the hosts its key's owner (a preset or the user's
    own file) sends that key to, so a probe never carries it anywhere else.
    """
    home_env = read_dotenv(paths.env_path()).values
    for p in providers:
        if p.api_key_env:
            p.api_key = home_env.get(p.api_key_env) or os.environ.get(p.api_key_env, "")
            p.key_hosts = sorted(owners.hosts_for(p.api_key_env))


def require_api_key(provider: ProviderConfig) -> str:
    """The provider's key, or MissingAPIKey naming the variable and where to put it.

    Providers without ``api_key_env`` (local servers such as Ollama) need none
    and get "".
    """
    if not provider.api_key_env:
        return ""
    if provider.api_key:
        return provider.api_key
    var = provider.api_key_env
    raise MissingAPIKey(
        f"provider {provider.name!r} needs an API key in {var}, which is set nowhere: "
        f"add the line {var}=... to {paths.env_path()}, "
        f"or export {var} in the environment"
    )
