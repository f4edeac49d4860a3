"""The one construction primitive: :meth:`TaskTool.run_profile_spec` (spec §3.15, SUB-25).

Every entry point — ``task``, ``read_only_task``, ``parallel_tasks``,
``fleet``, ``run_skill`` for a sub-agent skill, ``/<profile> task`` in the
chat, ``reasonix subagent run|try`` — compiles its request to a
:class:`~.spec.ProfileExecSpec` and calls this method. It is the only place
that resolves depth, the tool scope, permissions and sandbox (through the
child's narrowing), the write claim, the scheduler slot, the MCP frontend,
the transcript and capsule, the evidence ledger and the completion contract;
``tests/agent/test_subagent_boundary.py`` fails on any other caller of the
child factory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from reasonix.cancel import Cancel
from reasonix.errors import ReasonixError, ToolError
from reasonix.tool import canonical_json

from ..events import ApprovalRequested, Done, Error, Notice, SubagentProgress, UsageReport
from ..ports import ChildFactory, ChildRuntime
from .allowance import Allowance, Grant, Pool
from .capsule import ContextCapsule, digest, write_sidecar
from .claims import WriteClaim, resolve_claim
from .completion import COMPLETION_CONTRACT, Verdict, adjudicate, render, run_verdict
from .ledger import Ledger
from .profile import DEFAULT_READ_ONLY_TASK_PROMPT, DEFAULT_TASK_PROMPT
from .progress import Emit, ProgressReporter
from .request import ChildRequest
from .scheduler import Scheduler
from .scope import Narrowing
from .skills import SkillSet
from .spec import ProfileExecSpec

__all__ = ["ChildOutcome", "ModelChoice", "SessionDelegation", "TaskTool"]

from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, field, replace

if TYPE_CHECKING:
    from typing import Any

    Ask = Callable[[Any], Any]  # an approval request -> the human's choice (None: deny)


@dataclass(frozen=True)
class ModelChoice:
    """The ``[agent]`` keys of SUB-6 (model and effort precedence)."""

    subagent_model: str = ""
    subagent_effort: str = ""
    subagent_models: dict[str, str] = field(default_factory=dict)
    subagent_efforts: dict[str, str] = field(default_factory=dict)

    def pick(
        self, spec: ProfileExecSpec, default_model: str, default_effort: str
    ) -> tuple[str, str]:
        """Per-profile config > this call > profile frontmatter > config default > executor."""
        name = spec.profile.name if spec.profile else ""
        own_model = spec.profile.model if spec.profile else ""
        own_effort = spec.profile.effort if spec.profile else ""
        model = _first(self.subagent_models.get(name, ""), spec.task.model, own_model,
                       self.subagent_model, default_model)  # fmt: skip
        effort = _first(self.subagent_efforts.get(name, ""), spec.task.effort, own_effort,
                        self.subagent_effort, default_effort)  # fmt: skip
        return model, effort


def _resumed(request: ChildRequest) -> str:
    """The capsule's reference to a prior transcript ("" for a fresh one)."""
    if request.continue_from:
        return f"continue:{request.continue_from}"
    return f"fork:{request.fork_from}" if request.fork_from else ""


def _first(*values: str) -> str:
    return next((v for v in values if v), "")


_NO_DEFAULTS = Allowance()


@dataclass
class SessionDelegation:
    """What a whole tree of runtimes shares: the scheduler, the limits, the counters.

    ``telemetry`` returns the top-level runtime's current Telemetry; every
    child's usage and the delegation counters of SUB-27 add up there.
    """

    scheduler: Scheduler
    max_depth: int
    telemetry: Callable[[], Any]
    skills: SkillSet
    models: ModelChoice = field(default_factory=ModelChoice)
    mcp: Any = None  # the session's McpManager, shared by every child (SUB-26)
    mutated: dict[Path, set[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # issue 36: per-spawn budgets reserved from the run's, and the spawn cap
    pool: Pool = field(default_factory=lambda: Pool(_NO_DEFAULTS, 0))

    def record(self, outcome: ChildOutcome) -> None:
        """Add one finished child to the counters (thread-safe)."""
        with self.lock:
            t = self.telemetry()
            for usage in outcome.usage:
                t.add_usage(usage)
            t.count("subagent_runs")
            t.count("subagent_nested_runs", int(outcome.depth >= 2))
            t.count("tool_calls", outcome.ledger.tool_calls)
            t.count("subagent_tool_calls", outcome.ledger.tool_calls)
            t.count("subagent_mutations", len(outcome.ledger.writes))
            for path in outcome.ledger.writes:
                runs = self.mutated.setdefault(path, set())
                runs.add(outcome.run_id)
                t.count("duplicate_work_paths", int(len(runs) == 2))
            t.count("completion_reports", int(outcome.ledger.report is not None))
            t.count("completions_prose_only", int(outcome.prose_only))
            t.count("false_completions", int(outcome.verdict.false_completion))
            t.count("criterion_downgrades", outcome.verdict.criterion_downgrades)
            t.count("write_scope_violations", len(outcome.violations))


@dataclass
class ChildOutcome:
    """One finished child run: the verdict, the receipts and the parent's text."""

    run_id: str
    depth: int
    writer: bool
    verdict: Verdict
    ledger: Ledger
    prose: str
    receipts: list[str]
    capsule: ContextCapsule | None
    violations: list[Path] = field(default_factory=list)
    usage: list[Any] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0
    transcript: str = ""  # path of the kept transcript ("" when ephemeral or not built)

    @property
    def ok(self) -> bool:
        """True when the adjudicated status is ``complete``."""
        return self.verdict.status == "complete"

    @property
    def prose_only(self) -> bool:
        """A writer that ended normally without a completion report."""
        return self.writer and self.ledger.report is None and self.verdict.status != "failed"

    @property
    def text(self) -> str:
        """What the parent receives (SUB-11 order)."""
        return render(self.verdict, self.prose, self.receipts, self.writer)


def _rel(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix() or "."
    except ValueError:
        return str(path)


def _listing(label: str, items: list[str], cap: int = 20) -> list[str]:
    if not items:
        return []
    more = f" … and {len(items) - cap} more" if len(items) > cap else ""
    return [f"{label}: {', '.join(items[:cap])}{more}"]


class TaskTool:
    """The spawn primitive of one runtime (top-level: depth 0; a child: its depth).

    ``factory`` builds children (the boot port); ``claim``/``read_only``
    bound what this runtime's own children may get (a child never grants
    more than it holds); ``ask`` forwards a child's approval requests to
    this runtime's human (None: they fail closed).
    """

    def __init__(
        self,
        shared: SessionDelegation,
        factory: ChildFactory,
        *,
        workspace: Path,
        roots: list[Path] | None = None,
        depth: int = 0,
        lineage: tuple[int, ...] = (),
        read_only: bool = False,
        claim: WriteClaim | None = None,
        session_id: Callable[[], str] = lambda: "",
        default_model: Callable[[], str] = lambda: "",
        default_effort: Callable[[], str] = lambda: "",
        ask: Ask | None = None,
        grant: Grant | None = None,
    ) -> None:
        self.shared, self.factory = shared, factory
        self.grant = grant  # this runtime's own budget (a child's); None at the top
        # the parent turn's event sink of the moment (progress events); None: nobody reads
        self.emit: Callable[[], Emit | None] = lambda: None
        self.workspace = Path(workspace).resolve()
        self.roots = list(roots or [])
        self.depth, self.lineage = depth, lineage
        self.read_only, self.claim = read_only, claim
        self.session_id, self.default_model, self.default_effort = (
            session_id,
            default_model,
            default_effort,
        )
        self.ask = ask

    # -- resolution ------------------------------------------------------------------
    def _claim(self, spec: ProfileExecSpec, read_only: bool) -> WriteClaim | None:
        if read_only:
            return None
        paths = spec.grant.write_paths
        if paths is None and self.claim is not None:
            return self.claim  # a nested writer inherits its parent's claim, never more
        try:
            claim = resolve_claim(paths, self.workspace, self.roots)
        except ReasonixError as err:
            raise ToolError(str(err)) from None
        if self.claim is not None and not claim.within(self.claim):
            raise ToolError(
                f"write_paths {claim.shown()} reach outside this sub-agent's own claim "
                f"({self.claim.shown()})"
            )
        return claim

    def _first_turn(self, spec: ProfileExecSpec, writer: bool) -> str:
        parts = [f"<workspace-context>\nworkspace root: {self.workspace}\n</workspace-context>"]
        child_depth = self.depth + 1
        if child_depth < self.shared.max_depth:
            parts.append(
                "<subagent-context>\n"
                f"You are a sub-agent at depth {child_depth} of at most "
                f"{self.shared.max_depth}. You may delegate a self-contained part of your task "
                "with the task tools, but only when it saves real work: a delegated child sees "
                "nothing but the prompt you write, and its write_paths must lie inside your "
                "own.\n</subagent-context>"
            )
        parts.append(spec.task.prompt.strip())
        if writer:
            parts.append(COMPLETION_CONTRACT)
        return "\n\n".join(parts)

    # -- the primitive -------------------------------------------------------------------
    def run_profile_spec(
        self,
        spec: ProfileExecSpec,
        *,
        cancel: Cancel,
        call_id: str = "",
        hooks: Any = None,
        ask: bool = True,
    ) -> ChildOutcome:
        """Run one child for ``spec`` and return its adjudicated outcome.

        ``ask`` False: nobody is there to answer the child's approval questions
        (a slash command outside a turn), so they fail closed. Raises ToolError
        when the spawn itself is refused (depth, a bad claim, an unknown model):
        the tools turn that into an error result.
        """
        max_depth = self.shared.max_depth
        if self.depth + 1 > max_depth:
            raise ToolError(
                f"refused: agent.max_subagent_depth is {max_depth} and this agent is at depth "
                f"{self.depth}, so it cannot start another sub-agent; do the work yourself"
            )
        if spec.context.continue_from and spec.context.fork_from:
            raise ToolError("give continue_from or fork_from, not both")
        if not spec.task.prompt.strip():
            raise ToolError("the task prompt is empty: describe the task for the sub-agent")
        read_only = spec.read_only or self.read_only
        claim = self._claim(spec, read_only)
        writer = claim is not None
        profile = spec.profile
        if profile is not None:
            system, source = profile.body, f"profile:{profile.name}"
        elif read_only:
            system, source = DEFAULT_READ_ONLY_TASK_PROMPT, "default-read-only"
        else:
            system, source = DEFAULT_TASK_PROMPT, "default"
        model, effort = self.shared.models.pick(spec, self.default_model(), self.default_effort())
        turn = self._first_turn(spec, writer)
        narrowing = Narrowing(read_only, claim, profile.allowed_tools if profile else None)
        wanted = spec.task.allowance or _NO_DEFAULTS
        grant = self.shared.pool.open(self.grant, wanted)  # ToolError: the spawn cap, none left
        request = ChildRequest(
            workspace=self.workspace, system=system, model=model, effort=effort,
            max_steps=spec.task.max_steps, narrowing=narrowing, writer=writer,
            mcp_strict=read_only or (claim is not None and not claim.whole),
            depth=self.depth + 1, lineage=self.lineage,  # + its reservation, once it has one
            parent_session=self.session_id(), parent_call=call_id,
            ephemeral=spec.context.ephemeral, continue_from=spec.context.continue_from,
            fork_from=spec.context.fork_from,
            interactive=ask and self.ask is not None,
            profile=profile.name if profile else "",
            shared=self.shared, grant=grant,
        )  # fmt: skip
        try:
            outcome = self._spawn(spec, request, turn, source, cancel, hooks)
            self.shared.record(outcome)  # its usage joins the run's before its reservation ends
        finally:
            self.shared.pool.close(grant)
        return outcome

    def _spawn(
        self,
        spec: ProfileExecSpec,
        request: ChildRequest,
        turn: str,
        source: str,
        cancel: Cancel,
        hooks: Any,
    ) -> ChildOutcome:
        """Hold a scheduler slot, build the child and drive it to its outcome."""
        claim = request.narrowing.claim
        with self.shared.scheduler.slot(claim, self.lineage, cancel) as ident:
            cancel.raise_if_cancelled()  # a stopped parent starts no child (issue 36)
            request = replace(request, lineage=(*self.lineage, ident))
            try:
                child = self.factory(request)
            except ReasonixError as err:
                raise ToolError(f"the sub-agent could not start: {err}") from None
            label = spec.task.label or (spec.profile.name if spec.profile else "")
            progress = ProgressReporter(
                self.emit(), child, request.grant, call_id=request.parent_call, label=label,
                depth=request.depth,
            )  # fmt: skip
            try:
                return self._drive(child, spec, request, turn, source, cancel, hooks, progress)
            finally:
                child.close()

    @staticmethod
    def _run_turn(
        child: ChildRuntime,
        text: str,
        ledger: Ledger,
        cancel: Cancel,
        ask: Ask | None,
        hooks: Any = None,
        progress: ProgressReporter | None = None,
    ) -> tuple[str, str, str]:
        """One turn of the child: (final text, end reason, error message).

        A hook failure inside the child is reported to the parent's hook runner
        (``hooks``): the child's events reach no frontend, its warnings must.
        """
        prose, reason, error = "", "", ""
        for event in child.runner.run(text, cancel):
            ledger.observe(event)
            if progress is not None and isinstance(event, UsageReport):
                progress.send()  # after each of its model requests
            elif progress is not None and isinstance(event, SubagentProgress):
                progress.relay(event)  # a nested child's, passed up
            elif isinstance(event, Notice) and event.kind == "hook" and hooks is not None:
                hooks.report(f"sub-agent: {event.text}")
            elif isinstance(event, ApprovalRequested):
                event.answer(ask(event.request) if ask is not None else None)
            elif isinstance(event, Done):
                prose, reason = event.result, event.reason
            elif isinstance(event, Error):
                reason, error = "error", event.message
        return prose, reason, error

    def _drive(
        self,
        child: ChildRuntime,
        spec: ProfileExecSpec,
        request: ChildRequest,
        turn: str,
        source: str,
        cancel: Cancel,
        hooks: Any,
        progress: ProgressReporter | None = None,
    ) -> ChildOutcome:
        ledger = Ledger(self.workspace)
        started = time.time()
        asker = self.ask if request.interactive else None
        turn = _subagent_start(hooks, child, spec, turn)
        if progress is not None:
            progress.send()
        prose, reason, error = self._run_turn(
            child, turn, ledger, cancel.child(), asker, hooks, progress
        )
        blocks = 0  # SubagentStop sends the child back, bounded as Claude bounds Stop
        while hooks is not None and hooks.has("SubagentStop") and not cancel.cancelled:
            got = hooks.run("SubagentStop", self._stop_fields(child, spec, blocks > 0, prose))
            if not got.blocked or error or _capped(hooks, blocks):
                break
            blocks += 1
            again = f"[SubagentStop hook] {got.reason}"
            more = self._run_turn(child, again, ledger, cancel, asker, hooks, progress)
            prose, reason, error = more[0] or prose, more[1], more[2]
        ended = time.time()
        writer = request.writer
        if writer and ledger.report is not None:
            verdict = adjudicate(ledger.report, ledger)
            if error:
                verdict.note = f"the run failed afterwards: {error}"
        else:
            verdict = run_verdict(reason, error)
        claim = request.narrowing.claim
        violations = [p for p in ledger.writes if claim is not None and not claim.covers(p)]
        capsule = self._capsule(child, spec, request, source)
        kept = "" if request.ephemeral else str(getattr(child.session, "path", "") or "")
        outcome = ChildOutcome(
            run_id=str(getattr(child.session, "id", "")), depth=request.depth, writer=writer,
            verdict=verdict, ledger=ledger, prose=prose, receipts=[], capsule=capsule,
            violations=violations, usage=list(child.telemetry.per_request), started=started,
            ended=ended, transcript=kept,
        )  # fmt: skip
        outcome.receipts = self._receipts(outcome, child, spec, claim)
        if progress is not None:
            ended_as = reason if reason in ("cancelled", "budget") else verdict.status
            progress.send("cancelled" if cancel.cancelled else ended_as)
        if kept:
            run = {"entry": spec.entry, "label": spec.task.label, "depth": request.depth,
                   "status": verdict.status, "started": started, "ended": ended}  # fmt: skip
            write_sidecar(Path(kept), capsule, run)
        return outcome

    def _stop_fields(
        self, child: ChildRuntime, spec: ProfileExecSpec, again: bool, last: str
    ) -> dict[str, Any]:
        kind = spec.profile.name if spec.profile else "task"
        return {
            "stop_hook_active": again,
            "agent_id": str(getattr(child.session, "id", "")),
            "agent_transcript_path": _claude_transcript(child, str(self.workspace)),
            "agent_type": kind,
            "subagent_type": kind,
            "last_assistant_message": last,
        }

    def _capsule(
        self, child: ChildRuntime, spec: ProfileExecSpec, request: ChildRequest, source: str
    ) -> ContextCapsule:
        schemas = child.registry.schemas()
        return ContextCapsule(
            workspace=str(self.workspace),
            system_source=source,
            system_hash=digest(request.system),
            tool_scope=tuple(child.registry.names()),
            schema_hash=digest(canonical_json(schemas)),
            model=str(getattr(child.resolved, "ref", request.model)),
            effort=request.effort,
            task_hash=digest(spec.task.prompt.strip()),
            parent_session=request.parent_session,
            parent_call=request.parent_call,
            resumed=_resumed(request),
        )

    def _receipts(
        self, o: ChildOutcome, child: ChildRuntime, spec: ProfileExecSpec, claim: WriteClaim | None
    ) -> list[str]:
        ws = self.workspace
        who = spec.profile.name if spec.profile else "default"
        scope = "read-only" if claim is None else f"writer, claim: {claim.shown()}"
        ref = str(getattr(child.resolved, "ref", ""))
        head = f"sub-agent {spec.task.label + ' · ' if spec.task.label else ''}profile {who}"
        out = [f"{head} · {scope} · model {ref} · {o.ledger.tool_calls} tool calls"]
        if o.transcript:
            out.append(f"transcript: {o.run_id} (continue_from={o.run_id} continues it)")
        else:
            out.append("transcript: not kept (ephemeral run)")
        out += _listing("wrote", [_rel(p, ws) for p in o.ledger.writes])
        out += _listing("read", [_rel(p, ws) for p in o.ledger.reads])
        ran = [
            f"`{c.command}` → " + (f"exit {c.exit_code}" if c.exit_code is not None else c.note)
            for c in o.ledger.commands
        ]
        out += _listing("ran", ran)
        out += [f"refused: {r}" for r in o.ledger.refused]
        out += _listing("outside the claim (violations)", [str(p) for p in o.violations])
        out += _listing("tools removed", list(child.narrowed))
        if o.capsule is not None:
            out.append(f"capsule: {o.capsule.capsule_hash}")
        return out


def _subagent_start(hooks: Any, child: ChildRuntime, spec: ProfileExecSpec, turn: str) -> str:
    """SubagentStart hooks (matcher: the agent type); their context joins the child's task."""
    if hooks is None or not hooks.has("SubagentStart"):
        return turn
    kind = spec.profile.name if spec.profile else "task"
    fields = {"agent_id": str(getattr(child.session, "id", "")), "agent_type": kind}
    got = hooks.run("SubagentStart", fields)
    return turn + "\n\n" + got.context_text if got.context_text else turn


def _capped(hooks: Any, blocks: int) -> bool:
    """True (with a warning) when SubagentStop has blocked as often as a turn allows."""
    from reasonix.agent.hooks import stop_block_cap

    cap = stop_block_cap()
    if not cap or blocks < cap:
        return False
    hooks.report(
        f"sub-agent: a SubagentStop hook blocked the end {cap + 1} times in a row; the "
        "sub-agent ends anyway (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises the limit)"
    )
    return True


def _claude_transcript(child: ChildRuntime, workspace: str) -> str:
    """``agent_transcript_path``: the child's transcript in Claude's JSONL shape."""
    from reasonix.agent.claude_transcript import ClaudeTranscript

    session = getattr(child, "session", None)
    if session is None or not hasattr(session, "records"):
        return str(getattr(session, "path", ""))
    try:
        return str(ClaudeTranscript(session, workspace, sidechain=True).sync())
    except OSError:
        return str(getattr(session, "path", ""))
