"""What a :class:`Runner` yields: small immutable events the frontends consume.

The CLI, the chat view and ``serve`` only read these; none of them reaches
into the agent (DESIGN §3). An :class:`ApprovalRequested` event is the one
two-way event: the consumer answers it with :meth:`ApprovalRequested.answer`
before asking for the next event; an unanswered request counts as "deny".

Every other event is a :class:`typing.NamedTuple`, the standard library's
immutable record: no ``__dict__``, tuple ``==`` and ``hash``, ``_replace`` for
a changed copy, and about a tenth of a dataclass's cost to define — these
classes load before every first request (docs/SPEC.md, "How start-up stays
fast"). Being tuples, two events of different classes with equal fields compare
equal: frontends dispatch on ``isinstance``, never on ``==``, and serialise
each field by name (``json.dumps`` of an event would write a bare list).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, Protocol

from reasonix.cancel import Cancel
from reasonix.lazy import dataclass, field
from reasonix.provider.types import Usage, WebSearchResult

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "ApprovalRequested",
    "Done",
    "Error",
    "Event",
    "Notice",
    "Phase",
    "ReasoningDelta",
    "Runner",
    "SandboxEscape",
    "StepStart",
    "SubagentProgress",
    "TextDelta",
    "ToolEnd",
    "ToolStart",
    "UsageReport",
    "WebSearch",
]


class StepStart(NamedTuple):
    """A model request is about to be sent (``step`` counts from 1 within the run)."""

    step: int


class TextDelta(NamedTuple):
    """A piece of the model's visible answer."""

    text: str


class ReasoningDelta(NamedTuple):
    """A piece of the model's thinking text."""

    text: str


class ToolStart(NamedTuple):
    """A tool call passed the gate and is about to run."""

    call_id: str
    name: str
    arguments: str
    read_only: bool


class ToolEnd(NamedTuple):
    """A tool call finished (or was refused); ``content`` is what the model sees."""

    call_id: str
    name: str
    content: str
    is_error: bool
    seconds: float
    blocked: bool = False


class WebSearch(NamedTuple):
    """A web search the *provider* ran on its side while answering (not a local tool call).

    Emitted once per search, as soon as its results arrive — usually before the
    answer text that uses them. Fields:

    * ``call_id`` — the vendor's id of the search (``srvtoolu_…`` on Anthropic,
      ``ws_…`` on Responses); unique within the session.
    * ``query`` — what the model searched for ("" when the vendor did not say).
    * ``results`` — the hits in the vendor's order, each a
      :class:`~reasonix.provider.types.WebSearchResult` with ``title`` and ``url``.
      ``title`` may be "" (OpenAI Responses reports consulted sources as bare URLs).
    * ``error`` — the vendor's error code when the search failed
      (``max_uses_exceeded``, ``too_many_requests``, ``failed`` …), else "".

    Frontends show it as a compact card: the query, then one line per result with
    its title and URL (as a link where the terminal supports it). Titles, URLs and
    the query are untrusted remote text: sanitise before printing. The agent also
    records it in the transcript as ``{"type": "web_search", …}``; usage counts it
    in ``Usage.web_search_requests`` where the vendor reports searches.
    """

    call_id: str
    query: str
    results: tuple[WebSearchResult, ...]
    error: str = ""


class SandboxEscape(NamedTuple):
    """The decision on a request to re-run one bash command outside the OS sandbox.

    The bash tool offers this only after the sandbox visibly caused a failure;
    granting it always takes a fresh human answer (auto, YOLO, rules and hooks
    never grant it; headless runs refuse). Emitted after the tool call that asked,
    before its :class:`ToolEnd`; also recorded in the transcript as
    ``{"type": "sandbox_escape", …}``. ``command`` is the exact command,
    ``justification`` the model's reason, ``granted`` the outcome and ``detail``
    why (``approved once by the user``, ``headless``, ``declined`` …).
    """

    call_id: str
    command: str
    justification: str
    granted: bool
    detail: str


class UsageReport(NamedTuple):
    """Token usage of one model request."""

    step: int
    usage: Usage


class Notice(NamedTuple):
    """Something the user may want to know that is neither output nor failure."""

    kind: str  # "retry_empty" | "max_steps" | "cancelled" | "compaction" | …
    text: str


class Phase(NamedTuple):
    """A coordination step: the route of a turn, a planner/executor hand-off, a saved
    plan, goal progress. Only codes, ids and numbers — never user text (COORD-4).

    ``phase`` is ``route`` | ``planner`` | ``executor`` | ``plan`` | ``goal``;
    ``status`` is a plan's or goal's state; ``stats`` a goal's statistics.
    """

    phase: str
    route: str = ""
    reason: str = ""
    plan_id: str = ""
    status: str = ""
    stats: Mapping[str, float] = MappingProxyType({})  # read-only: one shared empty default


class SubagentProgress(NamedTuple):
    """Live counters of one sub-agent (issue 36): sent when it starts, after each of its
    model requests, and when it ends. Nested sub-agents' progress passes up the same way.

    ``run_id`` is the child's transcript id; ``call_id`` the parent's tool call that
    started it (the top-level call, for a nested child); ``label`` the fleet item id or
    the profile name; ``state`` is ``running`` while it runs, then its verdict
    (``complete`` | ``partial`` | ``blocked`` | ``failed``) or ``cancelled`` / ``budget``;
    ``tokens`` are input + output tokens of its own requests, ``cost`` their cost at
    its model's price (None: unpriced), ``turns`` its model requests; ``limits`` the
    caps of its budget by measure (``tokens``, ``cost``, ``turns``, ``seconds``).
    """

    run_id: str
    call_id: str
    label: str
    depth: int
    state: str
    tokens: int
    cost: float | None
    turns: int
    seconds: float
    limits: Mapping[str, float] = MappingProxyType({})  # read-only: one shared empty default

    def as_dict(self) -> dict[str, Any]:
        """The fields as plain JSON values (the frontends' shared shape; cost None: unpriced)."""
        return {
            "run_id": self.run_id, "call_id": self.call_id, "label": self.label,
            "depth": self.depth, "state": self.state, "tokens": self.tokens,
            "cost": None if self.cost is None else round(self.cost, 6), "turns": self.turns,
            "seconds": self.seconds, "limits": dict(self.limits),
        }  # fmt: skip


class Done(NamedTuple):
    """The run ended; ``result`` is the final answer text.

    ``reason`` is ``complete`` (the model answered without tools),
    ``max_steps`` (the tool-round budget ran out), ``cancelled``, ``max_tokens``
    (the output limit cut the answer), ``refusal`` (the model or provider
    declined), ``content_filter`` (the provider's filter stopped it) or ``budget`` (a
    spent budget ended the turn before its next request); the host adds
    ``plan_saved``, ``awaiting_approval``, ``goal_paused`` and ``goal_blocked``.
    """

    result: str
    reason: str
    steps: int
    usage: Usage


class Error(NamedTuple):
    """The run failed; ``error`` is the typed exception, ``message`` its text."""

    error: BaseException
    message: str


@dataclass(frozen=True, eq=False)
class ApprovalRequested:
    """The permission gate wants a human decision about one call.

    ``request`` is the permission layer's ApprovalRequest; the consumer calls
    :meth:`answer` with an ApprovalChoice (or None to deny).
    """

    request: Any
    _slot: list[Any] = field(default_factory=list, repr=False)
    _ready: threading.Event = field(default_factory=threading.Event, repr=False)

    def answer(self, choice: Any) -> None:
        """Give the decision; the agent resumes with it."""
        if not self._ready.is_set():
            self._slot.append(choice)
            self._ready.set()

    def wait(self, cancel: Cancel) -> Any:
        """The answer, or None if the run is cancelled first (used by the agent)."""
        while not self._ready.wait(0.05):
            if cancel.cancelled:
                return None
        return self._slot[0]


Event = (
    StepStart
    | TextDelta
    | ReasoningDelta
    | ToolStart
    | ToolEnd
    | UsageReport
    | WebSearch
    | SandboxEscape
    | Notice
    | Phase
    | SubagentProgress
    | Done
    | Error
    | ApprovalRequested
)


class Runner(Protocol):
    """Anything that turns one user input into a stream of events (Agent, Coordinator)."""

    def run(self, user_input: str, cancel: Cancel) -> Iterator[Event]:
        """Run one user turn; the last event is :class:`Done` or :class:`Error`."""
        ...
