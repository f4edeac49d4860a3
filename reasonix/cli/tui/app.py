"""The chat view's loop: keys and Runner events in, frames out.

The UI thread owns the state and the screen. It paints the first frame at
once, then builds the runtime on a background thread (so start-up shows
something immediately); turns and slash commands also run on background
threads, which only *post* what happened to a queue (and poke a pipe to wake
the UI) — they never draw. The UI thread handles every waiting key before it
paints, and paints at most every :data:`FRAME` seconds while output streams.

No traceback reaches the screen: whatever goes wrong inside the loop, the
terminal is restored first (``finally``), then one line says what happened;
the session stays on disk (``reasonix -c`` resumes it).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import sys
import time

# threading (and queue, with heapq behind it) is loaded once the first frame is up: no
# thread runs before it, and the inbox is the C queue that queue.SimpleQueue names.
try:
    from _queue import Empty, SimpleQueue
except ImportError:  # an interpreter without CPython's C queue
    from queue import Empty, SimpleQueue  # type: ignore[assignment]

from typing import TYPE_CHECKING

from .control import Controls
from .facts import complete_ref, complete_slash
from .guard import Diverted, call_key, install_signals, report_crash, restore_signals
from .screen import Screen
from .state import (
    ApprovalOverlay,
    AppState,
    ConfirmOverlay,
    NoticeBlock,
    PickerItemView,
    PickerOverlay,
    UserBlock,
)
from .view import render_frame, tail_rows

if TYPE_CHECKING:
    import argparse
    import threading
    from typing import Any

    from .control import Action

__all__ = ["App", "run"]

FRAME = 1 / 60  # seconds between paints while output streams
BUSY_WAIT = 0.1  # seconds between spinner steps while something runs (idle: no timer at all)
MODE_CYCLE = ("ask", "auto", "plan")
KEYS = """\
keys: Enter sends · Ctrl-J or Alt-Enter: new line · Up/Down: history · Tab: complete
      Shift-Tab: mode ask → auto → plan · Esc or Ctrl-C: cancel the turn · Ctrl-O: details
      PgUp/PgDn: scroll · Ctrl-Home/Ctrl-End (Home/End, empty composer): top/bottom
      Ctrl-D (or Ctrl-C twice): leave · `reasonix -c` resumes"""


class _Answer:
    """Answers an ApprovalRequested event and wakes the turn's thread waiting for it."""

    def __init__(self, event: Any) -> None:
        import threading

        self.event, self.done = event, threading.Event()

    def answer(self, choice: Any) -> None:
        self.event.answer(choice)
        self.done.set()


class App:
    """One chat view session; :meth:`run` returns the exit code."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.state = AppState(busy="starting")
        self.inbox: SimpleQueue[tuple[str, tuple[Any, ...]]] = SimpleQueue()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.rt: Any = None
        self.commands: Any = None
        self.history: Any = None
        self.cancel: Any = None
        self.job: threading.Thread | None = None
        self.quit = False
        self.boot_error: BaseException | None = None
        self.first_mode = ""
        self.controls = Controls(
            self.state,
            complete_slash=lambda prefix: complete_slash(self.commands, prefix),
            complete_ref=lambda word: complete_ref(self.commands, word),
            remember=self._remember,
        )
        self.screen: Screen | None = None
        self.booting: threading.Thread | None = None
        self.pending: list[str] = []  # prompts submitted before the runtime was ready
        self._lock = _thread.allocate_lock()  # threading.Lock, before threading is loaded
        self._closed = False  # the wake-up pipe is closed
        self._dirty = True
        self._last_paint = 0.0
        self._last_tick = 0.0
        self.wakes: dict[str, int] = {}  # what woke the loop, counted (Screen.wait's causes)
        self.status_line: Any = None  # the user's status command (statusline.RuntimeStatusLine)

    # -- cross-thread posting ------------------------------------------------------
    def post(self, kind: str, *payload: Any) -> None:
        """Hand something to the UI thread (any thread may call this)."""
        self.inbox.put((kind, payload))
        with self._lock:  # never write to the pipe's number once closed: it may be reused
            if not self._closed:
                with contextlib.suppress(OSError):
                    os.write(self.wake_w, b".")

    # -- the loop --------------------------------------------------------------------
    def run(self) -> int:
        """Run until the user leaves; the terminal is restored whatever happens."""
        crashed: BaseException | None = None
        previous = install_signals(self.wake_w)
        diverted = Diverted(self)
        saved_stderr, saved_hook = sys.stderr, None
        try:
            # While curses owns the terminal nothing may write to it behind the view's back:
            # stray stderr lines and a dying thread's traceback become notices.
            sys.stderr = diverted
            with Screen() as screen:
                self.screen = screen
                self._paint(force=True)
                import threading  # the first frame is up; now the threads beside it

                saved_hook, threading.excepthook = threading.excepthook, diverted.thread_died
                self.booting = threading.Thread(
                    target=self._boot, name="reasonix-boot", daemon=True
                )
                self.booting.start()
                self._loop(screen)
        except KeyboardInterrupt:
            pass  # a SIGINT/SIGTERM/SIGHUP from outside: leave like Ctrl-D
        except Exception as err:  # noqa: BLE001 - the view's own bug must not leave a broken tty
            crashed = err
        finally:
            sys.stderr = saved_stderr
            if saved_hook is not None:
                import threading

                threading.excepthook = saved_hook
            restore_signals(previous)
            self._shutdown()
        if self.boot_error is not None:
            raise self.boot_error  # main's error boundary reports it (and may offer setup)
        if crashed is not None:
            report_crash(crashed, self.rt)
            return 1
        if self.rt is not None:
            print(f"session {self.rt.session.id} saved · `reasonix -c` resumes it")
        return 0

    def _loop(self, screen: Screen) -> None:
        while not self.quit:
            cause = screen.wait(self._timeout(), self.wake_r)
            self.wakes[cause] = self.wakes.get(cause, 0) + 1
            self._check_size(screen)
            keys = screen.keys()
            for key in keys:
                self._act_all(self.controls.key(key))
            self._drain()
            now = time.monotonic()
            if self.state.busy and now - self._last_tick >= BUSY_WAIT:
                self.state.tick += 1
                self._last_tick = now
                self._dirty = True
            if self._dirty and (keys or now - self._last_paint >= FRAME):
                self._paint()

    def _timeout(self) -> float | None:
        """How long the loop may sleep: to the next frame (output waits to be painted) or
        spinner step (something runs); idle, None: only a key, a post or SIGWINCH wakes it."""
        now = time.monotonic()
        if self._dirty:
            return max(0.0, FRAME - (now - self._last_paint))
        if self.state.busy:
            return max(0.0, BUSY_WAIT - (now - self._last_tick))
        return None

    def _check_size(self, screen: Screen) -> None:
        try:
            cols, lines = os.get_terminal_size(sys.stdout.fileno())
        except OSError:
            return
        if (lines, cols) != screen.size():
            screen.resize(lines, cols)
            self._dirty = True

    def _paint(self, force: bool = False) -> None:
        assert self.screen is not None
        if force:
            self.screen.invalidate()
        height, width = self.screen.size()
        frame = render_frame(self.state, width, height)
        self.state.page = frame.transcript_rows
        self.state.panel_page = frame.panel_page or self.state.panel_page
        if self.state.scroll > frame.max_scroll:
            self.state.scroll = frame.max_scroll
            frame = render_frame(self.state, width, height)
        self.screen.draw(frame.rows, frame.cursor)
        self._dirty = False
        self._last_paint = time.monotonic()

    # -- actions from keys -------------------------------------------------------------
    def _act_all(self, actions: list[Action]) -> None:
        self._dirty = True
        for action in actions:
            self._act(action)

    def _act(self, action: Action) -> None:
        kind = action[0]
        if kind == "quit":
            self.quit = True
        elif kind == "redraw":
            self._paint(force=True)
        elif kind == "cancel":
            if self.cancel is not None:
                self.cancel.cancel("cancelled by the user")
                self.state.busy = "cancelling"
                if self.commands is not None:
                    self.commands.interrupt()  # a long command (/compact, /mcp auth)
        elif kind == "answer":
            overlay: ApprovalOverlay = action[1]
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
            overlay.event.answer(action[2])
        elif kind == "mode":
            self._cycle_mode()
        elif kind == "submit":
            self._submit(action[1])
        elif kind == "command":
            self._start_command(action[1], echo=False)
        elif kind == "grant-budget":  # the same amount again, from what is spent now
            self.rt.run_budget.grant(self.rt.telemetry.total, self.rt.price)
            self._refresh_status()
            self._notice(f"granted: {self.state.status.budget}; send a message to go on")

    def _preview_rule(self, overlay: ApprovalOverlay, preview: Any) -> None:
        """Replay the "always" rule on the project's recorded calls (a thread: it reads
        sessions), then ask whether to save it; the turn waits for the answer."""
        rule = overlay.request.suggested_rule
        self.state.hint = "checking the rule against earlier calls…"

        def work() -> None:
            try:
                text = str(preview(rule))
            except Exception as err:  # noqa: BLE001 - no preview is not a reason to fail
                text = f"(the rule simulator failed: {err})"
            self.post("always-preview", overlay, text)

        import threading

        threading.Thread(target=work, name="reasonix-preview", daemon=True).start()

    def _confirm_always(self, overlay: ApprovalOverlay, text: str) -> None:
        from reasonix.permission import ApprovalChoice

        from .ingest import clean

        self.state.hint = ""
        rule = clean(str(overlay.request.suggested_rule))
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
        if self.commands is None:  # not ready yet (see _submit)
            return
        cycle = list(MODE_CYCLE)
        if self.first_mode and self.first_mode not in cycle:
            cycle.append(self.first_mode)  # a started-with mode (yolo …) stays reachable
        current = self.rt.mode
        nxt = cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else cycle[0]
        try:
            self.state.status.mode = self.rt.set_mode(nxt)
            self._refresh_status()  # the status command hears of the new mode
        except Exception as err:  # noqa: BLE001 - a refused mode is a notice
            self._notice(f"mode {nxt}: {err}", "error")

    def _submit(self, text: str) -> None:
        # ``commands`` is set on this thread by _ready; ``rt`` is set earlier, by the boot
        # thread, so testing ``rt`` here would let a line through before the view is ready.
        if self.commands is None:  # typed while the runtime is still being built: send when ready
            self.pending.append(text)
            self.state.hint = "sending when ready…"
            return
        if self.commands.is_command(text.strip()):
            self._start_command(text.strip(), echo=True)
        else:
            self._start_turn(self.commands.plain(text), text)

    # -- background jobs: turns and commands ---------------------------------------------
    def _start_job(self, busy: str, target: Any, *args: Any) -> None:
        import threading

        from reasonix.cancel import Cancel

        self.cancel = Cancel()
        self.state.busy = busy
        self.job = threading.Thread(target=target, args=(*args, self.cancel), daemon=True)
        self.job.start()

    def _start_turn(self, prompt: str, shown: str, command: Any = None) -> None:
        from .ingest import clean

        self.state.transcript.add(UserBlock(clean(shown)))
        self._start_job("working", self._turn, prompt, command)

    def _turn(self, prompt: str, command: Any, cancel: Any) -> None:
        """One turn; ``command``: a command file's CommandTurn (allowed-tools, shell lines)."""
        from reasonix.agent.events import ApprovalRequested, ToolStart
        from reasonix.boot.command_turn import run_turn

        from .ingest import diff_for

        ws = self.rt.workspace
        asked: set[str] = set()
        try:
            prompt, notices = self.commands.expand(prompt)
            for note in notices:
                self.post("notice", note, "warn")
            for event in run_turn(self.rt, prompt, cancel, command):
                if isinstance(event, ApprovalRequested):
                    req = event.request
                    asked.add(call_key(req.tool_name, req.args))
                    answer = _Answer(event)
                    diff = diff_for(req.tool_name, req.args, ws)
                    self.post("event", event, {"diff": diff, "answer": answer})
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
                self.post("event", event, extra)
        except Exception as err:  # noqa: BLE001 - a failed turn is shown, the view goes on
            self.post("notice", f"the turn failed: {type(err).__name__}: {err}", "error")
        finally:
            self.post("job-done")
            self.commands.refresh_resources()  # servers may have changed (for @ completion)

    def _start_command(self, line: str, *, echo: bool) -> None:
        if self.commands is None:  # not ready yet (see _submit)
            return
        if echo:
            from .ingest import clean

            self.state.transcript.add(UserBlock(clean(line)))
        self._start_job("running " + line.split()[0], self._command, line)

    def _command(self, line: str, cancel: Any) -> None:
        before = self.rt.session.id
        try:
            result = self.commands.run(line)
        except Exception as err:  # noqa: BLE001 - a command bug is a notice, never a crash
            self.post("notice", f"{line.split()[0]} failed: {type(err).__name__}: {err}", "error")
            self.post("job-done")
            return
        self.post("command-done", line, result, before)
        context = self.rt.context
        if self.rt.session.id != before and context is not None:  # the footer's new figure
            with contextlib.suppress(Exception):
                self.post("context", context.estimate())

    # -- what the background threads posted ------------------------------------------------
    def _drain(self) -> None:
        if self.inbox.empty():
            return
        # Scrolled up: new output below must not move what the user is reading.
        width = self.screen.size()[1] if self.screen is not None else 80
        blocks = self.state.transcript.blocks
        first = max(0, len(blocks) - 1)
        before = tail_rows(self.state, width, first) if self.state.scroll else 0
        while True:
            try:
                kind, payload = self.inbox.get_nowait()
            except Empty:
                break
            self._dirty = True
            self._handle(kind, payload)
        if self.state.scroll and len(self.state.transcript.blocks) > first:
            self.state.scroll += tail_rows(self.state, width, first) - before

    def _handle(self, kind: str, payload: tuple[Any, ...]) -> None:
        from .ingest import apply_event

        if kind == "event":
            event, extra = payload
            apply_event(self.state, event, extra)
            if getattr(event, "reason", None) == "budget" and type(event).__name__ == "Done":
                question = "the run budget is spent; grant the same amount again?"
                self.state.overlays.append(
                    ConfirmOverlay(question, yes=("grant-budget",), title="budget spent")
                )  # issue 36: y (or Enter) grants, n/Esc does not
            self._refresh_status()
        elif kind == "notice":
            self._notice(*payload)
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
            self._dirty = True
        elif kind == "always-preview":
            self._confirm_always(*payload)
        elif kind == "boot-error":
            self.boot_error = payload[0]
            self.quit = True

    def _notice(self, text: str, kind: str = "notice") -> None:
        from .ingest import clean

        self.state.transcript.add(NoticeBlock(clean(text), kind))

    def _job_done(self) -> None:
        self.state.busy = ""
        self.cancel = None
        self.state.overlays[:] = [  # the questions of a turn that has ended
            o
            for o in self.state.overlays
            if not isinstance(o, ApprovalOverlay) and getattr(o, "approval", None) is None
        ]
        self.state.transcript.close_streams()
        self._refresh_status()

    def _command_done(self, line: str, result: Any, session_before: str) -> None:
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
            self.quit = True
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
        self._refresh_status()

    # -- start-up ------------------------------------------------------------------------
    def _boot(self) -> None:
        """Build the runtime and the command layer (background thread)."""
        try:
            from reasonix.boot import build_runtime
            from reasonix.cli.setup_run import options_from_args

            rt = build_runtime(options_from_args(self.args, interactive=True))
        except BaseException as err:  # noqa: BLE001 - reported by main after the screen closes
            self.post("boot-error", err)
            return
        try:
            from .bridge import Commands
            from .history import PromptHistory, history_path
            from .ingest import blocks_from_messages

            commands = Commands(rt, notify=lambda text: self.post("notice", text, "info"))
            history = PromptHistory(history_path(rt.workspace))
            past = history.load()
            blocks = blocks_from_messages(rt.session.messages()) if rt.resumed else []
        except BaseException as err:  # noqa: BLE001
            rt.close()
            self.post("boot-error", err)
            return
        with self._lock:
            if self.quit:  # the user left while we were starting
                rt.close()
                return
            self.rt = rt
        self.post("ready", commands, history, past, blocks)
        commands.refresh_resources()
        context = rt.context
        if context is not None:
            with contextlib.suppress(Exception):
                self.post("context", context.estimate())

    def _ready(self, commands: Any, history: Any, past: list[str], blocks: list[Any]) -> None:
        from .ingest import clean

        rt = self.rt
        self.commands, self.history = commands, history
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
        from .statusline import runner_for

        self.status_line = runner_for(rt, lambda line: self.post("status-line", line))
        for note in [*rt.notices, *commands.notices]:
            t.add(NoticeBlock(clean(str(note)), "warn"))
        self._refresh_status()
        if getattr(self.args, "compact", False):
            self._start_command("/compact", echo=True)
        elif self.pending:
            self.state.hint = ""
            self._submit(self.pending.pop(0))  # one turn at a time: the rest stay in history

    def _refresh_status(self) -> None:
        if self.rt is None:
            return
        from .facts import refresh_facts

        refresh_facts(self.rt, self.state.status)
        if self.status_line is not None:
            self.status_line.update(self.rt, self.state.status)

    def _remember(self, text: str) -> None:
        if self.history is not None:
            self.history.add(text)

    # -- leaving -----------------------------------------------------------------------------
    def _shutdown(self) -> None:
        with self._lock:
            self.quit = True
        if self.status_line is not None:
            self.status_line.close()
        if self.cancel is not None:
            self.cancel.cancel("the chat view closed")
        for overlay in self.state.overlays:
            if isinstance(overlay, ApprovalOverlay):
                with contextlib.suppress(Exception):
                    overlay.event.answer(None)
        for thread in (self.job, self.booting):
            if thread is not None:
                thread.join(timeout=5)
        if self.rt is not None:
            with contextlib.suppress(Exception):
                self.rt.close()
        with self._lock:
            self._closed = True
            for fd in (self.wake_r, self.wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)


def run(args: argparse.Namespace) -> int:
    """Run the chat view for parsed chat flags."""
    return App(args).run()
