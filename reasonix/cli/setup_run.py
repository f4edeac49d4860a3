"""Shared run setup for ``reasonix run`` and the interactive chat.

:func:`add_run_flags` declares the flags both commands accept (DESIGN §4);
:func:`build` turns config + flags into a ready :class:`RunSetup`: config
loaded, model resolved, key required, provider built through the registry,
the run's tool Registry, the permission Gate, the ToolContext with write
roots / forbid_read / sandbox settings, and the session (new, continued,
resumed or copied).

The parent controller also gets memory (spec §3.6): the ``memory``,
``remember``, ``forget`` and ``history`` tools, ``use_capability`` with the
``session``/``tool_result`` pager (always present, MCP servers or not), and
auto-recall on each user turn. The registry is built once per process, so
these tools find the session in use through ``current`` (``/new`` moves it).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonix.agent.budget import OutputBudget
from reasonix.agent.execute import EventApprover
from reasonix.agent.instructions import instruction_block, load_instructions
from reasonix.agent.loop import Agent
from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.recall import Recaller
from reasonix.agent.memory.wiring import (
    MEMORY_TOOL_NAMES,
    controller_tools,
    memory_extra,
    tool_result_capability,
)
from reasonix.agent.prompt import system_prompt
from reasonix.agent.session import (
    Session,
    copy_session,
    find_session,
    latest_session,
    read_records,
)
from reasonix.config.model import Config, ResolvedModel
from reasonix.errors import ConfigError, SessionError, UsageError
from reasonix.plugin.mcp.tools import LocalCapability, UseCapabilityTool
from reasonix.tool import Registry, ToolContext

__all__ = ["ABLATE_ARMS", "PERMISSION_MODES", "RunSetup", "add_run_flags", "build"]

PERMISSION_MODES = (
    "ask", "manual", "auto", "acceptEdits", "dontAsk", "plan", "bypassPermissions", "yolo",
)  # fmt: skip
ABLATE_ARMS = ("subagent", "planner", "retrieval", "compaction", "evidence", "none", "all")  # D17
_SUBAGENT_TOOLS = ("task", "read_only_task", "fleet", "parallel_tasks")  # SUB-28


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags shared by ``run`` and the chat (DESIGN §4)."""
    add = parser.add_argument
    add("--model", help="model reference: provider, provider/model or a model name")
    add("--effort", help="reasoning effort hint (low, medium, high)")
    add("--max-steps", type=int, metavar="N", help="tool-round budget (0 = automatic, 200)")
    add("--dir", metavar="DIR", help="work in DIR instead of the current directory")
    add("--add-dir", action="append", default=[], metavar="DIR", help="extra writable directory")
    add(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session",
    )
    add(
        "-r",
        "--resume",
        nargs="?",
        const="",
        metavar="QUERY",
        help="resume a session (id, path or title)",
    )
    add("--copy", action="store_true", help="with -c/-r: continue in a new copy of the session")
    add("--allowed-tools", "--allowedTools", dest="allowed_tools", action="append", default=[],
        metavar="RULES", help='allow rules, e.g. "Read,Bash(git diff:*)"')  # fmt: skip
    add("--permission-mode", choices=PERMISSION_MODES, help="approval posture")
    add("--yolo", action="store_true", help="bypass permission prompts (bypassPermissions)")
    add("-y", "--auto", action="store_true", help="auto mode: approve what the policy allows")
    add("--ablate", metavar="LIST", help="comma-separated experiment arms (recorded in --metrics)")
    add("--compact", action="store_true", help="compact the context before the turn")
    add("--mcp-debug", metavar="FILE", help="log MCP JSON-RPC traffic to FILE")


@dataclass
class RunSetup:
    """Everything one run needs, built from config and flags; :meth:`close` releases it."""

    config: Config
    resolved: ResolvedModel
    workspace: Path
    session: Session
    agent: Agent
    approver: EventApprover
    price: dict[str, Any] | None
    ablate: list[str]
    resumed: bool
    closers: list[Callable[[], None]] = field(default_factory=list)
    make_agent: Callable[[Session], Agent] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # config warnings, skipped plugins

    def new_session(self) -> None:
        """Close the current session and start a fresh one with the same setup (``/new``)."""
        if self.make_agent is None:
            raise UsageError("this run cannot start a new session")
        self.session.close()
        self.session = Session.create(self.workspace, self.meta)
        self.agent = self.make_agent(self.session)
        self.resumed = False

    def close(self) -> None:
        """Stop plugins and release the session lease (idempotent)."""
        for fn in reversed(self.closers):
            with contextlib.suppress(Exception):
                fn()
        self.closers.clear()
        self.session.close()


def _mode(args: argparse.Namespace) -> str | None:
    if getattr(args, "yolo", False):
        return "bypassPermissions"
    if getattr(args, "auto", False):
        return "auto"
    mode: str | None = getattr(args, "permission_mode", None)
    return "ask" if mode == "manual" else mode


def _workspace(args: argparse.Namespace) -> Path:
    raw = getattr(args, "dir", None)
    ws = Path(raw).expanduser() if raw else Path.cwd()
    if not ws.is_dir():
        raise UsageError(f"--dir {raw}: not a directory")
    return ws.resolve()


def _flags(args: argparse.Namespace, workspace: Path) -> dict[str, Any]:
    add_dirs = [str((workspace / d).resolve()) for d in getattr(args, "add_dir", [])]
    for d in add_dirs:
        if not Path(d).is_dir():
            raise UsageError(f"--add-dir {d}: not a directory")
    return {
        "default_model": getattr(args, "model", None),
        "agent.effort": getattr(args, "effort", None),
        "agent.max_steps": getattr(args, "max_steps", None),
        "permissions.mode": _mode(args),
        "sandbox.allow_write": add_dirs or None,
    }


def _ablate(args: argparse.Namespace) -> list[str]:
    arms = [a.strip() for a in (getattr(args, "ablate", None) or "").split(",") if a.strip()]
    unknown = [a for a in arms if a not in ABLATE_ARMS]
    if unknown:
        raise UsageError(
            f"--ablate: unknown arm(s) {', '.join(unknown)}; known: {', '.join(ABLATE_ARMS)}"
        )
    return arms


def _provider(resolved: ResolvedModel) -> Any:
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


def _registry(cfg: Config, ablate: list[str]) -> Registry:
    from reasonix.tool import builtin

    builtin.load_all()
    # The memory tools are nameable in [tools].enabled too; they are added in build().
    names = [n for n in cfg.tools.enabled if n not in MEMORY_TOOL_NAMES]
    with _naming_file(cfg, "tools.enabled"):
        reg = Registry() if cfg.tools.enabled and not names else Registry.from_builtins(names)
    if "subagent" in ablate or "all" in ablate:
        for name in _SUBAGENT_TOOLS:
            reg.remove(name)
    return reg


def _session(
    args: argparse.Namespace, workspace: Path, meta: dict[str, Any]
) -> tuple[Session, bool]:
    path: Path | None = None
    if getattr(args, "resume", None) is not None:
        query = args.resume
        if not query:
            info = latest_session(workspace)
            if info is None:
                raise UsageError("--resume: this project has no sessions yet")
            path = info.path
        else:
            try:
                path = find_session(workspace, query)
            except SessionError as err:  # no match or several: the flag's value is wrong
                raise UsageError(f"--resume: {err}") from err
    elif getattr(args, "continue_", False):
        info = latest_session(workspace)
        if info is None:
            raise UsageError("--continue: this project has no sessions yet")
        path = info.path
    if path is None:
        if getattr(args, "copy", False):
            raise UsageError("--copy needs -c/--continue or -r/--resume")
        return Session.create(workspace, meta), False
    if getattr(args, "copy", False):
        return copy_session(read_records(path), workspace, meta), True
    return Session.open(path), True


def _gate(
    cfg: Config, args: argparse.Namespace, approver: EventApprover | None, workspace: Path
) -> Any:
    """The permission gate; ``approver`` None means headless (Ask fails closed)."""
    from reasonix import permission
    from reasonix.config import paths, tomledit

    with _naming_file(cfg, "permissions.allow"):
        policy = permission.Policy(
            mode=cfg.permissions.mode,
            allow=cfg.permissions.allow,
            ask=cfg.permissions.ask,
            deny=cfg.permissions.deny,
            allow_dynamic_bash=cfg.permissions.allow_dynamic_bash,
            workspace=workspace,
            protected=[paths.user_config_path()],  # the user config steers every run
        )
    extra = permission.parse_allowed_tools(getattr(args, "allowed_tools", []) or [])
    if extra:
        policy = policy.with_allow(extra)

    def persist(rule: str) -> None:  # D3: "always allow" goes to the project reasonix.toml
        tomledit.append_to_array(workspace / "reasonix.toml", "permissions", "allow", rule)

    return permission.Gate(policy, approver, persist)


@contextlib.contextmanager
def _naming_file(cfg: Config, dotted: str) -> Iterator[None]:
    """Re-raise a ConfigError from a lower layer with the config file that set ``dotted``."""
    try:
        yield
    except ConfigError as err:
        if err.file:
            raise
        key = err.key or dotted
        source = cfg.sources.get(key) or cfg.sources.get(dotted, "")
        file = source if source not in ("", "default", "flag") else None
        raise ConfigError(err.detail, file=file, line=err.line, key=key) from err


def _scope_gate(roots: list[Path], workspace: Path, approver: EventApprover | None) -> Any:
    """CFG-13/14: the run's write-scope gate; its questions reuse the tool-approval flow.

    ``approver`` None = headless: the gate refuses and names ``--add-dir``.
    """
    from reasonix import permission
    from reasonix.config import paths, tomledit

    def persist(directory: str) -> None:
        tomledit.append_to_array(workspace / "reasonix.toml", "sandbox", "allow_write", directory)

    return permission.ScopeGate(
        roots=[str(r) for r in roots],
        protected=[str(paths.state_dir()), str(paths.home_dir())],
        approver=_scope_question(approver) if approver is not None else None,
        persist=persist,
    )


def _scope_question(approver: EventApprover) -> Callable[[Any], Any]:
    """Ask a write-scope question as a tool approval: once / session / always / deny.

    "Always" means "save into the project ``[sandbox].allow_write``".
    """
    from reasonix import permission

    answers = {
        permission.ApprovalChoice.ONCE: permission.ScopeChoice.ONCE,
        permission.ApprovalChoice.SESSION: permission.ScopeChoice.SESSION,
        permission.ApprovalChoice.ALWAYS: permission.ScopeChoice.PROJECT,
    }

    def ask(request: Any) -> Any:
        reason = request.justification + (f" — {request.warning}" if request.warning else "")
        choice = approver(
            permission.ApprovalRequest(
                tool_name="write scope",
                summary=f"make {request.path} writable",
                args={"path": request.path},
                choices=tuple(permission.ApprovalChoice),
                suggested_rule=f"[sandbox].allow_write += {request.path}",
                reason=reason,
            )
        )
        return answers.get(choice, permission.ScopeChoice.DENY)

    return ask


def _tool_context(
    cfg: Config,
    workspace: Path,
    session: Session,
    headless: bool,
    approver: EventApprover | None = None,
) -> ToolContext:
    from reasonix.config import paths
    from reasonix.permission.sandbox import SandboxSettings

    # [sandbox].workspace_root may widen or move the root the tools are confined to (CFG-10).
    workspace = Path(cfg.sandbox.workspace_root or workspace)
    if not workspace.is_dir():
        source = cfg.sources.get("sandbox.workspace_root", "")
        raise ConfigError(
            f"{workspace} is not a directory",
            file=source if source not in ("", "default", "flag") else None,
            key="sandbox.workspace_root",
        )
    roots = [workspace, *(Path(p) for p in cfg.sandbox.allow_write)]
    forbid = [Path(p) for p in cfg.sandbox.forbid_read]
    sandbox = SandboxSettings(
        cfg.sandbox.bash,
        workspace,
        roots,
        forbid,
        cfg.sandbox.network,
        # the agent's own state and config stay read-only even inside a write root
        read_only=[paths.state_dir(), paths.home_dir()],
    )
    return ToolContext(
        workspace=workspace,
        cwd=workspace,
        write_roots=roots,
        forbid_read=forbid,
        bash_timeout=cfg.tools.bash_timeout_seconds,
        sandbox=sandbox,
        session_id=session.id,
        state_dir=paths.state_dir(),
        config_dir=paths.home_dir(),
        headless=headless,
        # provider keys never reach the model's shell (a `printenv` would leak them)
        extra={
            "secret_env": sorted({p.api_key_env for p in cfg.providers if p.api_key_env}),
            "write_scope": _scope_gate(roots, workspace, None if headless else approver),
        },
    )


def _price(resolved: ResolvedModel) -> dict[str, Any] | None:
    from reasonix.config.presets import price_for

    own = resolved.provider.prices.get(resolved.model)
    if own:
        return dict(own)
    price = price_for(resolved.provider.name, resolved.model)
    return dataclasses.asdict(price) if price is not None else None


def build(args: argparse.Namespace, *, interactive: bool) -> RunSetup:
    """Build a ready run from config and flags (raises ConfigError/UsageError/SessionError)."""
    from reasonix import config as config_mod
    from reasonix.config import paths

    workspace = _workspace(args)
    ablate = _ablate(args)
    cfg = config_mod.load(workspace, _flags(args, workspace))
    resolved = cfg.default_resolved()  # its errors name the file that set default_model
    provider = _provider(resolved)
    registry = _registry(cfg, ablate)
    add_dirs = [Path(p) for p in cfg.sandbox.allow_write]
    meta = {"system": system_prompt(workspace, add_dirs), "model": resolved.ref}
    session, resumed = _session(args, workspace, meta)
    current = [session]  # the session the memory tools and the pager read (make_agent moves it)
    closers: list[Callable[[], None]] = []
    notices: list[str] = list(cfg.warnings)
    try:
        approver = EventApprover()
        gate = _gate(cfg, args, approver if interactive else None, workspace)
        ctx = _tool_context(cfg, workspace, session, not interactive, approver)
        ctx.extra.update(memory_extra(cfg.permissions.mode, approver if interactive else None))
        memory = Memory.for_workspace(workspace)
        for tool in controller_tools(memory, workspace, lambda: current[0], cfg.tools.enabled):
            registry.add(tool)
        pager = tool_result_capability(lambda: current[0])
        debug = getattr(args, "mcp_debug", None)
        closers += _start_plugins(
            cfg, registry, Path(ctx.workspace), notices, Path(debug) if debug else None, [pager]
        )
        instructions = instruction_block(load_instructions(paths.home_dir(), workspace, Path.cwd()))
        recaller = Recaller(memory)

        def make_agent(s: Session) -> Agent:
            system = str(s.meta.get("system") or meta["system"])  # stable across resumes
            current[0] = s
            return Agent(
                provider,
                registry,
                s,
                model=resolved.model,
                system=system,
                tool_ctx=dataclasses.replace(ctx, session_id=s.id),
                gate=gate,
                approver=approver,
                max_steps=cfg.agent.max_steps,
                temperature=cfg.agent.temperature,
                effort=cfg.agent.effort,
                instructions=instructions,
                context=_context(cfg, resolved, provider, system, registry, s),
                budget=_budget(resolved),
                recall=recaller.recall_suffix,
            )

        agent = make_agent(session)
    except BaseException:
        for fn in closers:
            with contextlib.suppress(Exception):
                fn()
        session.close()
        raise
    return RunSetup(
        cfg, resolved, workspace, session, agent, approver, _price(resolved), ablate, resumed,
        closers, make_agent, meta, notices,
    )  # fmt: skip


def _context(
    cfg: Config, resolved: ResolvedModel, provider: Any, system: str, reg: Registry, s: Session
) -> Any:
    """The session's context manager (compaction over the transcript's projection)."""
    from reasonix.agent.context import ContextManager
    from reasonix.provider.types import ToolSchema

    window = resolved.provider.context_window_for(resolved.model)
    tools = [ToolSchema(**t) for t in reg.schemas()]
    return ContextManager(
        provider, resolved.model, window, cfg.agent.compact_ratio, system, tools, s
    )


def _budget(resolved: ResolvedModel) -> OutputBudget:
    """The session's output budget (PROV-11…15, D10)."""
    from reasonix.provider.base import host_of

    p, model = resolved.provider, resolved.model
    return OutputBudget(
        p.max_output_tokens_for(model),
        kind=p.kind,
        host=host_of(p.request_url or p.chat_url or p.base_url),
        context_window=p.context_window_for(model),
    )


def _start_plugins(
    cfg: Config,
    registry: Registry,
    workspace: Path,
    notices: list[str],
    debug_log: Path | None = None,
    local: Sequence[LocalCapability] = (),
) -> list[Callable[[], None]]:
    """Start the configured MCP servers and add their tools; returns shutdown callbacks.

    Waits at most 3 s for servers (D21); slower ones stay reachable through the
    ``use_capability`` proxy, so the tool list never changes mid-session.
    ``use_capability`` is added even without servers when ``local`` capabilities
    (``session:tool_result``, CTX-5) need it.
    """
    if not any(s.enabled for s in cfg.mcp_servers):
        if local:
            registry.add(UseCapabilityTool(dict, local=local))
        return []
    from reasonix.config.expand import chain_lookup, environ_lookup
    from reasonix.plugin.mcp import McpManager
    from reasonix.plugin.mcp.oauth import auth_for, prune_store

    with contextlib.suppress(Exception):  # stale OAuth state is only tidied, never fatal
        prune_store({s.name: s.url for s in cfg.mcp_servers if s.url})
    lookup = chain_lookup(cfg.project_env, environ_lookup)
    mgr = McpManager(
        cfg.mcp_servers,
        workspace=workspace,
        env_lookup=lookup,
        startup_timeout=cfg.tools.mcp_startup_timeout_seconds,
        call_timeout=cfg.tools.mcp_call_timeout_seconds,
        auth_for=lambda server: auth_for(server, lookup=lookup),
        debug_log=debug_log,
        local=local,
    )
    try:
        mgr.start()
        mgr.wait_ready()
        for tool in mgr.tools():
            registry.add(tool)
    except BaseException:
        mgr.close()
        raise
    notices.extend(mgr.drain_notices())
    return [mgr.close]


def read_prompt(positional: str | None) -> str:
    """The task text: the positional PROMPT, else stdin when it is not a terminal."""
    if positional:
        return positional
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if text.strip():
            return text
    raise UsageError("no prompt: give PROMPT or pipe it on stdin")
