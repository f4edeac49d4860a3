"""The one composition root: :func:`build_runtime` turns options into a ready runtime.

config → resolved model → provider → tool Registry → Gate/policy → ToolContext →
session → MCP manager → memory/recall → context manager → Runner. Every
frontend (line chat, curses view, ``run``, ``serve``, ``acp``, Remote) and
every sub-agent spawn builds through here and then only consumes Runner
events; none of them assembles an agent itself.

The parent controller also gets memory (spec §3.6): the ``memory``,
``remember``, ``forget`` and ``history`` tools, ``use_capability`` with the
``session``/``tool_result`` pager (always present, MCP servers or not), and
auto-recall on each user turn. The registry is built once per runtime, so
these tools find the session in use through ``current`` (``/new`` moves it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix import idle
from reasonix.agent.coordinator import Host
from reasonix.agent.events import Runner
from reasonix.agent.execute import EventApprover
from reasonix.agent.instructions import instruction_block, load_instructions
from reasonix.agent.loop import Agent
from reasonix.agent.memory.wiring import (
    DeferredRecall,
    deferred_controller_tools,
    memory_extra,
    tool_result_capability,
)
from reasonix.agent.prompt import skills_update, system_prompt
from reasonix.agent.session import Session
from reasonix.agent.subagent.skills import skill_index
from reasonix.agent.turnrecorder import TurnRecorder
from reasonix.agent.window import ContextWindow
from reasonix.config.model import Config, ResolvedModel
from reasonix.errors import ReasonixError, UsageError
from reasonix.tool import Registry, ToolContext

from .coordination import (
    HostHolder,
    PlannerParts,
    build_host,
    first_turn,
    host_tools,
    planner_parts,
    planner_resolved,
)
from .options import RuntimeOptions
from .parts import (
    budget_for,
    build_provider,
    build_registry,
    checkpoints_for,
    context_for,
    hooks_for,
    price_for_model,
    run_budget_for,
    search_notice,
    warm_modules,
    window_for,
)
from .permissions import build_gate, escape_gate, tool_context
from .plugins import start_plugins
from .sessions import open_session
from .smallprompt import session_tools
from .subagents import attach_delegation, build_child_runtime, load_skills

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.cachebreak import CacheBreak

__all__ = ["Runtime", "build_runtime"]


class Runtime:
    """A ready runtime for one workspace: its session, Runner and what they were built from.

    Frontends read :attr:`runner` (the Runner protocol) and the descriptive
    attributes; the methods below are the only ways to change a live runtime
    (``/new``, ``/resume``, ``/model``, ``/effort``, the mode cycle). Call
    :meth:`close` when done: it stops plugins and releases the session lease.
    """

    def __init__(
        self,
        *,
        options: RuntimeOptions,
        config: Config,
        resolved: ResolvedModel,
        workspace: Path,
        provider: Any,
        registry: Registry,
        gate: Any,
        tool_ctx: ToolContext,
        approver: EventApprover,
        meta: dict[str, Any],
        instructions: str,
        recaller: DeferredRecall | None,
        current: list[Session],
        ablate: list[str],
        notices: list[str],
        window: ContextWindow | None = None,
        skill_index: str = "",
        holder: HostHolder | None = None,
        planner: PlannerParts | None = None,
        instruction_files: list[Any] | None = None,
    ) -> None:
        self.options, self.config, self.resolved = options, config, resolved
        self.workspace, self.provider, self.registry = workspace, provider, registry
        self.gate, self.tool_ctx, self.approver = gate, tool_ctx, approver
        self.meta, self.instructions, self.recaller = meta, instructions, recaller
        self.skill_index = skill_index  # rides in the first user turn after the instructions
        self.instruction_files = instruction_files or []  # named instead in a small window
        self._current = current
        self.ablate, self.notices = ablate, notices
        self.price: dict[str, Any] | None = price_for_model(resolved)
        # Configured and served context window (``/status``, ``doctor``, ``run --json``);
        # it belongs to the model server, so /new and /resume keep it.
        self.window: ContextWindow = window or ContextWindow(
            resolved.provider.context_window_for(resolved.model)
        )
        self.mcp: Any = None  # the McpManager when MCP servers are configured
        child = options.child is not None  # a sub-agent: no checkpoints, no prompt hooks
        self.checkpoints = None if child else checkpoints_for(workspace)
        if self.checkpoints is not None:
            tool_ctx.extra["checkpoints"] = TurnRecorder(self.checkpoints)
        self._transcripts: dict[str, Any] = {}  # session id -> its Claude-shaped copy (hooks)
        self._ended = False  # SessionEnd ran (close() is idempotent)
        self.hooks = hooks_for(config, workspace, tool_ctx, self._hook_fields)
        if self.hooks is not None:
            self.tool_ctx.extra["hooks"] = self.hooks
            approver.notify = self._notify
        self.closers: list[Callable[[], None]] = []
        self.resumed = False
        self.cache_breaks: list[CacheBreak] = []  # cache breaks taken (run --json)
        self._config_stamp: tuple[float, ...] | None = None
        self._seen_instructions = instructions
        self._mcp_names = {s.name for s in config.mcp_servers if s.enabled}
        self.delegation: Any = None  # boot.subagents.Wiring: the spawn primitive and skills
        self.narrowed: list[str] = []  # a sub-agent's removed tools ("tool: why")
        self.session: Session = current[0]
        self.planner = planner  # the dedicated planner's parts (None: one model)
        self._holder = holder or HostHolder()
        # issue 36: the run's budget; a sub-agent asks its parent's (boot/subagents.py)
        self.run_budget = run_budget_for(config, self.price, child)
        self.agent: Agent = self._make_agent(self.session)
        self._first = first_turn(options)
        self.host: Host = self._make_host()

    # -- what frontends read ---------------------------------------------------
    @property
    def runner(self) -> Runner:
        """The Runner frontends drive (LOOP-7: they see only this protocol).

        It is the host: routing, Plan mode and Goal around the executor Agent
        alone or around the :attr:`coordinator` (two models).
        """
        return self.host

    @property
    def coordinator(self) -> Any:
        """The planner/executor Coordinator, or None when one model runs alone."""
        return self.host.coordinator

    @property
    def arm(self) -> str:
        """The planner arm for ``--metrics``: ``dual``, ``single`` or ``ablated`` (D17)."""
        if self.planner is not None:
            return "dual"
        planned = self.config.agent.planner_model.strip()
        return "ablated" if planned and "planner" in self.ablate else "single"

    @property
    def telemetry(self) -> Any:
        """The session's request usage and counters (cost lines, ``--json``)."""
        return self.agent.telemetry

    @property
    def context(self) -> Any:
        """The context manager (``/compact``, ``--compact``, ``/status``), or None."""
        return self.agent.context

    def tool_names(self) -> list[str]:
        """The names of the tools the model sees, sorted."""
        return list(self.registry.names())

    @property
    def interactive(self) -> bool:
        """True when an approver answers Ask decisions (chat view, browser, editor)."""
        return bool(self.options.interactive)

    @property
    def mode(self) -> str:
        """The permission posture in force now (``ask``, ``auto``, ``plan`` …)."""
        return str(self.gate.policy.mode.value)

    # -- hooks -----------------------------------------------------------------------
    def _hook_fields(self) -> dict[str, Any]:
        """The fields every hook payload carries (read at call time: /new moves them)."""
        s = self._current[0]
        return {"session_id": s.id, "transcript_path": self._transcript(s),
                "permission_mode": self.mode}  # fmt: skip

    def _transcript(self, s: Session) -> str:
        """``transcript_path``: the session in Claude's JSONL shape, brought up to date."""
        from reasonix.agent.claude_transcript import ClaudeTranscript

        copy = self._transcripts.get(s.id)
        if copy is None:
            copy = self._transcripts[s.id] = ClaudeTranscript(s, str(self.workspace))
        try:
            return str(copy.sync())
        except OSError as exc:  # hooks still run; they get our own transcript instead
            if self.hooks is not None:
                self.hooks.report(f"the hook transcript {copy.path} could not be written: {exc}")
            return str(s.path)

    def _notify(self, message: str) -> None:
        if self.hooks is not None and self.hooks.has("Notification"):
            fields = {"message": message, "notification_type": "permission_prompt"}
            self.hooks.run("Notification", fields)

    def _pre_compact(self, trigger: str, focus: str = "") -> None:
        if self.hooks is not None and self.hooks.has("PreCompact"):  # focus: /compact FOCUS
            self.hooks.run("PreCompact", {"trigger": trigger, "custom_instructions": focus})
        if self.hooks is not None:  # SessionStart hooks with matcher "compact" run next turn
            self.agent.compacted = True

    def _session_end(self, reason: str) -> None:
        """SessionEnd hooks for the session that ends now (``/new``, ``/resume``, close)."""
        if self.hooks is not None and self.options.child is None and self.hooks.has("SessionEnd"):
            self.hooks.run("SessionEnd", {"reason": reason})

    # -- changing a live runtime ---------------------------------------------------
    def _make_agent(self, s: Session) -> Agent:
        system = str(s.meta.get("system") or self.meta["system"])  # stable across resumes
        self._current[0] = s
        cfg, resolved = self.config, self.resolved
        tools, note, instructions = session_tools(self, s, system)  # pinned (issue 37)
        if note and note not in self.notices:
            self.notices.append(note)
        context = context_for(
            cfg, resolved, self.provider, system, self.registry, s, self.window, tools
        )
        context.before_summary = self._pre_compact
        context.pins = self.pins
        agent = Agent(
            self.provider,
            self.registry,
            s,
            model=resolved.model,
            system=system,
            tool_ctx=self.tool_ctx.replace(session_id=s.id),
            gate=self.gate,
            approver=self.approver,
            max_steps=cfg.agent.max_steps,
            temperature=cfg.agent.temperature,
            effort=cfg.agent.effort,
            instructions="\n\n".join(p for p in (instructions, self.skill_index) if p),
            context=context,
            budget=budget_for(resolved, self.window),
            recall=self.recaller.recall_suffix if self.recaller is not None else None,
            hooks=self.hooks if self.options.child is None else None,  # SubagentStop instead
            tools=tools,
        )
        agent.turn_notices = self.drift
        # the user messages' texts, read until one holds the index (the others stay unread)
        agent.turn_prefix = skills_update(self.skill_index, agent.history.contents("user"))
        agent.provider_name = resolved.provider.name  # usage records price by provider + model
        if self.options.child is None and self.run_budget.active:
            agent.before_request = self.run_budget.check(
                lambda: self.agent.telemetry.total, lambda: self.price
            )
            agent.check_first_request = True
        return agent

    def _make_host(self) -> Host:
        first, self._first = self._first, None  # run flags apply to the first turn only
        host = build_host(
            agent=self.agent, session=self.session, workspace=self.workspace, cfg=self.config,
            gate=self.gate, approver=self.approver, interactive=self.interactive,
            tool_ctx=self.agent.tool_ctx, instructions=self.instructions, planner=self.planner,
            price=self.price, first=first,
            routing=self.options.provider is None and self.options.child is None,
        )  # fmt: skip
        self._holder.host = host
        return host

    def _switch_session(self, session: Session, resumed: bool) -> None:
        old = self.session
        self._session_end("other" if resumed else "clear")  # the old session, while current
        self.session = session
        try:
            self.agent = self._make_agent(session)
        except BaseException:
            session.close()
            self.session = old
            self._current[0] = old
            raise
        self.host.close()
        self.host = self._make_host()
        old.close()
        self.agent.start_source = "resume" if resumed else "clear"  # for SessionStart matchers
        self.resumed = resumed
        self.notices.extend(session.notices)

    def new_session(self) -> None:
        """Start a fresh session with the same setup (``/new``; the old one stays on disk)."""
        self._switch_session(Session.create(self.workspace, self.meta), False)

    def resume(self, path: Path) -> None:
        """Continue the session stored at ``path`` (``/resume``)."""
        if Path(path) == self.session.path:
            return
        self._switch_session(Session.open(Path(path)), True)

    def switch_model(self, ref: str) -> ResolvedModel:
        """Use another model from the next request on (``/model``); the session continues.

        The prompt cache of the old model does not carry over; the transcript does.
        """
        resolved = self.config.resolve_model(ref)
        provider = build_provider(resolved)
        if resolved.ref != self.resolved.ref:
            self._note_break("model", price_for_model(resolved))
        effort = self.agent.effort
        self.resolved, self.provider = resolved, provider
        self.window = window_for(resolved, provider)
        self.price = price_for_model(resolved)
        self.meta["model"] = resolved.ref
        telemetry = self.agent.telemetry
        pending = self.agent.start_source, self.agent.compacted
        self.agent = self._make_agent(self.session)
        # the session goes on: SessionStart fires as it would have, not once more
        self.agent.start_source, self.agent.compacted = pending
        self.agent.effort = effort
        self.agent.telemetry = telemetry  # the session's cost keeps adding up
        self.host.close()
        self.host = self._make_host()  # the planner, if any, stays; its session reopens
        return resolved

    def set_effort(self, level: str) -> None:
        """Change the reasoning-effort hint from the next request on (``/effort``)."""
        if level != self.agent.effort:
            self._note_break("effort", self.price)
        self.config.agent.effort = level
        self.agent.effort = level

    def cache_break(self, reason: str, price: dict[str, Any] | None = None) -> CacheBreak:
        """The forecast of what ``reason`` would cost in lost prompt cache now."""
        from reasonix.agent.cachebreak import cached_prompt_tokens, forecast

        ctx = self.agent.context
        estimate = int(ctx.estimate()) if ctx is not None else 0
        tokens = cached_prompt_tokens(self.agent.telemetry.per_request, estimate)
        return forecast(reason, tokens, self.price if price is None else price)

    # -- pins: items every later summary carries verbatim ------------------------------------
    def pins(self) -> list[str]:
        """The session's pinned items (the newest ``pins`` record; they survive resume)."""
        for rec in reversed(list(self.session.iter_type("pins"))):  # no walk over the others
            if isinstance(rec.get("items"), list):
                return [str(i) for i in rec["items"]]
        return []

    def pin(self, text: str) -> list[str]:
        """Pin ``text`` (``/pin``); returns the pins now in force."""
        items = self.pins()
        text = " ".join(text.split())
        if text and text not in items:
            items.append(text)
            self.session.append({"type": "pins", "items": items})
        return items

    def unpin(self, number: int) -> str:
        """Remove pin ``number`` (1-based, as ``/pins`` lists them); returns its text."""
        items = self.pins()
        if not 1 <= number <= len(items):
            raise UsageError(f"no pin {number}: there are {len(items)}")
        gone = items.pop(number - 1)
        self.session.append({"type": "pins", "items": items})
        return gone

    def drift(self) -> list[str]:
        """Changes since this session started that a reload would pay for in cache (once each).

        The loaded instructions stay in the first user turn, so editing REASONIX.md or
        AGENTS.md does not change this session; the notice says what picking it up costs.
        MCP servers added or removed in the config take effect in a new session likewise.
        """
        from reasonix import config as config_mod
        from reasonix.agent.instructions import instruction_block, load_instructions
        from reasonix.config import paths

        out: list[str] = []
        files = [paths.project_config_path(self.workspace), paths.project_mcp_path(self.workspace),
                 paths.user_config_path()]  # fmt: skip
        stamp = tuple(_mtime(p) for p in files)
        if self._config_stamp is None:
            self._config_stamp = stamp
        if self.instructions and any(m.role.value == "user" for m in self.agent.history):
            now = instruction_block(load_instructions(
                paths.home_dir(), self.workspace, Path.cwd(), user_home=Path.home(),
                trusted=self.config.trust.trusted,
            ))  # fmt: skip
            if now != self.instructions and now != self._seen_instructions:
                self._seen_instructions = now
                out.append(f"the instruction files changed since this session loaded them; it "
                           f"keeps the loaded text. A new session (/new) picks them up: "
                           f"{self.cache_break('instructions').text()}")  # fmt: skip
        if stamp != self._config_stamp:
            self._config_stamp = stamp
            try:
                trusted = self.config.trust.trusted
                loaded = config_mod.load(self.workspace, trust=trusted)
                names = {s.name for s in loaded.mcp_servers if s.enabled}
            except ReasonixError:
                names = self._mcp_names
            if names != self._mcp_names:
                self._mcp_names = names
                out.append(f"the MCP servers changed in the config; this session keeps its "
                           f"tools. A new session (/new) uses them: "
                           f"{self.cache_break('mcp').text()}")  # fmt: skip
        return out

    def _note_break(self, reason: str, price: dict[str, Any] | None) -> None:
        """Record a cache break that is about to happen (``run --json`` ``cache_breaks``)."""
        got = self.cache_break(reason, price)
        if got.tokens > 0 and self.agent.telemetry.per_request:
            self.cache_breaks.append(got)

    def set_mode(self, mode: str) -> str:
        """Change the permission posture (Shift-Tab, ``/mode``); returns the mode in force."""
        policy = self.gate.policy.with_mode(mode)
        if policy.mode.value != "plan":  # leaving the Plan posture leaves Plan mode too
            policy = policy.with_planning(False)
        self.gate.policy = policy
        return self.mode

    def checkpoint_notices(self) -> list[str]:
        """What the checkpoint store has to say once the last turn's end is recorded (it is
        recorded after the answer: a damaged store found then). One-turn frontends ask
        after their turn; the next turn of a chat starts with them anyway."""
        recorder = self.tool_ctx.extra.get("checkpoints")
        return recorder.settle() if recorder is not None else []

    def close(self, reason: str = "other") -> None:
        """Run SessionEnd hooks, stop plugins and release the session lease (idempotent).

        ``reason`` is Claude Code's SessionEnd reason (``prompt_input_exit`` when
        a person left the chat, ``other`` otherwise).
        """
        if not self._ended:
            self._ended = True
            with contextlib.suppress(Exception):  # a hook never keeps the process from ending
                self._session_end(reason)
        for fn in reversed(self.closers):
            with contextlib.suppress(Exception):
                fn()
        self.closers.clear()
        self.host.close()
        self.session.close()


def build_runtime(options: RuntimeOptions) -> Runtime:
    """Build a ready runtime (raises ConfigError/UsageError/SessionError on bad input)."""
    from reasonix import config as config_mod
    from reasonix.config import paths

    if options.child is not None:  # a sub-agent (the spawn primitive's request)
        return build_child_runtime(options)
    workspace = options.resolved_workspace()
    ablate = options.arms()
    options.check_routing()
    cfg = config_mod.load(workspace, options.config_flags(workspace), trust=options.trust)
    if options.mcp_servers:  # a frontend's own servers (an editor's mcpServers) win by name
        from reasonix.config.mcp import merge_servers

        cfg.mcp_servers = merge_servers(cfg.mcp_servers, list(options.mcp_servers))
    resolved = cfg.default_resolved()  # its errors name the file that set default_model
    provider = options.provider or build_provider(resolved)
    # A local server is asked for its window while the rest is built; an injected
    # provider (replay) is no server to ask.
    window = window_for(resolved, provider) if options.provider is None else None
    # COORD-1: a planner of a different model, not ablated; a ready provider (replay)
    # replays the executor's recorded turns verbatim, so it runs alone and routes nothing
    planned = None if options.provider is not None else planner_resolved(cfg, resolved, ablate)
    registry = build_registry(cfg, ablate)
    add_dirs = [Path(p) for p in cfg.sandbox.allow_write]
    meta = {"system": system_prompt(workspace, add_dirs), "model": resolved.ref}
    session, resumed = open_session(options, workspace, meta)
    current = [session]  # the session the memory tools and the pager read
    built: list[Runtime] = []  # the runtime, once built (the delegation counters add up there)
    mcp: Any = None
    notices: list[str] = [*cfg.warnings, *session.notices]
    if options.provider is None:  # an injected provider (replay) sends nothing anywhere
        notices += search_notice(resolved, provider)
    interactive = options.interactive
    try:
        approver = EventApprover()
        gate = build_gate(
            cfg, options.allowed_tools, approver if interactive else None, workspace, notices
        )
        if options.plan_mode():  # Plan mode is independent of the posture (PERM-15)
            gate.policy = gate.policy.with_planning(True)
        ctx = tool_context(cfg, workspace, session, not interactive, approver, options.ports)
        ctx.extra["sandbox_escape"] = escape_gate(gate, approver if interactive else None)
        ctx.extra.update(memory_extra(cfg.permissions.mode, approver if interactive else None))
        memory = _memory_of(workspace)  # the stores load when a memory tool or recall needs them
        for tool in deferred_controller_tools(memory, workspace, lambda: current[0],
                                              cfg.tools.enabled):  # fmt: skip
            registry.add(tool)
        holder = HostHolder()
        for tool in host_tools(holder, cfg.tools.enabled):  # exit_plan_mode, update_goal
            registry.add(tool)
        pager = tool_result_capability(lambda: current[0])
        debug = Path(options.mcp_debug) if options.mcp_debug else None
        mcp = start_plugins(
            cfg, registry, Path(ctx.workspace), notices, debug, [pager],
            window_tokens=resolved.provider.context_window_for(resolved.model),
        )  # fmt: skip
        files = load_instructions(
            paths.home_dir(), workspace, Path.cwd(), user_home=Path.home(),
            trusted=cfg.trust.trusted, notices=notices,
        )  # fmt: skip
        instructions = instruction_block(files)
        planner = None
        if planned is not None:
            planner = planner_parts(cfg, planned, registry, gate, mcp, workspace, add_dirs)
        skills = load_skills(workspace)
        notices += skills.notices
        wiring = attach_delegation(
            cfg, options, registry, ctx, ablate=ablate, skills=skills,
            telemetry=lambda: built[0].telemetry, mcp=mcp,
        )  # fmt: skip
        runtime = Runtime(
            options=options, config=cfg, resolved=resolved, workspace=workspace,
            provider=provider, registry=registry, gate=gate, tool_ctx=ctx, approver=approver,
            meta=meta, instructions=instructions, current=current,
            recaller=DeferredRecall(memory, workspace),
            ablate=ablate, notices=notices, window=window, holder=holder,
            skill_index=skill_index(skills.skills),
            planner=planner, instruction_files=files,
        )  # fmt: skip
    except BaseException:
        if mcp is not None:
            with contextlib.suppress(Exception):
                mcp.close()
        session.close()
        raise
    runtime.resumed = resumed
    old_model = str(session.meta.get("model") or "")
    if resumed and old_model and old_model != resolved.ref:
        # the transcript was cached under another model: this run starts cold
        ctx = runtime.context
        tokens = int(ctx.estimate()) if ctx is not None else 0
        if tokens:
            from reasonix.agent.cachebreak import forecast

            runtime.cache_breaks.append(forecast("model", tokens, runtime.price))
    built.append(runtime)
    # imported while the first answers are awaited (reasonix.idle)
    idle.offer(warm_modules(registry, checkpoints=runtime.checkpoints is not None))
    wiring.bind(runtime)
    runtime.delegation = wiring
    if mcp is not None:
        runtime.mcp = mcp
        runtime.closers.append(mcp.close)
    return runtime


def _memory_of(workspace: Path) -> Callable[[], Any]:
    """The workspace's memory stores, made on the first call."""
    made: list[Any] = []

    def memory() -> Any:
        if not made:
            from reasonix.agent.memory.catalog import Memory

            made.append(Memory.for_workspace(workspace))
        return made[0]

    return memory


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
