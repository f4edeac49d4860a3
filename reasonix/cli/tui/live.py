"""The chat view's runtime half: turns, commands, approvals and the footer's facts.

:mod:`reasonix.cli.tui.app` paints the first frame and runs the key loop; this
module is imported by its boot thread once that frame is up. :func:`boot`
builds the runtime and the command layer and hands the view a :class:`Live`,
which the UI thread takes when it handles the "ready" post. Turns and slash
commands run on background threads that only post what happened; everything
else here runs on the UI thread.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from .app import Backend
from .guard import call_key
from .state import (
    ApprovalOverlay,
    ConfirmOverlay,
    NoticeBlock,
    PickerItemView,
    PickerOverlay,
    Status,
    UserBlock,
)

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from reasonix.agent.events import ApprovalRequested
    from reasonix.boot import Runtime
    from reasonix.cancel import Cancel
    from reasonix.command.api import CommandResult, CommandTurn

    from .app import App
    from .bridge import Commands
    from .control import Action
    from .history import PromptHistory

__all__ = ["Live", "boot"]

MODE_CYCLE = ("ask", "auto", "plan")
KEYS = """\
keys: Enter sends · Ctrl-J or Alt-Enter: new line · Up/Down: history · Tab: complete
      Shift-Tab: mode ask → auto → plan · Esc or Ctrl-C: cancel the turn · Ctrl-O: details
      PgUp/PgDn: scroll · Ctrl-Home/Ctrl-End (Home/End, empty composer): top/bottom
      Ctrl-D (or Ctrl-C twice): leave · `reasonix -c` resumes"""


def boot(app: App) -> None:
    """Build the runtime and the command layer (the boot thread), then post "ready"."""
    try:
        from reasonix.boot import build_runtime
        from reasonix.cli.setup_run import options_from_args

        rt = build_runtime(options_from_args(app.args, interactive=True))
    except BaseException as err:  # noqa: BLE001 - reported by main after the screen closes
        app.post("boot-error", err)
        return
    try:
        from .bridge import Commands
        from .history import PromptHistory, history_path
        from .ingest import blocks_from_messages

        commands = Commands(rt, notify=lambda text: app.post("notice", text, "info"))
        history = PromptHistory(history_path(rt.workspace))
        past = history.load()
        blocks = blocks_from_messages(rt.session.messages()) if rt.resumed else []
    except BaseException as err:  # noqa: BLE001
        rt.close()
        app.post("boot-error", err)
        return
    with app._lock:
        if app.quit:  # the user left while we were starting
            rt.close()
            return
        app.built = Live(app, rt, commands, history)
    app.post("ready", past, blocks)
    commands.refresh_resources()
    context = rt.context
    if context is not None:
        with contextlib.suppress(Exception):
            app.post("context", context.estimate())


class _Answer:
    """Answers an ApprovalRequested event and wakes the turn's thread waiting for it."""

    def __init__(self, event: ApprovalRequested) -> None:
        import threading

        self.event, self.done = event, threading.Event()

    def answer(self, choice: Any) -> None:
        self.event.answer(choice)
        self.done.set()


def _answer(overlay: ApprovalOverlay, choice: Any) -> None:
    """Answer the approval ``overlay`` asks: its event is the turn's ApprovalRequested, or
    the :class:`_Answer` that also wakes the waiting turn (ingest.apply_event)."""
    from reasonix.agent.events import ApprovalRequested

    event = overlay.event
    assert isinstance(event, (_Answer, ApprovalRequested))
    event.answer(choice)


class Live(Backend):
    """The runtime, its command layer and the prompt history, driving one :class:`App`."""

    def __init__(
        self, app: App, rt: Runtime, commands: Commands, history: PromptHistory | None = None
    ) -> None:
        self.app, self.state = app, app.state
        self.rt, self.commands, self.history = rt, commands, history
        self.cancel: Cancel | None = None
        self.job: threading.Thread | None = None
        self.first_mode = ""
        self.status_line: Any = None  # the user's status command (statusline.RuntimeStatusLine)

    def session_id(self) -> str:
        """The session the runtime writes."""
        return str(self.rt.session.id)

    def complete_slash(self, prefix: str) -> list[tuple[str, str]]:
        """``/`` completions (name, description); none rather than a crash."""
        from .ingest import clean_line

        try:
            return [(t, clean_line(d)) for t, d in self.commands.complete(prefix)]
        except Exception:  # noqa: BLE001 - no candidates rather than a crash
            return []

    def complete_ref(self, word: str) -> list[tuple[str, str]]:
        """``@`` completions (path, description); none rather than a crash."""
        from .ingest import clean_line

        try:
            return [(clean_line(t), clean_line(d)) for t, d in self.commands.complete_ref(word)]
        except Exception:  # noqa: BLE001
            return []

    def remember(self, text: str) -> None:
        """Keep a sent prompt in the project's history."""
        if self.history is not None:
            self.history.add(text)

    # -- actions from keys -------------------------------------------------------------
    def act(self, action: Action) -> None:
        """A key's action that needs the runtime."""
        kind = action[0]
        if kind == "cancel":
            if self.cancel is not None:
                self.cancel.cancel("cancelled by the user")
                self.state.busy = "cancelling"
                self.commands.interrupt()  # a long command (/compact, /mcp auth)
        elif kind == "answer":
            overlay = action[1]
            assert isinstance(overlay, ApprovalOverlay)  # control.py and _confirm_always
            if overlay in self.state.overlays:
                self.state.overlays.remove(overlay)
            preview = getattr(overlay.request, "preview", None)
            if (
                getattr(action[2], "name", "") == "ALWAYS"
                and preview is not None
                and not action[3:]
            ):
                self._preview_rule(overlay, preview)  # show what the rule would allow first
                return
            _answer(overlay, action[2])
        elif kind == "mode":
            self._cycle_mode()
        elif kind == "submit":
            self.submit(str(action[1]))
        elif kind == "command":
            self._start_command(str(action[1]), echo=False)
        elif kind == "grant-budget":  # the same amount again, from what is spent now
            self.rt.run_budget.grant(self.rt.telemetry.total, self.rt.price)
            self.refresh_status()
            self.app.notice(f"granted: {self.state.status.budget}; send a message to go on")

    def _preview_rule(self, overlay: ApprovalOverlay, preview: Callable[[Any], object]) -> None:
        """Replay the "always" rule on the project's recorded calls (a thread: it reads
        sessions), then ask whether to save it; the turn waits for the answer."""
        rule = getattr(overlay.request, "suggested_rule", None)
        self.state.hint = "checking the rule against earlier calls…"

        def work() -> None:
            try:
                text = str(preview(rule))
            except Exception as err:  # noqa: BLE001 - no preview is not a reason to fail
                text = f"(the rule simulator failed: {err})"
            self.app.post("always-preview", overlay, text)

        import threading

        threading.Thread(target=work, name="reasonix-preview", daemon=True).start()

    def _confirm_always(self, overlay: ApprovalOverlay, text: str) -> None:
        from reasonix.permission import ApprovalChoice

        from .ingest import clean

        self.state.hint = ""
        rule = clean(str(getattr(overlay.request, "suggested_rule", "")))
        question = (
            f"{clean(text)}\n\nsave {rule} to ./reasonix.toml? (n: allow it for this session only)"
        )
        confirm = ConfirmOverlay(
            question,
            yes=("answer", overlay, ApprovalChoice.ALWAYS, "confirmed"),
            no=("answer", overlay, ApprovalChoice.SESSION),
            title=f"always allow {rule}?",
        )
        confirm.approval = overlay
        self.state.overlays.append(confirm)

    def _cycle_mode(self) -> None:
        cycle = list(MODE_CYCLE)
        if self.first_mode and self.first_mode not in cycle:
            cycle.append(self.first_mode)  # a started-with mode (yolo …) stays reachable
        current = self.rt.mode
        nxt = cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else cycle[0]
        try:
            self.state.status.mode = self.rt.set_mode(nxt)
            self.refresh_status()  # the status command hears of the new mode
        except Exception as err:  # noqa: BLE001 - a refused mode is a notice
            self.app.notice(f"mode {nxt}: {err}", "error")

    def submit(self, text: str) -> None:
        """Send a line: a slash command, or a prompt for a turn."""
        if self.commands.is_command(text.strip()):
            self._start_command(text.strip(), echo=True)
        else:
            self._start_turn(self.commands.plain(text), text)

    # -- background jobs: turns and commands ---------------------------------------------
    def _start_job(self, busy: str, target: Callable[..., None], *args: Any) -> None:
        import threading

        from reasonix.cancel import Cancel

        self.cancel = Cancel()
        self.state.busy = busy
        self.job = threading.Thread(target=target, args=(*args, self.cancel), daemon=True)
        self.job.start()

    def _start_turn(self, prompt: str, shown: str, command: CommandTurn | None = None) -> None:
        from .ingest import clean

        self.state.transcript.add(UserBlock(clean(shown)))
        self._start_job("working", self._turn, prompt, command)

    def _turn(self, prompt: str, command: CommandTurn | None, cancel: Cancel) -> None:
        """One turn; ``command``: a command file's CommandTurn (allowed-tools, shell lines)."""
        from reasonix.agent.events import ApprovalRequested, ToolStart
        from reasonix.boot.command_turn import run_turn

        from .ingest import diff_for

        post = self.app.post
        ws = self.rt.workspace
        asked: set[str] = set()
        try:
            prompt, notices = self.commands.expand(prompt)
            for note in notices:
                post("notice", note, "warn")
            for event in run_turn(self.rt, prompt, cancel, command):
                if isinstance(event, ApprovalRequested):
                    req = event.request
                    asked.add(call_key(req.tool_name, req.args))
                    answer = _Answer(event)
                    diff = diff_for(req.tool_name, req.args, ws)
                    post("event", event, {"diff": diff, "answer": answer})
                    forget = cancel.on_cancel(answer.done.set)  # no polling: a cancel wakes it
                    answer.done.wait()
                    forget()
                    continue
                extra: dict[str, Any] = {}
                if isinstance(event, ToolStart) and not event.read_only:
                    from reasonix.provider.types import arguments_object

                    args = arguments_object(event.arguments)
                    if call_key(event.name, args) not in asked:
                        extra["diff"] = diff_for(event.name, args, ws)
                post("event", event, extra)
        except Exception as err:  # noqa: BLE001 - a failed turn is shown, the view goes on
            post("notice", f"the turn failed: {type(err).__name__}: {err}", "error")
        finally:
            post("job-done")
            self.commands.refresh_resources()  # servers may have changed (for @ completion)

    def _start_command(self, line: str, *, echo: bool) -> None:
        if echo:
            from .ingest import clean

            self.state.transcript.add(UserBlock(clean(line)))
        self._start_job("running " + line.split()[0], self._command, line)

    def _command(self, line: str, cancel: Cancel) -> None:
        post = self.app.post
        before = self.rt.session.id
        try:
            result = self.commands.run(line)
        except Exception as err:  # noqa: BLE001 - a command bug is a notice, never a crash
            post("notice", f"{line.split()[0]} failed: {type(err).__name__}: {err}", "error")
            post("job-done")
            return
        post("command-done", line, result, before)
        context = self.rt.context
        if self.rt.session.id != before and context is not None:  # the footer's new figure
            with contextlib.suppress(Exception):
                post("context", context.estimate())

    # -- what the background threads posted ------------------------------------------------
    def handle(self, kind: str, payload: tuple[Any, ...]) -> None:
        """What a background thread posted (UI thread)."""
        from .ingest import apply_event

        if kind == "event":
            event, extra = payload
            apply_event(self.state, event, extra)
            if getattr(event, "reason", None) == "budget" and type(event).__name__ == "Done":
                question = "the run budget is spent; grant the same amount again?"
                self.state.overlays.append(
                    ConfirmOverlay(question, yes=("grant-budget",), title="budget spent")
                )  # issue 36: y (or Enter) grants, n/Esc does not
            self.refresh_status()
        elif kind == "job-done":
            self._job_done()
        elif kind == "command-done":
            self._command_done(*payload)
        elif kind == "ready":
            self._ready(*payload)
        elif kind == "context":
            if self.state.status.context_used is None:
                self.state.status.context_used = payload[0]
        elif kind == "status-line":
            self.state.status.script = payload[0]
        elif kind == "always-preview":
            self._confirm_always(*payload)

    def _job_done(self) -> None:
        self.state.busy = ""
        self.cancel = None
        self.state.overlays[:] = [  # the questions of a turn that has ended
            o
            for o in self.state.overlays
            if not isinstance(o, ApprovalOverlay) and getattr(o, "approval", None) is None
        ]
        self.state.transcript.close_streams()
        self.refresh_status()

    def _command_done(self, line: str, result: CommandResult, session_before: str) -> None:
        from .ingest import blocks_from_messages, clean

        self._job_done()
        if self.rt.session.id != session_before:  # /new, /clear, /resume, /rewind
            self.state.transcript.blocks.clear()
            self.state.transcript.blocks.extend(blocks_from_messages(self.rt.session.messages()))
            self.state.status.context_used = None
            self.state.scroll = 0
        text = result.text
        if text and not result.error and line.split() in (["/help"], ["/"]):
            text += "\n" + KEYS
        if text:
            self.state.transcript.add(NoticeBlock(clean(text), "error" if result.error else "info"))
        if result.exit:
            self.app.quit = True
        elif result.picker:
            items = [
                PickerItemView(clean(p.label), p.value, clean(p.description)) for p in result.picker
            ]
            title = clean(result.picker_title or line.split()[0])
            self.state.overlays.append(PickerOverlay(title, items, result.picker_command))
        elif result.confirm:
            self.state.overlays.append(
                ConfirmOverlay(clean(result.confirm), result.confirm_command)
            )
        elif result.prompt:
            self._start_turn(result.prompt, line, result.turn)
        self.refresh_status()

    def _ready(self, past: list[str], blocks: list[Any]) -> None:
        from .ingest import clean
        from .statusline import runner_for

        rt = self.rt
        self.state.composer.history[:0] = past
        self.first_mode = rt.mode
        self.state.busy = ""
        t = self.state.transcript
        t.blocks[:0] = blocks
        what = "resumed" if rt.resumed else "new"
        banner = (
            f"reasonix · {rt.resolved.ref} · {rt.workspace}\n"
            f"{what} session {rt.session.id} · /help for commands · Ctrl-D leaves"
        )
        t.blocks.insert(0, NoticeBlock(clean(banner), "notice"))
        self.status_line = runner_for(rt, lambda line: self.app.post("status-line", line))
        for note in [*rt.notices, *self.commands.notices]:
            t.add(NoticeBlock(clean(str(note)), "warn"))
        self.refresh_status()
        if getattr(self.app.args, "compact", False):
            self._start_command("/compact", echo=True)
        elif self.app.pending:
            self.state.hint = ""
            self.submit(self.app.pending.pop(0))  # one turn at a time: the rest stay in history

    def refresh_status(self) -> None:
        """The footer's facts from the runtime, and the user's status command told of them."""
        refresh_facts(self.rt, self.state.status)
        if self.status_line is not None:
            self.status_line.update(self.rt, self.state.status)

    # -- leaving -----------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the status command and a running job, then close the runtime."""
        if self.status_line is not None:
            self.status_line.close()
        if self.cancel is not None:
            self.cancel.cancel("the chat view closed")
        for overlay in self.state.overlays:
            if isinstance(overlay, ApprovalOverlay):
                with contextlib.suppress(Exception):
                    _answer(overlay, None)
        if self.job is not None:
            self.job.join(timeout=5)
        with contextlib.suppress(Exception):
            self.rt.close()


def refresh_facts(rt: Runtime, s: Status) -> None:
    """Model, mode, session, context, cache hits, cost and budget left, from ``rt``."""
    from reasonix.agent.telemetry import estimate_cost

    s.model, s.mode, s.session = rt.resolved.ref, rt.mode, rt.session.id
    context = rt.context
    if context is not None:
        s.context_window = int(getattr(context, "context_window", 0) or 0)
        s.compact_at = int(getattr(context, "trigger", 0) or 0)
    telemetry = rt.telemetry
    s.cache_ratio = telemetry.cache_hit_ratio
    cost = estimate_cost(telemetry.total, rt.price)
    s.cost = str(cost) if cost is not None else ""
    s.budget = rt.run_budget.remaining(telemetry.total, rt.price)
