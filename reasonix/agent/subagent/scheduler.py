"""The session scheduler: when a child may start (SUB-5, SUB-17, SUB-23).

One scheduler per session tree (the top-level runtime and every child share
it). A child holds a slot while it runs:

* at most ``max_concurrency`` top-level children at once, at most
  ``max_writers`` of them writers;
* a writer never runs while another writer with an overlapping claim runs
  (a whole-workspace claim overlaps every claim), and writers queue in
  order: a later writer cannot overtake an earlier overlapping one;
* a nested child (spawned by a running child) borrows its ancestor's slot,
  so a tree can never deadlock on its own limits; its claim is only checked
  against writers outside its lineage (its ancestors' claims contain it).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from reasonix.cancel import Cancel
from reasonix.lazy import dataclass

from .claims import WriteClaim
from .spec import SchedulerPolicy

__all__ = ["Scheduler"]


@dataclass(frozen=True)
class _Held:
    ident: int
    claim: WriteClaim | None  # None: a read-only child
    lineage: tuple[int, ...]  # the reservations of the ancestors that spawned it


class Scheduler:
    """Admits children by the policy; :meth:`slot` blocks until one may start."""

    def __init__(self, policy: SchedulerPolicy) -> None:
        self.policy = policy
        self._cond = threading.Condition()
        self._held: dict[int, _Held] = {}
        self._waiting: list[tuple[int, WriteClaim]] = []  # writers in arrival order
        self._ids = itertools.count(1)
        self.peak_running = 0  # most top-level children at once (tests read these)
        self.peak_writers = 0

    def _top(self) -> list[_Held]:
        return [h for h in self._held.values() if not h.lineage]

    def _may_start(self, ident: int, claim: WriteClaim | None, lineage: tuple[int, ...]) -> bool:
        top = self._top()
        if not lineage:
            if len(top) >= self.policy.max_concurrency:
                return False
            if claim is not None and sum(h.claim is not None for h in top) >= (
                self.policy.max_writers
            ):
                return False
        if claim is None:
            return True
        for held in self._held.values():
            if held.claim is None or held.ident in lineage:
                continue
            if held.claim.overlaps(claim):
                return False
        for ticket, waiting in self._waiting:
            if ticket == ident:
                break
            if waiting.overlaps(claim):
                return False  # an earlier overlapping writer goes first
        return True

    @contextmanager
    def slot(
        self, claim: WriteClaim | None, lineage: tuple[int, ...], cancel: Cancel
    ) -> Iterator[int]:
        """Hold a slot for one child (its reservation id) until the block ends.

        ``claim`` None is a read-only child. Raises Cancelled when ``cancel``
        fires while waiting.
        """
        ident = next(self._ids)
        with self._cond:
            if claim is not None:
                self._waiting.append((ident, claim))
            try:
                while not self._may_start(ident, claim, lineage):
                    cancel.raise_if_cancelled()
                    self._cond.wait(0.05)
            finally:
                self._waiting = [w for w in self._waiting if w[0] != ident]
                self._cond.notify_all()
            self._held[ident] = _Held(ident, claim, lineage)
            top = self._top()
            self.peak_running = max(self.peak_running, len(top))
            self.peak_writers = max(self.peak_writers, sum(h.claim is not None for h in top))
        try:
            yield ident
        finally:
            with self._cond:
                self._held.pop(ident, None)
                self._cond.notify_all()
