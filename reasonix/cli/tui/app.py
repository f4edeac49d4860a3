"""The chat view's loop: keys and Runner events in, frames out.

The UI thread owns the state and the screen. It paints the first frame at
once, then builds the runtime on a background thread (so start-up shows
something immediately); turns and slash commands also run on background
threads, which only *post* what happened to a queue (and poke a pipe to wake
the UI) — they never draw. The UI thread handles every waiting key before it
paints, and paints at most every :data:`FRAME` seconds while output streams.

This module is the view's half that the first frame needs; the runtime's half
(turns, commands, approvals, the footer's facts) is :mod:`reasonix.cli.tui.live`,
imported by the boot thread. It names no runtime type, so it loads no
``typing`` either: what it asks of the runtime is the plain base class
:class:`Backend`.

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

from .control import Action, Controls
from .guard import Diverted, install_signals, report_crash, restore_signals
from .screen import Screen
from .state import AppState, NoticeBlock
from .view import render_frame, tail_rows

__all__ = ["App", "Backend", "run"]

FRAME = 1 / 60  # seconds between paints while output streams
BUSY_WAIT = 0.1  # seconds between spinner steps while something runs (idle: no timer at all)


class Backend:
    """What the view asks of the runtime once the boot thread has built it.

    :class:`reasonix.cli.tui.live.Live` is the one implementation; a plain base
    class rather than a ``typing.Protocol`` because this module is on the first
    frame's path.
    """

    def session_id(self) -> str:
        """The session the runtime writes (named when the view leaves)."""
        raise NotImplementedError

    def act(self, action: Action) -> None:
        """A key's action that needs the runtime: submit, command, mode, cancel, answer…"""
        raise NotImplementedError

    def handle(self, kind: str, payload: tuple[object, ...]) -> None:
        """Something a background thread posted: an event, a finished job or command…"""
        raise NotImplementedError

    def complete_slash(self, prefix: str) -> list[tuple[str, str]]:
        """``/`` completions (name, description)."""
        raise NotImplementedError

    def complete_ref(self, word: str) -> list[tuple[str, str]]:
        """``@`` completions (path, description)."""
        raise NotImplementedError

    def remember(self, text: str) -> None:
        """Keep a sent prompt in the project's history."""
        raise NotImplementedError

    def close(self) -> None:
        """On leaving: stop the status command and a running job, close the runtime."""
        raise NotImplementedError


class App:
    """One chat view session; :meth:`run` returns the exit code."""

    def __init__(self, args: object) -> None:
        self.args = args  # the parsed chat flags (an argparse or a plain namespace)
        self.state = AppState(busy="starting")
        self.inbox: SimpleQueue[tuple[str, tuple[object, ...]]] = SimpleQueue()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        # The runtime's half: ``built`` is set by the boot thread (so leaving closes it even
        # before the view took it), ``live`` by the UI thread when it handles "ready" — only
        # then may a line reach the command registry.
        self.built: Backend | None = None
        self.live: Backend | None = None
        self.quit = False
        self.boot_error: BaseException | None = None
        self.controls = Controls(
            self.state,
            complete_slash=lambda prefix: self.live.complete_slash(prefix) if self.live else [],
            complete_ref=lambda word: self.live.complete_ref(word) if self.live else [],
            remember=self._remember,
        )
        self.screen: Screen | None = None
        self.pending: list[str] = []  # prompts submitted before the runtime was ready
        self._lock = _thread.allocate_lock()  # threading.Lock, before threading is loaded
        self._closed = False  # the wake-up pipe is closed
        self._dirty = True
        self._last_paint = 0.0
        self._last_tick = 0.0
        self.wakes: dict[str, int] = {}  # what woke the loop, counted (Screen.wait's causes)

    # -- cross-thread posting ------------------------------------------------------
    def post(self, kind: str, *payload: object) -> None:
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
        diverted = Diverted(self.post)
        saved_stderr, saved_hook = sys.stderr, None
        booting = None
        try:
            # While curses owns the terminal nothing may write to it behind the view's back:
            # stray stderr lines and a dying thread's traceback become notices.
            sys.stderr = diverted
            with Screen() as screen:
                self.screen = screen
                self._paint(force=True)
                import threading  # the first frame is up; now the threads beside it

                saved_hook, threading.excepthook = threading.excepthook, diverted.thread_died
                booting = threading.Thread(target=self._boot, name="reasonix-boot", daemon=True)
                booting.start()
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
            with self._lock:
                self.quit = True  # a boot thread still building closes what it built
            if booting is not None:
                booting.join(timeout=5)
            self._shutdown()
        if self.boot_error is not None:
            raise self.boot_error  # main's error boundary reports it (and may offer setup)
        session = self.built.session_id() if self.built is not None else ""
        if crashed is not None:
            report_crash(crashed, session)
            return 1
        if session:
            print(f"session {session} saved · `reasonix -c` resumes it")
        return 0

    def _boot(self) -> None:
        """Build the runtime and the command layer (the boot thread: the runtime's half of
        the view is imported here, off the UI thread)."""
        from .live import boot

        boot(self)

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
        elif self.live is not None:
            self.live.act(action)
        elif kind == "submit":  # typed while the runtime is still being built: send when ready
            self.pending.append(str(action[1]))
            self.state.hint = "sending when ready…"
        # Other actions wait for the runtime too: nothing runs yet to cancel or answer.

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

    def _handle(self, kind: str, payload: tuple[object, ...]) -> None:
        if kind == "notice":
            self.notice(*map(str, payload))
        elif kind == "ready":  # the boot thread built the runtime: the view takes it now
            self.live = self.built
            if self.live is not None:
                self.live.handle(kind, payload)
        elif kind == "boot-error":
            error = payload[0]
            self.boot_error = error if isinstance(error, BaseException) else None
            self.quit = True
        elif self.live is not None:
            self.live.handle(kind, payload)

    def notice(self, text: str, kind: str = "notice") -> None:
        """Add a notice line to the transcript (sanitised; UI thread)."""
        from .ingest import clean

        self.state.transcript.add(NoticeBlock(clean(text), kind))

    def _remember(self, text: str) -> None:
        if self.live is not None:
            self.live.remember(text)

    # -- leaving -----------------------------------------------------------------------------
    def _shutdown(self) -> None:
        if self.built is not None:
            with contextlib.suppress(Exception):
                self.built.close()
        with self._lock:
            self._closed = True
            for fd in (self.wake_r, self.wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)


def run(args: object) -> int:
    """Run the chat view for parsed chat flags."""
    return App(args).run()
