"""The dedicated Planner: its own model, its own append-only session, read-only tools.

One :meth:`Planner.plan` call is one planner turn. The turn's messages are
kept in memory until the planner answers with a plan; only then are they
appended to the planner's transcript (a ``planner_turn`` record marks the
commit). A turn that does not converge — still calling tools after its
research rounds and the final summary round, an empty answer, a provider
error, a cancel — is rolled back: nothing of it reaches the transcript except
a ``planner_turn`` record with status ``rolled_back``, so the next planner
request extends the last committed one and no half turn is left to resume
(COORD-8).

Prefix stability (COORD-1, COORD-6): the system prompt and the tool list are
fixed when the planner is built and stored in the session's meta record; a
turn only appends a user message that ends with a small ``<planner-turn>``
block naming the route.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.config.paths import sessions_dir
from reasonix.errors import Cancelled, ReasonixError
from reasonix.provider import Provider
from reasonix.provider.types import Message, Request, Role, ToolSchema, Usage
from reasonix.tool import Registry, ToolContext

from ..events import Event, Notice, StepStart
from ..execute import EventApprover, run_in_worker
from ..lazy_records import of_types
from ..ports import GateLike
from ..prompt import valid_text
from ..session import Session, read_records
from ..stream import stream_reply
from ..telemetry import Telemetry
from ..toolpin import pin_tools
from .plan import Plan

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PLANNER_PROMPT",
    "RESEARCH_ROUNDS",
    "RESEARCH_TOOLS",
    "Planner",
    "PlannerSessions",
    "planner_turn_text",
]

RESEARCH_ROUNDS = 8  # tool rounds before the final summary round (COORD-8)
# The read-only research set (COORD-15); MCP is reached only through use_capability.
RESEARCH_TOOLS = ("code_index", "glob", "grep", "history", "ls", "memory", "read_file", "web_fetch")

PLANNER_PROMPT = """\
You are the planner of Reasonix, a coding agent. You do not change anything: you \
research with read-only tools and write a plan that another model (the executor, \
which has every tool) will carry out.

How to work:
- Read and search the code before you plan; never guess file contents.
- MCP servers are reachable only through use_capability; destructive targets are left \
to the executor.
- Keep research short: a few rounds of tool calls, then the plan.
- Answer with the plan and nothing else, in this shape:

<plan>
# <one-line title>
## Summary
## Verified touchpoints
- path:line — what you saw there
## Candidate touchpoints
- places you expect to matter but did not verify
## Steps
## Non-goals
## Risks
## Acceptance criteria
## Verification
- commands that prove the change works
</plan>

Leave out a section when you have no evidence for it. A user message ends with a \
<planner-turn route="…"> block that says why you are asked: plan_then_execute (the \
executor starts right after you), plan_for_approval (a human reads the plan first), \
plan_only (the plan is the result) or goal_start (the plan opens a long-running goal)."""

FINAL_ROUND = (
    "\n\n<planner-final-round>The research budget is spent. Answer now with the final "
    "plan; do not call any tool.</planner-final-round>"
)


def planner_turn_text(task: str, route: str) -> str:
    """The planner's user message: the task, then the small per-turn block (COORD-6)."""
    block = f'<planner-turn route="{route}">research, then answer with the plan</planner-turn>'
    return f"{task}\n\n{block}"


class PlannerSessions:
    """Opens the planner transcript linked to an executor session, or creates one lazily.

    Planner transcripts live in ``<sessions>/planner/`` so session listings
    (and ``-c``) never pick one. The executor session holds a ``planner_link``
    record; the planner's meta names the executor session back. A link is
    followed only when both sides agree (a ``--copy`` starts a new planner).
    """

    def __init__(
        self, workspace: Path, executor: Callable[[], Session], meta: dict[str, Any]
    ) -> None:
        self.workspace, self._executor, self.meta = workspace, executor, meta
        self.session: Session | None = None

    def root(self) -> Path:
        """The directory of planner transcripts of this workspace."""
        return sessions_dir(self.workspace) / "planner"

    def linked(self) -> Path | None:
        """The planner transcript the executor session points to, if both agree."""
        ex = self._executor()
        links = list(of_types(ex.records(), ("planner_link",)))
        if not links:
            return None
        path = self.root() / f"{links[-1].get('planner_session', '')}.jsonl"
        if not path.is_file():
            return None
        head = next((r for r in read_records(path) if r.get("type") == "meta"), {})
        return path if head.get("executor_session") == ex.id else None

    def get(self) -> Session:
        """The open planner session (opened or created on first use)."""
        if self.session is None:
            path = self.linked()
            if path is not None:
                self.session = Session.open(path)
            else:
                ex = self._executor()
                meta = {**self.meta, "role": "planner", "executor_session": ex.id}
                self.session = Session.create(self.workspace, meta, root=self.root())
                ex.append({"type": "planner_link", "planner_session": self.session.id})
        return self.session

    def close(self) -> None:
        """Release the planner session (idempotent)."""
        if self.session is not None:
            self.session.close()
            self.session = None


class _NoPlan(Exception):
    """The planner turn ended without a plan; ``reason`` is a code for the phase log."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


class Planner:
    """Research with read-only tools, then a structured plan; never executes."""

    def __init__(
        self,
        provider: Provider,
        registry: Registry,
        sessions: PlannerSessions,
        *,
        model: str,
        tool_ctx: ToolContext,
        telemetry: Telemetry,
        gate: GateLike | None = None,
        approver: EventApprover | None = None,
        temperature: float | None = None,
        effort: str = "",
        instructions: str = "",
        research_rounds: int = RESEARCH_ROUNDS,
        max_tokens: Callable[[], int | None] | None = None,
    ) -> None:
        self.provider, self.registry, self.sessions = provider, registry, sessions
        self.model, self.tool_ctx, self.telemetry = model, tool_ctx, telemetry
        self.gate, self.approver = gate, approver
        self.temperature, self.effort, self.instructions = temperature, effort, instructions
        self.research_rounds = max(1, research_rounds)
        self.max_tokens = max_tokens
        self.tools = [ToolSchema(**s) for s in registry.schemas()]  # frozen: prefix-stable
        self.last_failure = ""

    @property
    def system(self) -> str:
        """The stable system prompt (kept in the planner session's meta)."""
        return str(self.sessions.get().meta.get("system") or self.sessions.meta["system"])

    def plan(self, task: str, route: str, cancel: Cancel) -> Generator[Event, None, Plan | None]:
        """One planner turn; returns the plan, or None when it did not converge.

        ``Cancelled`` propagates (after the rollback) so the caller ends the
        turn as cancelled; every other failure is a None return with
        :attr:`last_failure` set to a reason code.
        """
        session = self.sessions.get()
        # the tools this lane first sent, byte for byte, across restarts and upgrades
        self.tools = pin_tools(session, self.registry.schemas())[0]
        committed = session.messages()
        text = planner_turn_text(valid_text(task), route)
        if self.instructions and not committed:
            text = self.instructions + "\n\n" + text
        turn = [Message(Role.USER, text)]
        self.last_failure = ""
        try:
            answer = yield from self._research(committed, turn, cancel)
        except _NoPlan as stop:
            self._roll_back(session, route, stop.reason, len(turn))
            if stop.detail:
                yield Notice("planner", f"planner: {stop.detail}")
            return None
        except Cancelled:
            self._roll_back(session, route, "cancelled", len(turn))
            raise
        for message in turn:
            session.append_message(message)
        plan = Plan.make(route, task, answer, "planner", "pending")
        session.append({"type": "planner_turn", "route": route, "status": "committed",
                        "plan_id": plan.id})  # fmt: skip
        session.sync()
        return plan

    def _roll_back(self, session: Session, route: str, reason: str, size: int) -> None:
        self.last_failure = reason
        session.append({"type": "planner_turn", "route": route, "status": "rolled_back",
                        "reason": reason, "messages": size})  # fmt: skip
        session.sync()

    def _research(
        self, committed: list[Message], turn: list[Message], cancel: Cancel
    ) -> Generator[Event, None, str]:
        rounds, final, step = 0, False, 0
        while True:
            step += 1
            request = Request(
                self.model, committed + turn, self.system, self.tools, self.temperature,
                self.max_tokens() if self.max_tokens else None, self.effort,
            )  # fmt: skip
            reply = yield from self._ask(request, cancel, step)
            turn.append(reply)
            if not reply.tool_calls:
                if not reply.content.strip():
                    raise _NoPlan("empty", "the planner answered with nothing")
                return reply.content
            if final:
                raise _NoPlan("not_converged", "no plan after the final summary round")
            results = yield from run_in_worker(
                reply.tool_calls, self.registry, self.gate, self._ctx(), cancel, self.approver
            )
            rounds += 1
            final = rounds >= self.research_rounds
            last = len(results) - 1
            for i, (call, result) in enumerate(zip(reply.tool_calls, results, strict=True)):
                content = result.content + (FINAL_ROUND if final and i == last else "")
                turn.append(Message(Role.TOOL, content, tool_call_id=call.id, name=call.name))
            cancel.raise_if_cancelled()

    def _ctx(self) -> ToolContext:
        return self.tool_ctx.replace(session_id=self.sessions.get().id)

    def _ask(self, request: Request, cancel: Cancel, step: int) -> Generator[Event, None, Message]:
        yield StepStart(step)
        try:
            return (yield from stream_reply(self.provider, request, cancel, step, self._observe))
        except Cancelled:
            raise
        except ReasonixError as err:
            raise _NoPlan("error", f"the planner request failed: {err}") from err

    def _observe(self, usage: Usage) -> None:
        self.telemetry.add_usage(usage)
