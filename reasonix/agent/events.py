"""What a :class:`Runner` yields: small frozen events the frontends consume.

The CLI, the chat view and ``serve`` only read these; none of them reaches
into the agent (DESIGN §3). An :class:`ApprovalRequested` event is the one
two-way event: the consumer answers it with :meth:`ApprovalRequested.answer`
before asking for the next event; an unanswered request counts as "deny".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from reasonix.cancel import Cancel
from reasonix.lazy import dataclass, field
from reasonix.provider.types import Usage, WebSearchResult

if TYPE_CHECKING:
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


@dataclass(frozen=True, slots=True)
class StepStart:
    """A model request is about to be sent (``step`` counts from 1 within the run)."""

    step: int


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's visible answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's thinking text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolStart:
    """A tool call passed the gate and is about to run."""

    call_id: str
    name: str
    arguments: str
    read_only: bool


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """A tool call finished (or was refused); ``content`` is what the model sees."""

    call_id: str
    name: str
    content: str
    is_error: bool
    seconds: float
    blocked: bool = False


@dataclass(frozen=True, slots=True)
class WebSearch:
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


@dataclass(frozen=True, slots=True)
class SandboxEscape:
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


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token usage of one model request."""

    step: int
    usage: Usage


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user may want to know that is neither output nor failure."""

    kind: str  # "retry_empty" | "max_steps" | "cancelled" | "compaction" | …
    text: str


@dataclass(frozen=True, slots=True)
class Phase:
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
    stats: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SubagentProgress:
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
    limits: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The fields as plain JSON values (the frontends' shared shape; cost None: unpriced)."""
        return {
            "run_id": self.run_id, "call_id": self.call_id, "label": self.label,
            "depth": self.depth, "state": self.state, "tokens": self.tokens,
            "cost": None if self.cost is None else round(self.cost, 6), "turns": self.turns,
            "seconds": self.seconds, "limits": dict(self.limits),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Done:
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


@dataclass(frozen=True, slots=True)
class Error:
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
