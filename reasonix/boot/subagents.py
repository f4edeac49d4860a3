"""Sub-agents in the composition root: a child is "a runtime with these options".

* :func:`attach_delegation` gives a runtime (top-level or child) its spawn
  primitive (:class:`reasonix.agent.subagent.spawn.TaskTool`) and the tools
  over it; the top-level runtime also creates the tree's shared state
  (scheduler, limits, counters, skills, the MCP manager).
* :func:`child_factory` is the :class:`~reasonix.agent.ports.ChildFactory`
  port the primitive calls: it maps a resolved ``ChildRequest`` onto
  ``RuntimeOptions(child=request)`` and calls ``build_runtime``.
* :func:`build_child_runtime` is what ``build_runtime`` does for such
  options: the request's system prompt and nothing else composed in, no
  instruction files, no memory, no prompt hooks, no checkpoints, the tool
  registry narrowed by the primitive's decisions, the shared MCP connections
  behind the child's own ``use_capability`` frontend, and a transcript under
  ``<sessions>/subagents/`` (a temporary one when ephemeral).
* :func:`cli_delegation` is the primitive for ``reasonix subagent run|try``,
  which have no parent conversation.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.session import Session, read_records
from reasonix.agent.spend import combine
from reasonix.agent.subagent.skills import SkillSet, discover
from reasonix.agent.subagent.spec import SchedulerPolicy, check_limits
from reasonix.agent.telemetry import Telemetry
from reasonix.cancel import Cancel
from reasonix.config.model import Config
from reasonix.errors import ConfigError, SessionError, UsageError
from reasonix.tool import Registry, ToolContext

from .options import RuntimeOptions
from .parts import SUBAGENT_TOOLS

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.ports import ChildFactory, ChildRuntime
    from reasonix.agent.subagent.allowance import Pool
    from reasonix.agent.subagent.request import ChildRequest
    from reasonix.agent.subagent.spawn import ModelChoice, SessionDelegation, TaskTool
    from reasonix.command.registry import CommandSource

    from .runtime import Runtime

__all__ = [
    "Wiring",
    "attach_delegation",
    "build_child_runtime",
    "child_factory",
    "cli_delegation",
    "load_skills",
    "profile_commands",
    "run_profile_command",
]


def load_skills(workspace: Path) -> SkillSet:
    """The workspace's skills: project, Claude project, global, Claude user, then the
    Claude Code agent files (``.claude/agents``, ``<home>/agents``, ``~/.claude/agents``)
    as profiles, then the built-ins (an agent of a built-in's name replaces it)."""
    from reasonix.agent.subagent.agents import load_agents
    from reasonix.agent.subagent.profile import builtin_skills
    from reasonix.config.paths import home_dir

    home, user_home = home_dir(), Path.home()
    agents, notices = load_agents(workspace, home, user_home)
    found = discover(workspace, home, user_home, [*agents, *builtin_skills()])
    found.notices += notices
    for agent in agents:
        winner = found.get(agent.name)
        if winner is not None and winner is not agent:  # a skill of that name came first
            found.notices.append(
                f"{agent.path}: agent {agent.name!r} skipped: the skill {winner.path} has its name"
            )
    return found


def _policy(cfg: Config) -> SchedulerPolicy:
    a = cfg.agent
    try:
        return SchedulerPolicy(a.max_subagent_concurrency, a.max_parallel_writers)
    except ConfigError as err:
        raise _sourced(cfg, err) from None


def _check_policy(cfg: Config) -> None:
    """What :func:`_policy` raises for a bad ``[agent]`` limit, without making the policy."""
    a = cfg.agent
    try:
        check_limits(a.max_subagent_concurrency, a.max_parallel_writers)
    except ConfigError as err:
        raise _sourced(cfg, err) from None


def _sourced(cfg: Config, err: ConfigError) -> ConfigError:
    """``err`` naming the config file that set its key."""
    source = cfg.sources.get(err.key or "", "")
    file = source if source not in ("", "default", "flag") else None
    return ConfigError(err.detail, file=file, key=err.key)


def _models(cfg: Config) -> ModelChoice:
    from reasonix.agent.subagent.spawn import ModelChoice

    a = cfg.agent
    return ModelChoice(
        a.subagent_model, a.subagent_effort, dict(a.subagent_models), dict(a.subagent_efforts)
    )


def _pool(cfg: Config) -> Pool:
    """Per-spawn budgets from ``[agent] subagent_max_*`` and the session's spawn cap."""
    from reasonix.agent.subagent.allowance import Allowance, Pool

    a = cfg.agent
    defaults = Allowance(
        a.subagent_max_tokens, a.subagent_max_cost, a.subagent_max_turns,
        a.subagent_max_minutes * 60,
    )  # fmt: skip
    return Pool(defaults, a.max_subagent_spawns)


def shared_state(
    cfg: Config, skills: SkillSet, telemetry: Callable[[], Any], mcp: Any
) -> SessionDelegation:
    """The state one tree of runtimes shares (validates the scheduler limits)."""
    from reasonix.agent.subagent.scheduler import Scheduler
    from reasonix.agent.subagent.spawn import SessionDelegation

    return SessionDelegation(
        Scheduler(_policy(cfg)),
        cfg.agent.max_subagent_depth,
        telemetry,
        skills,
        _models(cfg),
        mcp,
        pool=_pool(cfg),
    )


def _tool_names(cfg: Config, ablate: list[str], read_only: bool) -> list[str]:
    from reasonix.agent.subagent.tool_schemas import DELEGATION_TOOLS, READ_ONLY_DELEGATION

    names = list(READ_ONLY_DELEGATION if read_only else DELEGATION_TOOLS)
    if "subagent" in ablate or "all" in ablate:  # SUB-28: run_skill stays
        names = [n for n in names if n not in SUBAGENT_TOOLS]
    if cfg.tools.enabled:
        names = [n for n in names if n in cfg.tools.enabled]
    return names


class Wiring:
    """A runtime's primitive, bound to the runtime once it exists (late: /new, /model).

    A top-level runtime's primitive (scheduler, shared state, the spawn code) is
    made when a delegation tool is first used, not before the first request.
    """

    def __init__(
        self, skills: SkillSet, make: Callable[[], tuple[SessionDelegation, TaskTool]]
    ) -> None:
        self._skills, self._make = skills, make
        self._built: tuple[SessionDelegation, TaskTool] | None = None
        self._lock = threading.RLock()
        self.runtime: Runtime | None = None
        # a child's: the budget check it inherited from its parent (a goal's, the run's),
        # which its own children ask too; its own grant's check is not theirs (they hold
        # part of that grant, so it would count them as spent)
        self.inherited: Callable[..., str] | None = None

    @property
    def skills(self) -> SkillSet:
        """The skills this tree was started with."""
        return self._skills

    @property
    def shared(self) -> SessionDelegation:
        """The state the tree shares (made on first use)."""
        return self._get()[0]

    @property
    def prim(self) -> TaskTool:
        """The spawn primitive (made on first use)."""
        return self._get()[1]

    def _get(self) -> tuple[SessionDelegation, TaskTool]:
        with self._lock:
            if self._built is None:
                self._built = self._make()
                if self.runtime is not None:
                    self._point(self.runtime)
            return self._built

    def bind(self, runtime: Runtime) -> None:
        """Point the primitive at the live runtime (session, model, approvals, factory)."""
        with self._lock:
            self.runtime = runtime
            if self._built is not None:
                self._point(runtime)

    def _point(self, runtime: Runtime) -> None:
        prim = self._built[1] if self._built is not None else None
        if prim is None:
            return
        prim.session_id = lambda: runtime.session.id
        prim.default_model = lambda: runtime.resolved.ref
        prim.default_effort = lambda: str(runtime.agent.effort or "")
        prim.ask = runtime.approver if runtime.interactive else None
        child = runtime.options.child is not None
        prim.factory = child_factory(
            lambda: runtime.options,
            lambda: runtime.mode,
            lambda: self.inherited if child else runtime.agent.before_request,
        )
        # progress events join the running turn's event queue (the approver's sink)
        prim.emit = lambda: runtime.approver.emit
        if runtime.options.child is None and self._built is not None:
            # the run's budget is what the tree's sub-agents reserve theirs from
            self._built[0].pool.root = lambda: budget_left(runtime)


def budget_left(runtime: Runtime) -> tuple[float | None, float | None, float | None]:
    """The top-level run's budget left (tokens, cost, deadline); None where unlimited."""
    budget = runtime.run_budget
    if not budget.active:
        return None, None, None
    return budget.left(runtime.telemetry.total, runtime.price)


def _unbound(request: ChildRequest) -> ChildRuntime:
    raise SessionError("the runtime is not ready to start sub-agents yet")


def attach_delegation(
    cfg: Config,
    options: RuntimeOptions,
    registry: Registry,
    ctx: ToolContext,
    *,
    ablate: list[str],
    skills: SkillSet | None,
    telemetry: Callable[[], Any],
    mcp: Any,
) -> Wiring:
    """Add the delegation tools to ``registry`` and return the primitive behind them.

    A top-level runtime passes its skills and creates the shared state; a
    child reuses its request's shared state, depth, lineage and grant.
    """
    req = options.child
    roots = [Path(p) for p in ctx.write_roots]
    names = _tool_names(cfg, ablate, req is not None and req.narrowing.read_only)
    ceiling = req.narrowing.allowed_tools if req is not None else None
    if ceiling is not None:  # a profile's allowed-tools caps its delegation tools too
        names = [n for n in names if n in ceiling]
    if req is None:
        assert skills is not None
        _check_policy(cfg)  # a bad [agent] limit is a config error now, before any request

        def make() -> tuple[SessionDelegation, TaskTool]:
            from reasonix.agent.subagent.spawn import TaskTool

            shared = shared_state(cfg, skills, telemetry, mcp)
            return shared, TaskTool(shared, _unbound, workspace=Path(ctx.workspace), roots=roots)

        wiring = Wiring(skills, make)
        for tool in _deferred_tools(wiring, names):
            registry.add(tool)
        return wiring
    from reasonix.agent.subagent.spawn import TaskTool

    shared = req.shared
    prim = TaskTool(
        shared, _unbound, workspace=Path(ctx.workspace), roots=roots, depth=req.depth,
        lineage=req.lineage, read_only=req.narrowing.read_only, claim=req.narrowing.claim,
        grant=req.grant,
    )  # fmt: skip
    wiring = Wiring(shared.skills, lambda: (shared, prim))
    wiring.shared  # noqa: B018 - a child's primitive exists from the start (bind() points it)
    from reasonix.agent.subagent.tools import delegation_tools

    for tool in delegation_tools(prim, shared.skills, names):
        registry.add(tool)
    return wiring


def _deferred_tools(wiring: Wiring, names: list[str]) -> list[Any]:
    """The delegation tools as declarations; the spawn code loads when one is used."""
    from reasonix.agent.subagent.tool_schemas import DESCRIPTIONS, READ_ONLY, SCHEMAS
    from reasonix.tool import DeferredTool

    def maker(name: str) -> Callable[[], Any]:
        def make() -> Any:
            from reasonix.agent.subagent.tools import delegation_tools

            return delegation_tools(wiring.prim, wiring.skills, [name])[0]

        return make

    return [
        DeferredTool(
            name,
            DESCRIPTIONS[name],
            SCHEMAS[name],
            maker(name),
            read_only=name in READ_ONLY,
            hints=name == "run_skill",
        )
        for name in names
    ]


def child_factory(
    options: Callable[[], RuntimeOptions],
    mode: Callable[[], str],
    budget: Callable[[], Callable[..., str] | None] | None = None,
) -> ChildFactory:
    """The ChildFactory port: the parent's run flags + the request → ``build_runtime``.

    ``budget`` gives the parent agent's budget check of the moment (a goal's, during
    a goal turn): the child asks it before each of its own requests, counting its own
    tokens too, so a sub-agent cannot spend past the goal's budget either.
    """

    def make(request: ChildRequest) -> Runtime:
        from .runtime import build_runtime

        base = options()
        if base.provider is not None:
            raise ConfigError("sub-agents do not run while a recording is replayed")
        child = RuntimeOptions(
            workspace=request.workspace,
            model=request.model or None,
            effort=request.effort or None,
            max_steps=request.max_steps or base.max_steps,
            add_dirs=list(base.add_dirs),
            allowed_tools=list(base.allowed_tools),
            permission_mode=mode(),  # the parent's posture now (a cycled mode included)
            ablate=base.ablate,
            interactive=request.interactive,
            overrides=dict(base.overrides),
            trust=base.trust,  # the parent's answer for this run (--trust, a yes just given)
            child=request,
        )
        rt = build_runtime(child)
        check = budget() if budget is not None else None
        spent_by = rt.agent.telemetry
        parent_check: Callable[..., str] | None = None
        if check is not None:

            def child_check(extra_tokens: int = 0) -> str:
                own = spent_by.total
                return check(extra_tokens=own.input_tokens + own.output_tokens)

            parent_check = child_check
        grant = request.grant
        if grant is not None:  # its own budget, reserved from its parent's (issue 36)
            try:
                grant.attach(_probe(spent_by, rt.price), rt.price is not None)
            except BaseException:
                rt.close()
                raise
            rt.agent.check_first_request = True  # nothing is sent once the budget is spent
        rt.agent.before_request = combine(grant.check if grant is not None else None, parent_check)
        if rt.delegation is not None:
            rt.delegation.inherited = parent_check
        return rt

    return make


def _probe(telemetry: Telemetry, price: dict[str, Any] | None) -> Callable[[], Any]:
    """A child's own spend so far: (tokens, cost or None when unpriced, requests)."""
    from reasonix.agent.telemetry import estimate_cost

    def probe() -> tuple[int, float | None, int]:
        total = telemetry.total
        cost = estimate_cost(total, price)
        amount = cost.amount if cost is not None else None
        return total.input_tokens + total.output_tokens, amount, len(telemetry.per_request)

    return probe


def _child_session(req: ChildRequest, workspace: Path, meta: dict[str, Any]) -> Session:
    from reasonix.config.paths import sessions_dir

    if req.ephemeral:
        import tempfile  # here only: it imports shutil and random

        root = Path(tempfile.mkdtemp(prefix="reasonix-subagent-"))
        return Session.create(workspace, meta, root=root)
    root = sessions_dir(workspace) / "subagents"
    prior = req.continue_from or req.fork_from
    if not prior:
        return Session.create(workspace, meta, root=root)
    name = Path(prior).name.removesuffix(".jsonl")
    path = root / f"{name}.jsonl"
    if not path.is_file():
        raise SessionError(f"no sub-agent transcript {prior!r} under {root}")
    if req.continue_from:
        return Session.open(path)
    records = read_records(path)  # fork: a copy continues, the source stays as it was
    old = next((r for r in records if r.get("type") == "meta"), {})
    keep = {k: v for k, v in old.items() if k not in ("type", "id", "version", "created")}
    copy = Session.create(workspace, {**keep, "forked_from": name}, root=root)
    for rec in records:
        if rec.get("type") != "meta":
            copy.append(rec)
    copy.sync()
    return copy


def build_child_runtime(options: RuntimeOptions) -> Runtime:
    """``build_runtime`` for ``options.child`` (see the module docstring)."""
    from reasonix import config as config_mod
    from reasonix.agent.memory.wiring import tool_result_capability
    from reasonix.agent.subagent.completion import complete_subtask_tool
    from reasonix.agent.subagent.scope import mcp_filter
    from reasonix.plugin.mcp.tools import UseCapabilityTool

    from .parts import build_provider, build_registry
    from .permissions import build_gate, tool_context
    from .runtime import Runtime

    req = options.child
    assert req is not None
    workspace = options.resolved_workspace()
    ablate = options.arms()
    cfg = config_mod.load(
        workspace, options.config_flags(workspace), migrate=False, trust=options.trust
    )
    resolved = cfg.default_resolved()
    provider = build_provider(resolved)
    registry = build_registry(cfg, ablate)
    lineage = {"profile": req.profile, "depth": req.depth, "parent_session": req.parent_session,
               "parent_call": req.parent_call}  # fmt: skip
    meta = {"system": req.system, "model": resolved.ref, "subagent": lineage}
    session = _child_session(req, workspace, meta)
    from reasonix.agent.execute import EventApprover
    from reasonix.agent.subagent.scope import narrow

    try:
        approver = EventApprover()
        gate = build_gate(
            cfg, options.allowed_tools, approver if req.interactive else None, workspace
        )
        ctx = tool_context(cfg, workspace, session, not req.interactive, approver)
        if req.writer:
            registry.add(complete_subtask_tool())
        pager = tool_result_capability(lambda: session)  # its own results, nobody else's
        shared_mcp = req.shared.mcp
        allow = mcp_filter(req.mcp_strict)
        if shared_mcp is not None:  # SUB-26: the session's connections, this child's frontend
            registry.add(shared_mcp.capability_tool(allow, strict=req.mcp_strict, local=[pager]))
        else:
            registry.add(UseCapabilityTool(dict, allow=allow, local=[pager]))
        removed = narrow(registry, ctx, req.narrowing)
        wiring = attach_delegation(
            cfg, options, registry, ctx, ablate=ablate, skills=None,
            telemetry=lambda: None, mcp=shared_mcp,
        )  # fmt: skip
        runtime = Runtime(
            options=options, config=cfg, resolved=resolved, workspace=workspace,
            provider=provider, registry=registry, gate=gate, tool_ctx=ctx, approver=approver,
            meta=meta, instructions="", recaller=None, current=[session], ablate=ablate,
            notices=list(cfg.warnings),
        )  # fmt: skip
    except BaseException:
        _discard(session, req.ephemeral)
        raise
    runtime.narrowed = removed
    wiring.bind(runtime)
    runtime.delegation = wiring
    if req.ephemeral:
        runtime.closers.append(lambda: _remove_dir(session.path.parent))
    return runtime


def _discard(session: Session, ephemeral: bool) -> None:
    session.close()
    if ephemeral:
        _remove_dir(session.path.parent)


def _remove_dir(path: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        shutil.rmtree(path)


def cli_delegation(options: RuntimeOptions) -> tuple[TaskTool, Telemetry, Config, Any]:
    """The primitive for ``reasonix subagent run|try``: no parent conversation, no session.

    Returns the primitive, the telemetry its counters add up in, the config
    and the hook runner (SubagentStop fires when the child ends).
    """
    from reasonix import config as config_mod
    from reasonix.agent.subagent.spawn import TaskTool

    from .parts import hooks_for
    from .permissions import tool_context

    workspace = options.resolved_workspace()
    cfg = config_mod.load(workspace, options.config_flags(workspace), trust=options.trust)
    resolved = cfg.default_resolved()
    skills = load_skills(workspace)
    telemetry = Telemetry()
    shared = shared_state(cfg, skills, lambda: telemetry, None)
    roots = [workspace, *(Path(p) for p in cfg.sandbox.allow_write)]
    prim = TaskTool(shared, _unbound, workspace=workspace, roots=roots)
    prim.default_model = lambda: resolved.ref
    prim.default_effort = lambda: cfg.agent.effort
    mode = options.mode() or cfg.permissions.mode
    prim.factory = child_factory(lambda: options, lambda: mode)
    hooks = None
    if cfg.hooks:
        from typing import cast  # a delegation command line: not a run's start

        fake = tool_context(cfg, workspace, cast(Session, _NoSession()), True)
        hooks = hooks_for(cfg, workspace, fake, lambda: {"session_id": "", "permission_mode": mode})
    return prim, telemetry, cfg, hooks


class _NoSession:
    """A session stand-in for the tool context of a command without a conversation."""

    id = ""


def run_profile_command(rt: Runtime, name: str, task: str, cancel: Cancel) -> str:
    """``/<profile> task``: one child through the primitive; the exchange joins the chat."""
    from reasonix.agent.subagent.profile import profile_from_skill
    from reasonix.agent.subagent.spec import (
        CapabilityGrant,
        ContextRequest,
        ProfileExecSpec,
        TaskSpec,
    )
    from reasonix.provider.types import Message, Role

    wiring = rt.delegation
    skill = wiring.skills.get(name) if wiring is not None else None
    if skill is None or skill.run_as != "subagent":
        raise UsageError(f"/{name} is not a sub-agent profile")
    if not task.strip():
        raise UsageError(f"/{name} needs a task: /{name} TASK")
    profile = profile_from_skill(skill)
    spec = ProfileExecSpec(
        profile, TaskSpec(task.strip()), CapabilityGrant(read_only=profile.read_only),
        ContextRequest(), "command",
    )  # fmt: skip
    # outside a turn nobody can answer the child's questions: they fail closed
    outcome = wiring.prim.run_profile_spec(spec, cancel=cancel, hooks=rt.hooks, ask=False)
    text = str(outcome.text)
    # the parent keeps the task and the child's result, not its working context
    for message in (Message(Role.USER, f"/{name} {task.strip()}"), Message(Role.ASSISTANT, text)):
        rt.agent.history.append(message)
        rt.session.append_message(message)
    return text


def profile_commands(rt: Runtime, run: Callable[[str, str], str]) -> CommandSource:
    """The command source of ``/<profile> task`` for every profile (manual ones too)."""
    from reasonix.command.api import CommandResult
    from reasonix.command.registry import Command

    def source(notices: list[str]) -> list[Command]:
        wiring = rt.delegation
        if wiring is None:
            return []
        out = []
        for skill in wiring.skills.profiles():

            def handler(args: str, name: str = skill.name) -> CommandResult:
                return CommandResult(text=run(name, args))

            desc = f"sub-agent: {skill.description}" if skill.description else "sub-agent"
            out.append(Command(skill.name, desc, "profile", handler, "TASK", skill.path))
        return out

    return source
