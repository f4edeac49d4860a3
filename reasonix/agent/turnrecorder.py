"""The agent's side of checkpoints: mark each turn, snapshot before its first write and
at its end, in the store of :mod:`reasonix.agent.checkpoints` (whose docstring tells how
the trees are prepared ahead, off the critical path).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent import checkpoints
from reasonix.agent.checklog import Turn
from reasonix.agent.checkpoints import CheckpointStore
from reasonix.errors import SessionError
from reasonix.slices import short_slices

if TYPE_CHECKING:
    from reasonix.agent.snapedit import TrackedTurn

__all__ = ["TurnRecorder"]


class _Ahead:
    """A tree prepared on a background thread (:meth:`CheckpointStore.tree`)."""

    def __init__(self, store: CheckpointStore) -> None:
        self.result: tuple[str, list[str]] | None = None
        self.error: Exception | None = None
        self.dropped = False  # nobody will take it: stop before writing objects
        self.thread = threading.Thread(
            target=self._run, args=(store,), name="reasonix-checkpoint", daemon=True
        )
        self.thread.start()

    def _run(self, store: CheckpointStore) -> None:
        try:
            with short_slices():  # each git process's end needs the GIL back at once
                self.result = store.tree(wanted=lambda: not self.dropped)
        except (SessionError, OSError) as exc:
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - a thread's surprise is no traceback on screen
            self.error = SessionError(f"checkpoint: {type(exc).__name__}: {exc}")

    def drop(self) -> None:
        """Nobody will take this tree (a write made it stale): let it stop early."""
        self.dropped = True

    def take(self) -> tuple[str, list[str]]:
        """Wait for the tree; raises what preparing it raised."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class TurnRecorder:
    """The agent's side: mark each turn, snapshot before its first write and at its end.

    The trees are prepared ahead on a background thread (see the module
    docstring): :meth:`tools_starting` before each round of tool calls,
    :meth:`tools_done` after it. A write (:meth:`before_write`) waits for the
    "before" tree and throws away an "after" tree prepared before it.

    A store that fails (a damaged repository or log, a full disk) switches
    checkpoints off for the rest of the session, with one notice saying so
    (:meth:`take_notices`), at the turn it fails in: the end of a turn that
    wrote asks git to read both of its snapshots back, so a repository that
    cannot serve a rewind is found then, not at the rewind.
    """

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._turn: Turn | None = None
        self._last: tuple[str, int] = ("", 0)  # (session, number) of the turn begun last
        self._before: _Ahead | None = None  # the state the turn started from, being stored
        self._after: _Ahead | None = None  # the state after the last round of tools
        self._tracked: TrackedTurn | None = None  # a turn recorded from its files alone
        self._committed = ""  # the "before" tree of that turn last committed
        self.notices: list[str] = []
        self.off = ""  # why checkpoints are off for the rest of the session ("": on)

    def take_notices(self) -> list[str]:
        """The notices gathered so far (the frontends show them), cleared. A turn's end
        is recorded on a thread: its notice comes with the next turn's (or :meth:`settle`)."""
        taken, self.notices = self.notices, []
        return taken

    def settle(self) -> list[str]:
        """Wait for the last turn's end to be recorded; returns :meth:`take_notices`."""
        self.store.settle()
        return self.take_notices()

    def _switch_off(self, exc: BaseException) -> None:
        """The store failed: no more snapshots this session (each would fail again)."""
        if self.off:
            return
        self.off = str(exc) or type(exc).__name__
        self._turn = None
        self.notices.append(
            f"checkpoints are off for the rest of this session: {self.off} — changes from "
            f"here on cannot be rewound (move {self.store.root} away for a fresh store)"
        )

    def begin(self, session: str, records: int, title: str) -> None:
        """A user turn starts; ``records`` = the transcript's record count before it."""
        # Only the lease holder writes a session's turns: after the first, this process
        # counts on instead of reading the whole project log again.
        self.store.settle()  # the last turn's end is recorded first
        self._turn, self._before, self._after, self._tracked = None, None, None, None
        self._committed = ""
        if self.off:
            return
        last_session, last = self._last
        try:
            number = last + 1 if last_session == session else len(self.store.turns(session)) + 1
            rec = {"type": "turn", "session": session, "turn": number, "records": records}
            self.store.append({**rec, "title": title[:120], "time": time.time()})
        except (SessionError, OSError) as exc:  # an unreadable or unwritable log
            self._switch_off(exc)
            return
        self._turn = Turn(session, number, records, title[:120], time.time())
        self._last = (session, number)

    def tools_starting(self, full: bool = True) -> None:
        """A round of tool calls is about to run: prepare the "before" tree, once per turn.

        Not when (``full`` False) every call of the round reads or names its file:
        such a turn is recorded from its files on the latest snapshot, unless the
        store holds none yet (a project's first turn), when its first write starts
        from a whole tree anyway; that tree is prepared ahead here too.
        """
        turn = self._turn
        if turn is None or turn.before or self._before is not None:
            return
        if full or not self.store.has_snapshot():
            self._before = _Ahead(self.store)

    def tools_done(self) -> None:
        """A round of tools ended: in a turn that wrote, prepare its "after" tree."""
        turn = self._turn
        if turn is not None and turn.before not in ("", "-") and self._tracked is None:
            self._drop_after()
            self._after = _Ahead(self.store)

    def _drop_after(self) -> None:
        ahead, self._after = self._after, None
        if ahead is not None:
            ahead.drop()

    def outside_change(self) -> None:
        """Files may change outside a tool (a Stop hook): an "after" tree made before is
        stale, and a turn recorded from its files becomes a full one."""
        self._drop_after()
        if self._tracked is not None:
            self.before_write()

    def before_write(self, paths: list[Path] | None = None) -> None:
        """A tool that may change files is about to run: snapshot once per turn.

        ``paths``: the files the tool writes, when it names them
        (:func:`~reasonix.agent.snapedit.write_targets`). While every write of a turn
        does, the turn is recorded from those files alone (no scan of the tree); the
        first that does not makes it a full one.
        """
        self._drop_after()  # whatever it prepared, this write comes after it
        turn = self._turn
        if turn is None or turn.before == "-" or (turn.before and self._tracked is None):
            return
        try:
            if paths is None or not self._track(turn, paths):
                self._full_before(turn)
        except (SessionError, OSError) as exc:
            turn.before, self._tracked = "-", None  # no checkpoints for this turn or the next
            self._switch_off(exc)

    def _track(self, turn: Turn, paths: list[Path]) -> bool:
        """Record the files about to be written; False when the turn must be a full one."""
        from reasonix.agent.snapedit import TrackedTurn, Untrackable

        if self._before is not None:
            return False  # a full "before" tree is being prepared: it is taken
        tracked = self._tracked or TrackedTurn.start(self.store)
        if tracked is None:
            return False  # no snapshot yet to start from
        try:
            new, big = tracked.take(self.store, paths, checkpoints.FILE_LIMIT)
        except (Untrackable, OSError):  # a file it cannot read now: the whole tree decides
            return False
        self._tracked = tracked
        if not turn.before or tracked.before != self._committed:
            turn.before = self.store.commit(tracked.before, f"before turn {turn.number}")
            self._committed = tracked.before
        elif not new:
            return True
        turn.too_big = [*turn.too_big, *big]
        self._log_before(turn, tracked.names(), big)
        return True

    def _full_before(self, turn: Turn) -> None:
        """The turn's "before" from the whole tree (prepared ahead, or now)."""
        ahead, self._before = self._before, None
        tracked, self._tracked = self._tracked, None
        tree, turn.too_big = ahead.take() if ahead is not None else self.store.tree()
        if tracked is not None:  # the files it wrote so far, as they were before the turn
            tree = tracked.over(self.store.git_dir, self.store.read_tree, tree)
        turn.before = self.store.commit(tree, f"before turn {turn.number}")
        self._log_before(turn, None, turn.too_big)

    def _log_before(self, turn: Turn, paths: list[str] | None, big: list[str]) -> None:
        rec = {"type": "before", "session": turn.session, "turn": turn.number,
               "commit": turn.before, "too_big": turn.too_big}  # fmt: skip
        if paths is not None:  # recorded from these files alone (a killed turn's files)
            rec["paths"] = paths
        self.store.append(rec)
        if big:  # named once, when first met
            names = ", ".join(big[:5])
            self.notices.append(f"checkpoint: too big to keep (not restorable): {names}")

    def end(self) -> None:
        """The turn ended: snapshot again when it wrote anything.

        The snapshot is finished on a thread of its own (the turn's answer is
        not held up by git): reading the log (:meth:`CheckpointStore.records`,
        so every rewind and the next turn) waits for it, and so does the
        process's exit (the thread is not a daemon).
        """
        turn, self._turn = self._turn, None
        tracked, self._tracked, self._committed = self._tracked, None, ""
        unused, ahead, self._after, self._before = self._before, self._after, None, None
        if unused is not None:  # a turn that never wrote: no git may outlive the turn
            unused.drop()  # nobody takes its tree: it stops once git has listed the files
            unused.thread.join()
        if turn is None or not turn.before or turn.before == "-":
            return
        self.store.finish_later(
            lambda: self._record_after(turn, ahead, tracked), name="reasonix-checkpoint-end"
        )

    def _record_after(self, turn: Turn, ahead: _Ahead | None, tracked: TrackedTurn | None
                      ) -> None:  # fmt: skip
        try:
            with short_slices():
                if tracked is not None:  # the "before" tree with the turn's files as they are
                    tree = tracked.after_tree(self.store, checkpoints.FILE_LIMIT)
                else:
                    tree, _ = ahead.take() if ahead is not None else self.store.tree()
                after = self.store.commit(tree, f"after turn {turn.number}")
                # Git reads both snapshots back (what a rewind does first): a repository
                # damaged where our own writes do not look (HEAD, config, an old object)
                # is found at this turn, not at the rewind. Off the answer's path.
                self.store.changed(turn.before, after)
                self.store.append({"type": "after", "session": turn.session,
                                   "turn": turn.number, "commit": after})  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - on this thread, any failure is a notice
            self._switch_off(exc)
