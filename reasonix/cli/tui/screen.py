"""The only module that talks to curses: set-up, colours, input bytes, painting rows.

:class:`Screen` paints the frames :func:`reasonix.cli.tui.view.render`
returns, touching only the rows that differ from the previous frame, and
hands raw input to :class:`reasonix.cli.tui.keys.KeyDecoder` (keypad
translation is off, so escape sequences and bracketed paste are decoded in
one pure place). :meth:`close` always restores the terminal.
"""

from __future__ import annotations

import contextlib
import curses
import os
import select
import sys

from .keys import Key, KeyDecoder
from .view import changed_rows
from .width import Line


def _use_the_users_locale() -> None:
    """``locale.setlocale(LC_ALL, "")`` (curses needs it for wide characters), through the C
    module: the ``locale`` module imports ``re`` and takes milliseconds off the first frame."""
    try:
        import _locale
    except ImportError:  # a build without it: the locale module would only emulate "C"
        return
    with contextlib.suppress(Exception):  # _locale.Error: the user's locale is not installed
        _locale.setlocale(_locale.LC_ALL, "")


__all__ = ["Screen", "typeahead_text"]

_PASTE_ON, _PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
ESC_WAIT = 0.03  # seconds an ESC waits for the rest of its sequence

# style name -> (foreground, attributes); -1 is the terminal's default colour
_STYLES: dict[str, tuple[int, int]] = {
    "text": (-1, 0),
    "dim": (-1, curses.A_DIM),
    "bold": (-1, curses.A_BOLD),
    "heading": (curses.COLOR_CYAN, curses.A_BOLD),
    "code": (curses.COLOR_YELLOW, 0),
    "user": (-1, curses.A_BOLD),
    "prompt": (curses.COLOR_CYAN, curses.A_BOLD),
    "input": (-1, 0),
    "tool": (curses.COLOR_BLUE, curses.A_BOLD),
    "ok": (curses.COLOR_GREEN, curses.A_BOLD),
    "err": (curses.COLOR_RED, 0),
    "warn": (curses.COLOR_YELLOW, 0),
    "add": (curses.COLOR_GREEN, 0),
    "del": (curses.COLOR_RED, 0),
    "hunk": (curses.COLOR_CYAN, 0),
    "meta": (-1, curses.A_BOLD),
    "panel": (curses.COLOR_MAGENTA, curses.A_BOLD),
    "key": (curses.COLOR_MAGENTA, curses.A_BOLD),
    "select": (-1, curses.A_REVERSE),
    "rule": (-1, curses.A_DIM),
    "footer": (-1, curses.A_DIM),
    "mode": (curses.COLOR_MAGENTA, curses.A_BOLD),
    "busy": (curses.COLOR_CYAN, 0),
    "hint": (curses.COLOR_YELLOW, 0),
}


def typeahead_text(data: bytes) -> str:
    """Keys typed before the view set raw mode, as raw mode would have given them.

    The terminal was still in its cooked mode then, which turns Enter's CR into
    LF (``icrnl``): read as they came, a prompt typed while the view starts would
    get a new line instead of being sent. So LF is Enter here (a Ctrl-J typed
    that early is taken as Enter too).
    """
    return data.decode("utf-8", "replace").replace("\r\n", "\r").replace("\n", "\r")


class Screen:
    """A curses screen in raw mode with bracketed paste; use as a context manager."""

    def __init__(self) -> None:
        self.stdscr: curses.window | None = None
        self.decoder = KeyDecoder()
        self._attrs: dict[str, int] = {}
        self._last: list[Line | None] = []
        self._size = (0, 0)
        self._typeahead = ""  # keys typed before raw mode (see typeahead_text)

    def __enter__(self) -> Screen:
        _use_the_users_locale()
        self.stdscr = curses.initscr()
        try:
            curses.noecho()
            curses.raw()  # Ctrl-C, Ctrl-Z and Ctrl-\ arrive as keys, not signals
            curses.nonl()  # Enter is \r, Ctrl-J is \n
            self._typeahead = typeahead_text(_pending(sys.stdin.fileno()))
            self.stdscr.keypad(False)
            self.stdscr.nodelay(True)
            self._colours()
            sys.stdout.write(_PASTE_ON)
            sys.stdout.flush()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _colours(self) -> None:
        pairs: dict[int, int] = {}
        colour = False
        with contextlib.suppress(curses.error):
            curses.start_color()
            curses.use_default_colors()
            colour = curses.has_colors()
        for name, (fg, attr) in _STYLES.items():
            value = attr
            if colour and fg >= 0:
                if fg not in pairs:
                    pairs[fg] = len(pairs) + 1
                    with contextlib.suppress(curses.error):
                        curses.init_pair(pairs[fg], fg, -1)
                value |= curses.color_pair(pairs[fg])
            self._attrs[name] = value

    def close(self) -> None:
        """Give the terminal back (idempotent)."""
        if self.stdscr is None:
            return
        self.stdscr = None
        with contextlib.suppress(Exception):
            sys.stdout.write(_PASTE_OFF)
            sys.stdout.flush()
        with contextlib.suppress(curses.error):
            curses.endwin()

    def size(self) -> tuple[int, int]:
        """(height, width) of the terminal now."""
        assert self.stdscr is not None
        height, width = self.stdscr.getmaxyx()
        return height, width

    def wait(self, timeout: float | None, wake_fd: int | None = None) -> str:
        """Sleep until input, a wake-up byte on ``wake_fd``, or ``timeout`` seconds (None: no
        timeout); what ended it: ``"input"``, ``"wake"``, ``"timeout"`` or ``"typeahead"``."""
        if self._typeahead:
            return "typeahead"  # keys() has them already
        fds = [sys.stdin.fileno()] + ([wake_fd] if wake_fd is not None else [])
        try:
            ready, _, _ = select.select(fds, [], [], timeout)
        except (OSError, ValueError):
            return "error"
        if wake_fd is not None and wake_fd in ready:
            with contextlib.suppress(OSError):
                os.read(wake_fd, 4096)
            return "wake" if len(ready) == 1 else "input"
        return "input" if ready else "timeout"

    def keys(self) -> list[Key]:
        """Every key waiting now (a pending ESC waits briefly for its sequence)."""
        assert self.stdscr is not None
        out: list[Key] = []
        if self._typeahead:
            out.extend(self.decoder.feed(self._typeahead))
            self._typeahead = ""
        while True:
            got = self._read()
            if got is None:
                if self.decoder.waiting:
                    self.wait(ESC_WAIT)
                    got = self._read()
                    if got is None:
                        out.extend(self.decoder.flush())
                        return out
                else:
                    return out
            if isinstance(got, Key):
                out.append(got)
            else:
                out.extend(self.decoder.feed(got))

    def _read(self) -> str | Key | None:
        assert self.stdscr is not None
        try:
            ch = self.stdscr.get_wch()
        except curses.error:
            return None
        if isinstance(ch, str):
            return ch
        if ch == curses.KEY_RESIZE:
            with contextlib.suppress(curses.error):
                curses.update_lines_cols()
            self._last = []  # everything moves: repaint it all
            return Key("resize")
        return Key("unknown")

    def resize(self, lines: int, cols: int) -> None:
        """The terminal changed size (SIGWINCH): tell curses, repaint everything next.

        ``resize_term``, not ``resizeterm``: the latter marks the screen for a clear
        (``ESC[2J`` on the next refresh: a flash, and some terminals push the old
        screen into the scrollback) and queues a ``KEY_RESIZE`` that would repaint
        a second time. The next draw rewrites every cell instead (:meth:`_garble`)."""
        with contextlib.suppress(curses.error):
            curses.resize_term(lines, cols)
        self._last = []

    def invalidate(self) -> None:
        """Forget what is on screen, so the next draw rewrites every cell (Ctrl-L).

        Never a clear: after the first frame the view only overwrites cells."""
        self._last = []
        self._garble()

    def _garble(self) -> None:
        """Tell curses the terminal's cells are unknown: the next refresh rewrites each
        one in place (``redrawwin``), with no full-screen clear before it."""
        if self.stdscr is not None:
            with contextlib.suppress(curses.error):
                self.stdscr.redrawwin()

    def draw(self, rows: list[Line], cursor: tuple[int, int] | None) -> int:
        """Paint ``rows``, touching only those that changed; returns how many were painted."""
        scr = self.stdscr
        assert scr is not None
        height, width = scr.getmaxyx()
        if (height, width) != self._size:
            self._size, self._last = (height, width), []
            scr.erase()  # only the window's own cells: every row is added again below
            self._garble()
        todo = changed_rows(self._last, rows[:height])
        for y in todo:
            row = rows[y]
            scr.move(y, 0)
            scr.clrtoeol()
            x = 0
            for text, style in row:
                with contextlib.suppress(curses.error):  # the last cell of the screen
                    scr.addstr(y, x, text, self._attrs.get(style, 0))
                x = scr.getyx()[1] if scr.getyx()[0] == y else width
        self._last = list(rows[:height]) + [None] * max(0, height - len(rows))
        if cursor is None:
            with contextlib.suppress(curses.error):
                curses.curs_set(0)
        else:
            with contextlib.suppress(curses.error):
                curses.curs_set(1)
                scr.move(*cursor)
        scr.refresh()
        return len(todo)


def _pending(fd: int) -> bytes:
    """What the terminal holds already, read without waiting (b"" on any trouble)."""
    got = b""
    try:
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            got += chunk
    except (OSError, ValueError):
        pass
    return got
