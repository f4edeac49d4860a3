"""What each key does to the view state, and which actions it asks the app to run.

:class:`Controls` owns no threads and no terminal: :meth:`Controls.key`
changes the :class:`~reasonix.cli.tui.state.AppState` (composer edits,
history, scrolling, overlay navigation, autocomplete) and returns actions for
the app — ``("submit", text)``, ``("answer", overlay, choice)``,
``("command", line)``, ``("cancel",)``, ``("mode",)``, ``("quit",)``,
``("redraw",)`` — so key scripts can be replayed in tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .keys import COMPOSER_KEYS, Key, apply_edit, insert
from .state import (
    ApprovalOverlay,
    AppState,
    CompletionOverlay,
    ConfirmOverlay,
    PickerOverlay,
)

__all__ = ["Action", "Controls"]

Action = tuple[object, ...]  # what a key asks the app to do: (kind, *arguments)
Completer = Callable[[str], list[tuple[str, str]]]
LEAVE_WINDOW = 2.0  # seconds in which a second Ctrl-C leaves
TOP = 1 << 40  # a scroll "above everything": the view clamps it to the transcript's first row


def _none(_: str) -> list[tuple[str, str]]:
    return []


class Controls:
    """Key handling over one AppState; ``complete_slash``/``complete_ref`` give candidates."""

    def __init__(
        self,
        state: AppState,
        *,
        complete_slash: Completer = _none,
        complete_ref: Completer = _none,
        remember: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.state = state
        self.complete_slash, self.complete_ref = complete_slash, complete_ref
        self.remember = remember
        self.clock = clock
        self._armed = 0.0  # when Ctrl-C was pressed on an empty idle composer
        self._esc_armed = 0.0  # when Esc was pressed on an empty idle composer (Esc Esc: /rewind)

    # -- entry point ---------------------------------------------------------------
    def key(self, k: Key) -> list[Action]:
        """Handle one key."""
        s = self.state
        if k.name == "resize":
            return [("redraw",)]
        if k.name == "ctrl-l":
            return [("redraw",)]
        if k.name != "ctrl-c":
            self._armed = 0.0
        top = s.overlay
        if isinstance(top, ApprovalOverlay):
            return self._approval(top, k)
        if isinstance(top, PickerOverlay):
            return self._picker(top, k)
        if isinstance(top, ConfirmOverlay):
            return self._confirm(top, k)
        handled = self._global(k)
        if handled is not None:
            return handled
        if isinstance(top, CompletionOverlay):
            done = self._completion(top, k)
            if done is not None:
                return done
        return self._composer(k)

    # -- keys that work everywhere outside modal overlays --------------------------
    def _global(self, k: Key) -> list[Action] | None:
        s = self.state
        if k.name == "ctrl-c":
            if s.busy and s.busy != "starting":
                return [("cancel",)]
            if s.composer.text:
                s.composer.set("")
                s.composer.history_pos = None
                self._refresh_completion()
                return []
            now = self.clock()
            if self._armed and now - self._armed <= LEAVE_WINDOW:
                return [("quit",)]
            self._armed = now
            s.hint = "press Ctrl-C again to leave"
            return []
        if k.name == "esc":
            if s.busy and s.busy != "starting":
                return [("cancel",)]
            if isinstance(s.overlay, CompletionOverlay):
                s.dismissed = s.composer.text
                s.overlays.pop()
                s.hint = ""
                return []
            now = self.clock()
            if not s.composer.text and self._esc_armed and now - self._esc_armed <= LEAVE_WINDOW:
                self._esc_armed = 0.0
                s.hint = ""
                return [("submit", "/rewind")]  # Esc Esc: the rewind picker, as in Claude Code
            self._esc_armed = now if not s.composer.text else 0.0
            s.hint = "Esc again: rewind to an earlier turn" if not s.composer.text else ""
            return []
        if k.name == "ctrl-d" and not s.composer.text:
            return [("quit",)]
        if k.name == "shift-tab":
            return [("mode",)]
        if k.name in ("pgup", "pgdn"):
            step = max(1, s.page - 2)
            s.scroll = max(0, s.scroll + (step if k.name == "pgup" else -step))
            return []
        if k.name in ("ctrl-home", "ctrl-end") or (
            k.name in ("home", "end") and not s.composer.text  # with text they move the cursor
        ):
            s.scroll = TOP if k.name.endswith("home") else 0  # the frame clamps TOP
            return []
        if k.name == "ctrl-o":
            s.detail = not s.detail
            return []
        return None

    # -- modal overlays ------------------------------------------------------------
    def _approval(self, o: ApprovalOverlay, k: Key) -> list[Action]:
        char = k.text[:1].lower() if k.name == "text" else ""
        keyed = {key: choice for key, _, choice in o.choices}
        by_name = {getattr(c, "name", ""): c for _, _, c in o.choices}
        choice = None
        if char in keyed:
            choice = keyed[char]
        elif char == "y":
            choice = by_name.get("ONCE")
        elif char == "n" or k.name == "esc":
            choice = by_name.get("DENY")
        elif k.name == "ctrl-c":
            return [("answer", o, by_name.get("DENY")), ("cancel",)]
        elif k.name in ("pgdn", "down", "pgup", "up"):
            step = max(1, self.state.panel_page - 1) if k.name.startswith("pg") else 1
            o.scroll = max(0, o.scroll + (step if k.name in ("pgdn", "down") else -step))
            return []
        if choice is None:
            return []
        return [("answer", o, choice)]

    def _picker(self, o: PickerOverlay, k: Key) -> list[Action]:
        items = o.visible()
        if k.name in ("esc", "ctrl-c"):
            self.state.overlays.pop()
        elif k.name in ("up", "ctrl-p"):
            o.selected = max(0, o.selected - 1)
        elif k.name in ("down", "ctrl-n", "tab"):
            o.selected = min(max(0, len(items) - 1), o.selected + 1)
        elif k.name == "enter":
            if items:
                item = items[max(0, min(o.selected, len(items) - 1))]
                self.state.overlays.pop()
                return [("command", f"{o.command} {item.value}".strip())]
        elif k.name == "backspace":
            o.query, o.selected = o.query[:-1], 0
        elif k.name in ("text", "paste"):
            o.query, o.selected = o.query + k.text.replace("\n", " "), 0
        return []

    def _confirm(self, o: ConfirmOverlay, k: Key) -> list[Action]:
        char = k.text[:1].lower() if k.name == "text" else ""
        if char == "y" or k.name == "enter":
            self.state.overlays.pop()
            return [o.yes] if o.yes is not None else [("command", o.command)]
        if char == "n" or k.name in ("esc", "ctrl-c"):
            self.state.overlays.pop()
            return [o.no] if o.no is not None else []
        return []

    # -- autocomplete (input-owned) ------------------------------------------------
    def _completion(self, o: CompletionOverlay, k: Key) -> list[Action] | None:
        if k.name in ("up", "ctrl-p"):
            o.selected = (o.selected - 1) % len(o.items)
            return []
        if k.name in ("down", "ctrl-n"):
            o.selected = (o.selected + 1) % len(o.items)
            return []
        if k.name == "tab" or (k.name == "enter" and o.kind == "ref"):
            self._accept(o)
            return []
        if k.name == "enter" and o.kind == "slash":
            if " " not in self.state.composer.text.strip():  # a name: run the one chosen
                self._accept(o, trailing="")
            return self._submit()  # arguments: what was typed
        return None

    def _accept(self, o: CompletionOverlay, trailing: str = " ") -> None:
        c = self.state.composer
        text = o.items[o.selected][0]
        end = c.cursor
        if o.kind == "slash":
            c.set(text + trailing)
        else:
            tail = "" if text.endswith("/") else trailing
            before, after = c.text[: o.start], c.text[end:]
            c.set(before + text + tail + after, len(before) + len(text) + len(tail))
        self._refresh_completion()

    def _refresh_completion(self) -> None:
        s = self.state
        if isinstance(s.overlay, CompletionOverlay):
            s.overlays.pop()
        c = s.composer
        if not c.text or c.text == s.dismissed:
            return
        if c.text.startswith("/") and not c.text.startswith("//"):
            if "\n" in c.text:
                return
            items = self.complete_slash(c.text)  # names, then arguments after a space
            if items and not (len(items) == 1 and items[0][0] == c.text):
                s.overlays.append(CompletionOverlay("slash", 0, items))
            return
        start = c.cursor
        while start > 0 and not c.text[start - 1].isspace():
            start -= 1
        word = c.text[start : c.cursor]
        if word.startswith("@") and c.cursor > start:
            items = self.complete_ref(word)
            if items and not (len(items) == 1 and items[0][0] == word):
                s.overlays.append(CompletionOverlay("ref", start, items))

    # -- the composer ----------------------------------------------------------------
    def _submit(self) -> list[Action]:
        s, c = self.state, self.state.composer
        text = c.text
        if not text.strip():
            return []
        if s.busy and s.busy != "starting":  # while starting, the app keeps it until ready
            s.hint = "wait for the turn to end (Esc cancels it)"
            return []
        if self.remember is not None:
            self.remember(text)
        if not c.history or c.history[-1] != text:
            c.history.append(text)
        c.set("")
        c.history_pos, c.draft = None, ""
        s.scroll, s.hint, s.dismissed = 0, "", ""
        self._refresh_completion()
        return [("submit", text)]

    def _history(self, step: int) -> None:
        c = self.state.composer
        if not c.history:
            return
        if c.history_pos is None:
            if step > 0:
                return
            c.draft, c.history_pos = c.text, len(c.history) - 1
        else:
            c.history_pos += step
        if c.history_pos < 0:
            c.history_pos = 0
        if c.history_pos >= len(c.history):
            c.history_pos = None
            c.set(c.draft)
            return
        c.set(c.history[c.history_pos])

    def _vertical(self, step: int) -> None:
        """Up/Down: move between the composer's lines, else browse history."""
        c = self.state.composer
        start = c.text.rfind("\n", 0, c.cursor) + 1
        col = c.cursor - start
        if step < 0 and start > 0:
            prev = c.text.rfind("\n", 0, start - 1) + 1
            c.cursor = min(prev + col, start - 1)
            return
        end = c.text.find("\n", c.cursor)
        if step > 0 and end >= 0:
            nxt_end = c.text.find("\n", end + 1)
            nxt_end = len(c.text) if nxt_end < 0 else nxt_end
            c.cursor = min(end + 1 + col, nxt_end)
            return
        self._history(step)

    def _composer(self, k: Key) -> list[Action]:
        s, c = self.state, self.state.composer
        before = c.text
        if k.name == "enter":
            return self._submit()
        if k.name in ("up", "down"):
            self._vertical(-1 if k.name == "up" else 1)
        elif k.name == "ctrl-d":
            c.text, c.cursor = apply_edit("delete-forward", c.text, c.cursor)
        elif k.name in ("text", "paste"):
            c.text, c.cursor = insert(c.text, c.cursor, k.text)
        elif k.name in COMPOSER_KEYS:
            c.text, c.cursor = apply_edit(COMPOSER_KEYS[k.name], c.text, c.cursor)
        else:
            return []
        if c.text != before:
            s.hint = ""
            if k.name not in ("up", "down"):
                c.history_pos = None
        self._refresh_completion()
        return []
