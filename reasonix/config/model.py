"""Configuration data model: plain dataclasses, the contract other layers read.

Loading, merging and validation live in :mod:`reasonix.config.loader`; these
classes only hold effective values with their documented defaults (CFG-8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.config.claude_settings import RuleOrigin
from reasonix.config.hooks import HookSpec
from reasonix.config.trust import WorkspaceTrust
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AgentConfig",
    "Config",
    "McpConfig",
    "McpServerConfig",
    "ModelOverride",
    "PermissionsConfig",
    "ProviderConfig",
    "ResolvedModel",
    "SandboxConfig",
    "ServeConfig",
    "ToolsConfig",
]


@dataclass
class ModelOverride:
    """Per-model settings inside one provider (``model_overrides.<model>``)."""

    context_window: int | None = None
    max_output_tokens: int | None = None
    # sampling for this model only; None = not configured, so not sent (issue 33)
    temperature: float | None = None
    top_p: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ProviderConfig:
    """One vendor endpoint (``[[providers]]``)."""

    name: str
    kind: str = "openai"
    base_url: str = ""
    request_url: str = ""
    chat_url: str = ""
    models: list[str] = field(default_factory=list)
    default: str = ""
    api_key_env: str = ""
    context_window: int = 128000
    max_output_tokens: int = 0
    model_overrides: dict[str, ModelOverride] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)
    web_search: bool = False
    # openai kind: every assistant message with tool calls carries reasoning_content
    # ("" when there was none); Moonshot/Kimi thinking models refuse the request without it
    reasoning_content_on_tool_calls: bool = False
    # ask the server for its real context window at start-up: None = only servers on
    # this machine or network, True = any, False = never (provider.probe.should_probe)
    probe_window: bool | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # price per million tokens: {"input":…, "output":…, "cache_read":…, "currency": "USD"}
    prices: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the resolved key, filled by the loader from <home>/.env then os.environ (D29)
    api_key: str = ""
    # origins (scheme://host:port) the key's owner, a preset or the user's own file,
    # sends it to; a window probe elsewhere goes without it (config.trust_rules)
    key_hosts: list[str] = field(default_factory=list)
    source: str = "built-in"

    @property
    def default_model(self) -> str:
        """The explicit default, else the first listed model (PROV-6)."""
        if self.default:
            return self.default
        return self.models[0] if self.models else ""

    def context_window_for(self, model: str) -> int:
        """Effective context window for ``model`` (PROV-10)."""
        ov = self.model_overrides.get(model)
        if ov is not None and ov.context_window is not None:
            return ov.context_window
        return self.context_window

    def max_output_tokens_for(self, model: str) -> int:
        """Effective max_output_tokens setting for ``model`` (PROV-11)."""
        ov = self.model_overrides.get(model)
        if ov is not None and ov.max_output_tokens is not None:
            return ov.max_output_tokens
        return self.max_output_tokens


@dataclass
class ResolvedModel:
    """A provider plus the concrete model name chosen from it."""

    provider: ProviderConfig
    model: str

    @property
    def ref(self) -> str:
        """The canonical ``provider/model`` reference."""
        return f"{self.provider.name}/{self.model}"


@dataclass
class AgentConfig:
    """``[agent]``."""

    # None = not sent: the vendor's own default applies (issue 33, PROVIDERS §10)
    temperature: float | None = None
    reasoning_language: str = "auto"
    planner_model: str = ""
    compact_ratio: float = 0.80
    max_steps: int = 0  # D5: 0 = automatic (200 rounds)
    effort: str = ""
    max_subagent_depth: int = 2
    # Goal budgets (PERM-19): 0 = off; a positive value pauses the goal, resumably.
    goal_token_budget: int = 0
    task_time_budget_minutes: float = 0.0  # 0 or negative (legacy) = no time boundary
    goal_cost_budget: float = 0.0  # in the model price's currency
    # Run budgets (issue 36): every run and chat session; 0 = no limit
    max_cost: float = 0.0  # in the model price's currency
    max_tokens: int = 0  # input + output tokens, sub-agents included
    max_minutes: float = 0.0  # wall time
    # sub-agents (SUB-5, SUB-6): the session scheduler and the child model/effort defaults
    max_subagent_concurrency: int = 6
    max_parallel_writers: int = 3
    subagent_model: str = ""
    subagent_effort: str = ""
    subagent_models: dict[str, str] = field(default_factory=dict)  # per profile
    subagent_efforts: dict[str, str] = field(default_factory=dict)
    # per-spawn budgets (issue 36), reserved from the run's; 0 = none of its own
    subagent_max_tokens: int = 0
    subagent_max_cost: float = 0.0
    subagent_max_turns: int = 0  # model requests
    subagent_max_minutes: float = 0.0
    max_subagent_spawns: int = 50  # per session; 0 = no cap
    keep: Any = None  # legacy, round-tripped but unused (CTX)
    recent_keep: Any = None


@dataclass
class ToolsConfig:
    """``[tools]``."""

    enabled: list[str] = field(default_factory=list)
    bash_timeout_seconds: float = 120.0
    mcp_startup_timeout_seconds: float = 30.0
    mcp_call_timeout_seconds: float = 300.0


@dataclass
class PermissionsConfig:
    """``[permissions]``."""

    mode: str = "ask"
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    allow_dynamic_bash: bool = False


@dataclass
class SandboxConfig:
    """``[sandbox]``; paths are already ``${VAR}``-expanded and absolute."""

    workspace_root: str = ""
    allow_write: list[str] = field(default_factory=list)
    forbid_read: list[str] = field(default_factory=list)
    bash: str = "auto"  # "enforce" | "auto" | "off"
    network: bool = True


@dataclass
class ServeConfig:
    """``[serve]``."""

    auth_mode: str = "none"
    behind_proxy: bool = False
    host: str = "127.0.0.1"
    port: int = 0  # 0 = pick a free port
    release_after_seconds: float = 60.0  # idle time before a browser session's lease is freed
    max_connections: int = 100  # connections open at once; one more is answered 503
    head_timeout_seconds: float = 20.0  # time for a request's line and headers (slowloris)


@dataclass
class UiConfig:
    """``[ui]``: how the chat views behave."""

    confirm_cache_break: bool = True  # ask before /model, /effort … drop the prompt cache
    status_command: str = ""  # a shell command whose first output line joins the footer


@dataclass
class McpServerConfig:
    """One ``[[mcp.servers]]`` / ``[[plugins]]`` / ``.mcp.json`` entry (not yet expanded)."""

    name: str
    type: str = "stdio"  # stdio | http | streamable-http | sse
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    concurrency: str = ""  # "" = by name (D21), else "serial" | "parallel"
    startup_timeout_seconds: float | None = None
    # MCP-20: per-server call cap and per-tool caps (raw MCP tool names); 0 = the default
    call_timeout_seconds: float = 0.0
    tool_timeout_seconds: dict[str, float] = field(default_factory=dict)
    enabled: bool = True
    # issue 37: offer this server's tools directly even when the others are deferred
    always_load: bool = False
    source: str = ""  # file it came from


@dataclass
class McpConfig:
    """``[mcp]`` settings other than the server list."""

    # issue 37: "auto" defers MCP tool schemas behind use_capability's search when
    # they would take > 10 % of the window or > 40 tools; "always" | "never"
    defer_tools: str = "auto"


@dataclass
class Config:
    """The effective configuration of one process."""

    default_model: str = ""
    agent: AgentConfig = field(default_factory=AgentConfig)
    providers: list[ProviderConfig] = field(default_factory=list)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    permissions: PermissionsConfig = field(default_factory=PermissionsConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    serve: ServeConfig = field(default_factory=ServeConfig)
    ui: UiConfig = field(default_factory=UiConfig)
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    mcp: McpConfig = field(default_factory=McpConfig)
    hooks: list[HookSpec] = field(default_factory=list)  # user scope first, then project
    # every permission rule with the file (and line) that declared it, lowest precedence
    # first, those left out included (``reasonix permission list``)
    permission_rules: list[RuleOrigin] = field(default_factory=list)
    # dotted key -> where its effective value came from ("flag", a file path, "default")
    sources: dict[str, str] = field(default_factory=dict)
    # ${VAR} values from the project .env (never exported, never provider keys; CFG-7)
    project_env: dict[str, str] = field(default_factory=dict)
    # whether the workspace is trusted, and what its files declare that needs trust
    trust: WorkspaceTrust = field(default_factory=WorkspaceTrust)
    warnings: list[str] = field(default_factory=list)

    def provider(self, name: str) -> ProviderConfig | None:
        """The provider called ``name``, or None."""
        for p in self.providers:
            if p.name == name:
                return p
        return None

    def resolve_model(self, ref: str) -> ResolvedModel:
        """Resolve a model reference (PROV-9), the single resolver for every caller.

        Accepted forms, tried in this order:

        1. a provider name → that provider's default model (PROV-6);
        2. ``provider/model`` where the provider lists ``model``;
        3. a bare model name → the first provider listing it (configured
           providers come before presets in :attr:`providers`), so OpenRouter
           ids such as ``anthropic/claude-sonnet-4.5`` work as bare names;
        4. ``provider/model`` with a model the provider does not list (the
           vendor decides whether it exists).

        Anything else is a ConfigError listing the choices.
        """
        ref = ref.strip()
        if not ref:
            raise ConfigError("empty model reference", key="model")
        named = self.provider(ref)
        if named is not None:
            if not named.default_model:
                raise ConfigError(
                    f"provider {ref!r} lists no models: add models = [...] to its "
                    f"[[providers]] entry or ask for {ref}/<model>",
                    file=None if named.source == "built-in" else named.source,
                    key="models",
                )
            return ResolvedModel(named, named.default_model)
        prefix, slash, rest = ref.partition("/")
        owner = self.provider(prefix) if slash and rest else None
        if owner is not None and rest in owner.models:
            return ResolvedModel(owner, rest)
        for p in self.providers:
            if ref in p.models:
                return ResolvedModel(p, ref)
        if owner is not None:
            return ResolvedModel(owner, rest)
        choices = [p.name for p in self.providers]
        choices += [f"{p.name}/{m}" for p in self.providers for m in p.models]
        raise ConfigError(
            f"unknown model {ref!r}: expected a provider name, a listed model or "
            f"provider/model; choices: {', '.join(choices)}",
            key="model",
        )

    def default_resolved(self) -> ResolvedModel:
        """Resolve :attr:`default_model` (built-in default ``deepseek``)."""
        ref = self.default_model or "deepseek"
        try:
            return self.resolve_model(ref)
        except ConfigError as exc:
            where = self.sources.get("default_model", "default")
            file = where if where not in ("default", "flag") else None
            raise ConfigError(exc.detail, file=file, key="default_model") from None
