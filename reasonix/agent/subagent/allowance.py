"""Per-spawn budgets: what a sub-agent may spend, reserved from its parent's remaining (issue 36).

Every spawn opens a :class:`Grant` in the tree's :class:`Pool`. A grant with a
cap on a measure (tokens, cost) *reserves* that amount: siblings and the parent
cannot spend it while the child runs. A grant without a cap shares what its
parent has left, counted live. A cap is never more than the parent has left
(the spawn is refused when nothing is left), and when the child ends its
reservation is released: only what it really spent stays counted (finished
children's usage is in the run's telemetry at the root, and in ``folded`` of
their ancestors), so the unspent rest returns to the parent.

Turns (model requests) and wall time are per child: a turn cap counts the
child's own requests; a deadline is the earlier of its own and its parent's.

Accounting (per measure), for a running grant ``k``:

* ``own(k)`` — its own requests so far (the probe into its telemetry);
* ``folded(k)`` — every finished descendant's own spend;
* ``claim(k)`` — what it takes from its parent beyond finished descendants:
  ``max(cap - folded, own + Σ claim(kids))`` when capped, else
  ``own + Σ claim(kids)``;
* ``room(k)`` — what ``k`` and its children may still spend: ``cap - folded - own
  - Σ claim(kids)`` when capped, else ``room(parent excluding k) - own - Σ claim(kids)``;
  the root's room is the run budget's remainder minus its children's claims.

A grant's request is refused ("tokens"/"cost") once its room is ≤ 0.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from reasonix.errors import ToolError
from reasonix.lazy import dataclass

__all__ = ["Allowance", "Grant", "Pool", "RootLeft"]

# (tokens left, cost left, deadline): None where the run has no such limit
RootLeft = Callable[[], tuple[float | None, float | None, float | None]]
# a child's own spend so far: (tokens, cost or None when unpriced, requests)
Probe = Callable[[], tuple[int, float | None, int]]
_MEASURES = ("tokens", "cost")


@dataclass(frozen=True)
class Allowance:
    """One spawn's caps; 0 means no cap of its own on that measure."""

    tokens: int = 0
    cost: float = 0.0
    turns: int = 0
    seconds: float = 0.0

    def over(self, defaults: Allowance) -> Allowance:
        """These caps, each unset one taken from ``defaults`` (the ``[agent]`` keys)."""
        return Allowance(
            self.tokens or defaults.tokens,
            self.cost or defaults.cost,
            self.turns or defaults.turns,
            self.seconds or defaults.seconds,
        )

    def limits(self) -> dict[str, float]:
        """The caps that are set, by measure name."""
        pairs = (("tokens", self.tokens), ("cost", self.cost), ("turns", self.turns),
                 ("seconds", self.seconds))  # fmt: skip
        return {k: float(v) for k, v in pairs if v > 0}


def _sub(a: float | None, b: float) -> float | None:
    return None if a is None else a - b


class Grant:
    """One running sub-agent's share of the tree's budget (made by :meth:`Pool.open`)."""

    def __init__(
        self, pool: Pool, parent: Grant | None, cap: Allowance, deadline: float | None
    ) -> None:
        self.pool, self.parent, self.cap, self.deadline = pool, parent, cap, deadline
        self.kids: list[Grant] = []
        self.folded = [0.0, 0.0]  # tokens, cost of finished descendants
        self.probe: Probe = lambda: (0, 0.0, 0)
        self.priced = True

    def attach(self, probe: Probe, priced: bool) -> None:
        """Point the grant at the child's live usage (once its runtime exists).

        A cost limit over an unpriced child model could never be counted: refused.
        """
        if not priced and self.pool.cost_limited(self):
            raise ToolError(
                "refused: a cost budget applies to this sub-agent and its model has no price; "
                "choose a priced model for it or use a token budget"
            )
        self.probe, self.priced = probe, priced

    def own(self) -> tuple[float, float]:
        """Tokens and cost of the child's own requests so far."""
        tokens, cost, _turns = self.probe()
        return float(tokens), float(cost or 0.0)

    def turns(self) -> int:
        """Model requests the child has made."""
        return self.probe()[2]

    def _caps(self) -> tuple[float, float]:
        return float(self.cap.tokens), self.cap.cost

    def claim(self) -> list[float]:
        """What this grant takes from its parent beyond finished descendants."""
        own = self.own()
        live = [own[i] + sum(k.claim()[i] for k in self.kids) for i in range(2)]
        caps = self._caps()
        return [max(caps[i] - self.folded[i], live[i]) if caps[i] > 0 else live[i]
                for i in range(2)]  # fmt: skip

    def check(self, extra_tokens: int = 0) -> str:
        """A ``before_request`` check: the name of the spent limit, or ""."""
        return self.pool.spent(self)


class Pool:
    """The grants of one session tree, the spawn counter and the per-spawn defaults."""

    def __init__(self, defaults: Allowance, max_spawns: int, root: RootLeft | None = None) -> None:
        self.defaults, self.max_spawns = defaults, max_spawns
        self.root: RootLeft = root or (lambda: (None, None, None))
        self.spawns = 0
        self.top: list[Grant] = []
        self._lock = threading.RLock()

    # -- accounting ------------------------------------------------------------------
    def _room(self, node: Grant | None, exclude: Grant | None) -> list[float | None]:
        kids = self.top if node is None else node.kids
        room: list[float | None]
        if node is None:
            tokens, cost, _deadline = self.root()
            room = [tokens, cost]
        else:
            own, caps = node.own(), node._caps()
            above = self._room(node.parent, node) if 0 in caps else [None, None]
            room = [caps[i] - node.folded[i] - own[i] if caps[i] > 0 else _sub(above[i], own[i])
                    for i in range(2)]  # fmt: skip
        for kid in kids:
            if kid is not exclude:
                claim = kid.claim()
                room = [_sub(room[i], claim[i]) for i in range(2)]
        return room

    def _deadline(self, node: Grant | None) -> float | None:
        return self.root()[2] if node is None else node.deadline

    def cost_limited(self, grant: Grant) -> bool:
        """True when any cap on the grant's path to the root counts cost."""
        with self._lock:
            node: Grant | None = grant
            while node is not None:
                if node.cap.cost > 0:
                    return True
                node = node.parent
            return self.root()[1] is not None

    def spent(self, grant: Grant) -> str:
        """The first spent limit of ``grant`` ("tokens", "cost", "turns", "time") or ""."""
        with self._lock:
            room = self._room(grant, None)
            for name, left in zip(_MEASURES, room, strict=True):
                if left is not None and left <= 0:
                    return name
            if grant.cap.turns > 0 and grant.turns() >= grant.cap.turns:
                return "turns"
            if grant.deadline is not None and time.monotonic() >= grant.deadline:
                return "time"
            return ""

    # -- spawning --------------------------------------------------------------------
    def open(self, parent: Grant | None, ask: Allowance) -> Grant:
        """Reserve a child's budget under ``parent`` (None: the top-level runtime).

        ``ask`` is the call's own caps (unset ones come from the defaults); each is
        cut to what the parent has left. Raises ToolError (the model reads it) when
        the session's spawn cap is reached or the parent has nothing left.
        """
        want = ask.over(self.defaults)
        with self._lock:
            if self.max_spawns and self.spawns >= self.max_spawns:
                raise ToolError(
                    f"refused: this session has started {self.spawns} sub-agents, the most "
                    f"agent.max_subagent_spawns allows ({self.max_spawns}); do the rest of "
                    "the work yourself"
                )
            room = self._room(parent, None)
            for name, left in zip(_MEASURES, room, strict=True):
                if left is not None and left <= 0:
                    raise ToolError(
                        f"refused: no {name} budget is left to give a sub-agent (the run's "
                        "budget, less what running sub-agents hold); do the work yourself or end"
                    )
            caps = [float(want.tokens), want.cost]
            for i, left in enumerate(room):
                if left is not None and caps[i] > left:  # never beyond what the parent has left
                    caps[i] = left
            now = time.monotonic()
            deadlines = [d for d in (self._deadline(parent),) if d is not None]
            if want.seconds > 0:
                deadlines.append(now + want.seconds)
            if deadlines and min(deadlines) <= now:
                raise ToolError("refused: no time budget is left to give a sub-agent")
            cap = Allowance(
                max(1, int(caps[0])) if caps[0] > 0 else 0, caps[1], want.turns, want.seconds
            )
            grant = Grant(self, parent, cap, min(deadlines) if deadlines else None)
            (self.top if parent is None else parent.kids).append(grant)
            self.spawns += 1
            return grant

    def close(self, grant: Grant) -> None:
        """The child ended: release its reservation; its own spend stays with its ancestors."""
        with self._lock:
            siblings = self.top if grant.parent is None else grant.parent.kids
            if grant not in siblings:
                return
            own = grant.own()
            siblings.remove(grant)
            node = grant.parent
            while node is not None:  # the root has it in the run's telemetry (record())
                node.folded = [node.folded[i] + own[i] for i in range(2)]
                node = node.parent
