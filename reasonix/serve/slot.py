"""One browser session: its event hub, its runtime while it is live, its running turn.

A slot holds a :class:`~reasonix.boot.Runtime` (and so the session's lease)
only while it is used: it is built through ``build_runtime`` when a prompt,
a command or a mode/model change needs it, and released after the session
has been idle for ``release_after`` seconds, so ``reasonix -c`` can take the
same transcript. The permission mode and model chosen in the browser are
re-applied when the runtime is built again; "allow for this session" grants
live as long as the runtime does (like a CLI process).

One turn runs at a time; it runs on its own thread and publishes every
Runner event to the hub. An approval request is published as a card and the
turn thread waits for an answer from any tab (or for the stop button).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.events import ApprovalRequested
from reasonix.agent.session import make_title, read_records
from reasonix.agent.telemetry import estimate_cost
from reasonix.boot import Runtime, RuntimeOptions, build_runtime
from reasonix.cancel import Cancel
from reasonix.errors import ReasonixError, SessionError

from .commands import Commands
from .hub import Hub
from .wire import approval_payload, event_payload, history_items

if TYPE_CHECKING:
    from typing import Any

    from reasonix.command.api import CommandTurn

__all__ = ["Busy", "Slot"]


class Busy(ReasonixError):
    """The session cannot take this request now (a turn runs, or another process has it)."""


class _Pending:
    """An approval card waiting for an answer."""

    def __init__(self, event: ApprovalRequested) -> None:
        self.event = event
        self.answered = threading.Event()
        self.choice = ""


def _preview(request: Any) -> str:
    """What the "always" rule would have approved before (the rule simulator), or ""."""
    preview = getattr(request, "preview", None)
    if preview is None or not request.suggested_rule:
        return ""
    try:
        return str(preview(request.suggested_rule))
    except (ReasonixError, OSError):
        return ""


class Slot:
    """The server side of one session (see the module docstring)."""

    def __init__(self, session_id: str, path: Path | None, workspace: Path) -> None:
        self.id, self.path, self.workspace = session_id, path, workspace
        self.hub = Hub()
        self.lock = threading.RLock()
        self.runtime: Runtime | None = None
        self.commands: Commands | None = None
        self.turn: threading.Thread | None = None
        self.cancel: Cancel | None = None
        self.pending: dict[str, _Pending] = {}
        self.base: tuple[int, int] | None = None  # (records, seq) when the running turn began
        self.last_active = time.monotonic()
        self.mode: str | None = None  # chosen in the browser; re-applied on rebuild
        self.model: str | None = None
        self.spent: dict[str, float] = {}  # cost of released runtimes, per currency
        self.known: dict[str, Any] = {}  # the last status, shown while not live
        self.first_prompt = ""  # the title-to-be until the agent writes the title record
        self.subagents: dict[str, dict[str, Any]] = {}  # this turn's sub-agents' last counters
        self._approvals = 0

    # -- the runtime ------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while a turn runs."""
        return self.turn is not None

    def attach(self, runtime: Runtime) -> None:
        """Adopt a freshly built runtime (a new session, or a /new that moved here)."""
        with self.lock:
            self.runtime, self.commands = runtime, None
            self.path = runtime.session.path
            self.last_active = time.monotonic()

    def ensure_runtime(self, build_lock: threading.Lock) -> Runtime:
        """The live runtime, built (taking the session's lease) when there is none."""
        with self.lock:
            if self.runtime is not None:
                return self.runtime
            if self.path is None:
                raise SessionError(f"session {self.id} has no transcript")
            try:
                with build_lock:
                    options = RuntimeOptions(
                        workspace=self.workspace, interactive=True, resume=str(self.path)
                    )
                    rt = build_runtime(options)
            except SessionError as err:  # the lease is held: the CLI or another server has it
                text = str(err).split("; add --copy")[0]
                raise Busy(f"{text}; finish there first, or start a new session here") from err
            try:
                if self.mode:
                    rt.set_mode(self.mode)
                if self.model:
                    rt.switch_model(self.model)
            except BaseException:
                rt.close()
                raise
            self.runtime = rt
            self.last_active = time.monotonic()
            return rt

    def release(self) -> bool:
        """Close the runtime (and release the lease) unless a turn runs; True if released."""
        with self.lock:
            rt = self.runtime
            if rt is None or self.busy:
                return False
            self.known = self.status()
            cost = estimate_cost(rt.telemetry.total, rt.price)
            if cost is not None:
                self.spent[cost.currency] = self.spent.get(cost.currency, 0.0) + cost.amount
            self.runtime, self.commands = None, None
        rt.close()
        self.hub.forget()  # the transcript holds it all now: no need to keep the events
        self.hub.publish(self.status())
        return True

    def command_registry(self) -> Commands:
        """The runtime's command registry (built on first use)."""
        with self.lock:
            rt = self.runtime
            if rt is None:
                raise SessionError("the session is not live")
            if self.commands is None:
                self.commands = Commands(rt, self._notify)
            return self.commands

    def _notify(self, text: str) -> None:
        self.hub.publish({"type": "notice", "kind": "command", "text": text})

    # -- what the page reads --------------------------------------------------------
    def records(self) -> Sequence[dict[str, Any]]:
        """The transcript: the live session's records, or the file's."""
        rt = self.runtime
        if rt is not None:
            return rt.session.records()
        return read_records(self.path) if self.path is not None and self.path.is_file() else []

    def title(self) -> str:
        """The session's latest title ("" before the first prompt)."""
        titles = [str(r.get("title", "")) for r in self.records() if r.get("type") == "title"]
        return titles[-1] if titles else self.first_prompt

    def history(self) -> dict[str, Any]:
        """The stored conversation plus the sequence number to stream from.

        During a turn this is the transcript as it was when the turn began and
        the number before the turn's first event, so the stream replays the
        whole running turn (nothing shown twice, nothing missed).
        """
        with self.lock:
            records = self.records()
            if self.base is not None:
                count, seq = self.base
                records = records[:count]  # a list slice of the snapshot
            else:
                seq = self.hub.head
            return {"id": self.id, "title": self.title(), "seq": seq,
                    "items": history_items(records), "status": self.status()}  # fmt: skip

    def status(self) -> dict[str, Any]:
        """The footer: model, mode, context, cache hit, cost, and whether a turn runs."""
        rt = self.runtime
        out: dict[str, Any] = {"type": "status", "session": self.id, "busy": self.busy,
                               "live": rt is not None}  # fmt: skip
        if rt is None:
            return {**self.known, **out, "mode": self.mode or self.known.get("mode", "")}
        tele = rt.telemetry
        ctx = rt.context
        window = int(getattr(ctx, "context_window", 0) or 0)
        if tele.per_request:
            last = tele.per_request[-1]
            used = last.input_tokens + last.output_tokens
        else:
            used = int(ctx.estimate()) if ctx is not None and not self.busy else 0
        cost = estimate_cost(tele.total, rt.price)
        currency = cost.currency if cost else next(iter(self.spent), "")
        amount = (cost.amount if cost else 0.0) + self.spent.get(currency, 0.0)
        ratio = tele.cache_hit_ratio
        return {**out, "model": rt.resolved.ref, "mode": rt.mode, "context_tokens": used,
                "context_window": window,
                "cache_hit": round(ratio, 4) if ratio is not None else None,
                "cost": round(amount, 6) if (cost or self.spent) else None,
                "currency": currency, "requests": len(tele.per_request),
                "subagents": list(self.subagents.values())}  # fmt: skip

    # -- turns ------------------------------------------------------------------------
    def start_turn(
        self,
        text: str,
        build_lock: threading.Lock,
        done: Callable[[], None],
        command: CommandTurn | None = None,
    ) -> None:
        """Run ``text`` as the next user turn on a new thread; Busy while one runs.

        ``command``: the CommandTurn of a command file (its allowed-tools, shell lines)."""
        with self.lock:
            if self.busy:
                raise Busy(
                    "a turn is already running in this session: wait for it to finish "
                    "or press Stop, then send again"
                )
            rt = self.ensure_runtime(build_lock)
            if not self.first_prompt:
                self.first_prompt = make_title(text)
            cancel = Cancel()
            self.cancel = cancel
            self.base = (len(rt.session.records()), self.hub.head)
            self.turn = threading.Thread(
                target=self._run, args=(rt, text, cancel, done, command),
                name=f"serve-turn-{self.id}",
                daemon=True,
            )  # fmt: skip
            self.subagents = {}
            self.hub.publish({"type": "user", "text": text})
            self.hub.publish({"type": "turn", "state": "start"})
            self.turn.start()

    def _run(
        self,
        rt: Runtime,
        text: str,
        cancel: Cancel,
        done: Callable[[], None],
        command: CommandTurn | None = None,
    ) -> None:
        from reasonix.boot.command_turn import run_turn

        publish = self.hub.publish
        reason = "error"
        try:
            expanded, notices = self.command_registry().expand(text)
            for note in notices:
                publish({"type": "notice", "kind": "reference", "text": note})
            for event in run_turn(rt, expanded, cancel, command):
                if isinstance(event, ApprovalRequested):
                    self._ask(event, cancel)
                    continue
                payload = event_payload(event)
                if payload is None:
                    continue
                if payload["type"] == "done":
                    reason = str(payload["reason"])
                if payload["type"] == "subagent":  # status() lists them while the turn runs
                    self.subagents[str(payload["run_id"])] = payload
                publish(payload)
                if payload["type"] == "usage":
                    publish(self.status())
        except ReasonixError as err:
            publish({"type": "error", "message": str(err)})
        except Exception as err:  # noqa: BLE001 - a bug ends the turn, never the server
            publish({"type": "error", "message": f"internal error: {type(err).__name__}: {err}"})
        finally:
            with self.lock:  # the next turn's events start after these
                for pending in self.pending.values():
                    pending.event.answer(None)
                self.pending.clear()
                self.turn, self.cancel, self.base = None, None, None
                self.last_active = time.monotonic()
                publish({"type": "turn", "state": "end", "reason": reason})
                publish(self.status())
            done()

    def _ask(self, event: ApprovalRequested, cancel: Cancel) -> None:
        """Publish an approval card and wait for a tab's answer (or the stop button)."""
        with self.lock:
            self._approvals += 1
            approval_id = f"a{self._approvals}"
            pending = _Pending(event)
            self.pending[approval_id] = pending
        self.hub.publish(approval_payload(approval_id, event.request, _preview(event.request)))
        remove = cancel.on_cancel(pending.answered.set)
        try:
            pending.answered.wait()
        finally:
            remove()
            with self.lock:
                self.pending.pop(approval_id, None)
        if not pending.choice:  # stopped: the gate treats no answer as deny
            event.answer(None)
            self.hub.publish({"type": "approval_done", "id": approval_id, "choice": "cancelled"})

    def answer(self, approval_id: str, choice: str) -> None:
        """A tab's answer to an approval card (once, session, always or deny)."""
        from reasonix.permission import ApprovalChoice

        with self.lock:
            pending = self.pending.get(approval_id)
            if pending is None:
                raise Busy(f"approval {approval_id} is no longer waiting (answered or stopped)")
            try:
                picked = ApprovalChoice(choice)
            except ValueError as err:
                raise ReasonixError(f"unknown choice {choice!r}") from err
            if picked not in pending.event.request.choices:
                raise ReasonixError(f"{choice!r} is not offered for this call")
            pending.choice = choice
            # Answered now, not when the waiting thread wakes: a second answer that comes
            # before it does is refused too (the first one wins).
            self.pending.pop(approval_id, None)
            pending.event.answer(picked)
            pending.answered.set()
        self.hub.publish({"type": "approval_done", "id": approval_id, "choice": choice})

    def stop(self) -> bool:
        """Cancel the running turn or command (the stop button); False when none runs."""
        with self.lock:
            if self.cancel is None:
                if self.commands is not None:
                    self.commands.interrupt()  # a long /compact or /mcp auth
                return False
            self.cancel.cancel("stopped from the browser")
            return True

    def close(self, timeout: float = 15.0) -> None:
        """Shutdown: stop the turn, wait for it, release the runtime, close the tabs."""
        self.stop()
        thread = self.turn
        if thread is not None:
            thread.join(timeout)
        with self.lock:
            rt, self.runtime = self.runtime, None
        if rt is not None:
            with contextlib.suppress(Exception):
                rt.close()
        self.hub.close()
