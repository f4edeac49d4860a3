"""The model side of a runtime: provider, tool registry, price, window, context, budget."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.budget import OutputBudget
from reasonix.agent.memory.declared import MEMORY_TOOL_NAMES
from reasonix.agent.session import Session
from reasonix.agent.spend import RunBudget
from reasonix.agent.window import ContextWindow
from reasonix.config.model import Config, ResolvedModel
from reasonix.errors import ConfigError, UsageError
from reasonix.lazy import asdict
from reasonix.tool import Registry, ToolContext

from .permissions import naming_file

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.checkpoints import CheckpointStore
    from reasonix.agent.hooks import HookRunner

__all__ = [
    "SUBAGENT_TOOLS",
    "budget_for",
    "build_provider",
    "build_registry",
    "context_for",
    "price_for_model",
    "run_budget_for",
    "search_notice",
    "warm_modules",
    "window_for",
]  # fmt: skip

SUBAGENT_TOOLS = ("task", "read_only_task", "fleet", "parallel_tasks")  # SUB-28
HOST_TOOLS = (*SUBAGENT_TOOLS, "run_skill", "complete_subtask")  # added by boot/subagents.py


def build_provider(resolved: ResolvedModel) -> Any:
    """The provider for ``resolved``, its kind imported on demand (ARCH-3); key required."""
    from reasonix import provider
    from reasonix.config import require_api_key

    p = resolved.provider
    if not (p.request_url or p.base_url or (p.kind == "openai" and p.chat_url)):
        raise ConfigError(
            f"provider {p.name!r} has no base_url (or request_url); say where to send requests",
            file=p.source if p.source not in ("built-in", "flag") else None,
            key="providers.base_url",
        )
    require_api_key(resolved.provider)
    kind = resolved.provider.kind
    with contextlib.suppress(ImportError):  # built-in kinds register when imported (ARCH-3)
        importlib.import_module(f"reasonix.provider.{kind}")
    return provider.new(kind, resolved.provider)


def search_notice(resolved: ResolvedModel, provider: Any) -> list[str]:
    """The one-line start notice when ``web_search = true`` has no server-side search here.

    Nothing is added to the request in that case (tools and system prompt stay the same).
    """
    p = resolved.provider
    if not p.web_search or getattr(provider, "supports_web_search", False):
        return []
    return [
        f"web_search: provider {p.name!r} (kind {p.kind}) has no server-side web search; "
        "the setting is ignored (kinds anthropic and responses support it)"
    ]


def build_registry(cfg: Config, ablate: list[str]) -> Registry:
    """The enabled built-in tools (memory and plugin tools are added later)."""
    from reasonix.tool import builtin

    builtin.load_catalog()  # the built-ins as data: a tool module loads on its first call
    # The memory tools are nameable in [tools].enabled too; they are added by the runtime.
    host = ("exit_plan_mode", "update_goal")  # added by the runtime (boot/coordination.py)
    names = [
        n
        for n in cfg.tools.enabled
        if n not in MEMORY_TOOL_NAMES and n not in host and n not in HOST_TOOLS
    ]
    with naming_file(cfg, "tools.enabled"):
        reg = Registry() if cfg.tools.enabled and not names else Registry.from_builtins(names)
    if "subagent" in ablate or "all" in ablate:
        for name in SUBAGENT_TOOLS:
            reg.remove(name)
    return reg


def price_for_model(resolved: ResolvedModel) -> dict[str, Any] | None:
    """The model's price per million tokens (own config first, then the presets)."""
    from reasonix.config.presets import price_for

    own = resolved.provider.prices.get(resolved.model)
    if own:
        return dict(own)
    price = price_for(resolved.provider.name, resolved.model)
    return asdict(price) if price is not None else None


def run_budget_for(cfg: Config, price: dict[str, Any] | None, child: bool) -> RunBudget:
    """The run's budget from ``[agent] max_cost / max_tokens / max_minutes`` (flags included).

    A cost budget over an unpriced model could never be counted: it is refused
    at the start (UsageError) rather than never stopping.
    """
    a = cfg.agent
    budget = RunBudget(a.max_cost, a.max_tokens, a.max_minutes * 60)
    if a.max_cost > 0 and price is None and not child:
        ref = cfg.default_resolved().ref
        raise UsageError(
            f"a cost budget (--max-cost / [agent] max_cost) needs a priced model, and {ref} "
            "has no price: add one under its provider's `prices` table, or use "
            "--max-tokens / --max-time instead"
        )
    return budget


def window_for(resolved: ResolvedModel, provider: Any) -> ContextWindow:
    """The model's context window; a local server is asked for its real one meanwhile.

    The probe (:mod:`reasonix.provider.probe`) runs on a background thread
    while the rest of the runtime is built, only for servers on this machine
    or network (or ``probe_window = true``); the first request waits for it
    at most a second, and a silent or absent endpoint changes nothing.
    """
    from reasonix.config.trust_rules import origin
    from reasonix.provider.probe import probe_window, should_probe, target_url

    p, model = resolved.provider, resolved.model
    window = ContextWindow(p.context_window_for(model))
    if not should_probe(p):
        return window
    headers: dict[str, str] = {}
    with contextlib.suppress(Exception):  # the key was required already; never fail here
        headers = dict(provider.headers())
        if p.api_key and origin(target_url(p)) not in p.key_hosts:
            # the key goes only where its owner (a preset, the user's file) sends it
            for name in provider.auth_headers(p.api_key):
                headers.pop(name, None)
    window.start_probe(
        lambda: probe_window(p, model, headers=headers),
        reprobe=lambda: probe_window(p, model, headers=headers, only_ollama_ps=True),
    )
    return window


def context_for(
    cfg: Config,
    resolved: ResolvedModel,
    provider: Any,
    system: str,
    reg: Registry,
    s: Session,
    window: ContextWindow | None = None,
    tools: list[Any] | None = None,
) -> Any:
    """The session's context manager (compaction over the transcript's projection).

    ``tools``: the session's pinned schemas (agent/toolpin.py); a summary request
    carries them too, so it extends the prefix the provider has cached.
    """
    from reasonix.agent.context import ContextManager
    from reasonix.provider.types import ToolSchema

    size = window or ContextWindow(resolved.provider.context_window_for(resolved.model))
    if tools is None:
        tools = [ToolSchema(**t) for t in reg.schemas()]
    return ContextManager(provider, resolved.model, size, cfg.agent.compact_ratio, system, tools, s)


def budget_for(resolved: ResolvedModel, window: ContextWindow | None = None) -> OutputBudget:
    """The session's output budget (PROV-11…15, D10), bounded by the shared window."""
    from reasonix.provider.base import host_of

    p, model = resolved.provider, resolved.model
    return OutputBudget(
        p.max_output_tokens_for(model),
        kind=p.kind,
        host=host_of(p.request_url or p.chat_url or p.base_url),
        context_window=window or p.context_window_for(model),
    )


def hooks_for(
    cfg: Config, workspace: Path, ctx: ToolContext, fields: Callable[[], dict[str, Any]]
) -> HookRunner | None:
    """The runtime's hook runner (None without hooks): bash's sandbox rules, no provider keys."""
    if not cfg.hooks:
        return None
    from reasonix.agent.hooks import HookRunner
    from reasonix.permission.sandbox import SandboxSettings, wrap_command

    sandbox = ctx.sandbox

    def wrap(argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        if isinstance(sandbox, SandboxSettings):
            return wrap_command(argv, sandbox, env)
        return argv, env

    return HookRunner(
        cfg.hooks,
        workspace=str(workspace),
        base=fields,
        wrap=wrap,
        secret_env=ctx.extra.get("secret_env", ()),
    )


def checkpoints_for(workspace: Path) -> CheckpointStore | None:
    """The workspace's checkpoint store for ``/rewind`` (None when git is missing)."""
    from reasonix.agent.checkpoints import CheckpointStore

    return CheckpointStore(workspace) if CheckpointStore.available() else None


# The built-ins agents call most, first (read, edit, run). The wait for each model
# answer imports them (reasonix.idle), so the first call of each finds them loaded:
# what the first call loads before the tool's own module (a step each, so an answer
# is not kept waiting behind a long chain), then what it loads after (the bash
# classifier and sandbox backend, at its permission check and its start).
_LIKELY_TOOLS = ("read_file", "edit_file", "bash", "grep", "glob", "ls", "write_file",
                 "multi_edit")  # fmt: skip
_LOADS_BEFORE = {
    "read_file": ("reasonix.tool.paths", "reasonix.tool.builtin._regular",
                  "reasonix.tool.builtin._files"),
    "edit_file": ("reasonix.tool.builtin._edit",),
    "bash": ("reasonix.tool.children", "reasonix.tool.builtin._proc",
             "reasonix.tool.builtin._jobs", "reasonix.tool.builtin._bash_scope"),
}  # fmt: skip
_LOADS_AFTER = {"bash": ("reasonix.permission.bash", "reasonix.permission.sandbox.bwrap")}


def warm_modules(registry: Registry, *, checkpoints: bool = False) -> list[str]:
    """What the enabled built-ins of :data:`_LIKELY_TOOLS` load on their first call
    (and, with ``checkpoints``, what the turn's first snapshot loads, after the first
    tool's modules: it is prepared beside the first round of tools)."""
    from reasonix.tool import CatalogTool

    groups: list[list[str]] = []
    for name in _LIKELY_TOOLS:
        tool = registry.get(name)
        if isinstance(tool, CatalogTool):  # a replaced or disabled built-in: nothing
            groups.append([*_LOADS_BEFORE.get(name, ()), tool.module, *_LOADS_AFTER.get(name, ())])
    if checkpoints:  # its git runs through subprocess, which a run's start no longer loads
        groups.insert(1, ["reasonix.agent.snaptree", "reasonix.agent.snaplist", "subprocess"])
    return [module for group in groups for module in group]
