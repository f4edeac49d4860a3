"""Keys: raw terminal input → key names → command names → pure edits.

:class:`KeyDecoder` turns what the terminal sends (characters, escape
sequences, bracketed paste) into :class:`Key` values without any terminal.
:data:`COMPOSER_KEYS` names the readline-style command each key runs, and
every edit is a pure function ``(text, cursor) -> (text, cursor)`` on the
composer document (which may hold newlines: "line" means the line the cursor
is on).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["COMPOSER_KEYS", "EDITS", "Key", "KeyDecoder", "apply_edit"]

PASTE_START, PASTE_END = "200~", "201~"


class Key:
    """One key press: a name (``"enter"``, ``"ctrl-a"``, ``"up"``…) or typed/pasted text."""

    __slots__ = ("name", "text")

    def __init__(self, name: str, text: str = "") -> None:
        self.name = name  # "text" and "paste" carry ``text``
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key) and (self.name, self.text) == (other.name, other.text)

    def __hash__(self) -> int:
        return hash((self.name, self.text))

    def __repr__(self) -> str:
        return f"Key({self.name!r}, {self.text!r})" if self.text else f"Key({self.name!r})"


_CSI_TILDE = {"1": "home", "2": "insert", "3": "delete", "4": "end", "5": "pgup", "6": "pgdn",
              "7": "home", "8": "end"}  # fmt: skip
_CSI_FINAL = {"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end",
              "Z": "shift-tab"}  # fmt: skip
_CONTROL = {"\r": "enter", "\n": "ctrl-j", "\t": "tab", "\x7f": "backspace", "\x08": "backspace",
            "\x00": "ctrl-space"}  # fmt: skip


def _control_name(ch: str) -> str:
    if ch in _CONTROL:
        return _CONTROL[ch]
    return "ctrl-" + chr(ord(ch) + 96)


def _ctrl(name: str, params: str) -> str:
    """Ctrl-Home / Ctrl-End (modifier 5 in ``CSI 1;5H``, ``CSI 1;5~``): the transcript's ends."""
    if name in ("home", "end") and params.endswith(";5"):
        return "ctrl-" + name
    return name


class KeyDecoder:
    """A state machine over terminal input; :meth:`feed` returns the keys completed so far.

    An ESC with nothing after it is only known to be the Esc key when no more
    input follows; the caller waits a little and calls :meth:`flush`.
    """

    def __init__(self) -> None:
        self._pending = ""  # an incomplete escape sequence
        self._paste: list[str] | None = None  # inside a bracketed paste

    @property
    def waiting(self) -> bool:
        """True while an escape sequence may still continue."""
        return bool(self._pending)

    def feed(self, data: str) -> list[Key]:
        """Decode more input."""
        out: list[Key] = []
        for ch in data:
            self._one(ch, out)
        return out

    def flush(self) -> list[Key]:
        """Input paused: an unfinished sequence is taken as typed (a lone ESC is Esc)."""
        pending, self._pending = self._pending, ""
        if self._paste is not None:
            return []
        if pending == "\x1b":
            return [Key("esc")]
        if pending.startswith("\x1b"):
            keys = [Key("alt-" + pending[1])] if len(pending) == 2 else [Key("esc")]
            return keys + (self.feed(pending[2:]) if len(pending) > 2 else [])
        return []

    def _one(self, ch: str, out: list[Key]) -> None:
        if self._paste is not None:
            self._paste_char(ch, out)
            return
        if self._pending:
            self._pending += ch
            self._sequence(out)
            return
        if ch == "\x1b":
            self._pending = ch
        elif ch < " " or ch == "\x7f":
            out.append(Key(_control_name(ch)))
        elif out and out[-1].name == "text":
            out[-1] = Key("text", out[-1].text + ch)
        else:
            out.append(Key("text", ch))

    def _sequence(self, out: list[Key]) -> None:
        seq = self._pending
        if len(seq) == 2:
            second = seq[1]
            if second in "[O":
                return  # CSI / SS3: wait for the rest
            self._pending = ""
            if second in "\r\n":
                out.append(Key("alt-enter"))
            elif second == "\x7f" or second == "\x08":
                out.append(Key("alt-backspace"))
            elif second == "\x1b":
                out.append(Key("esc"))
                self._pending = "\x1b"
            else:
                out.append(Key("alt-" + second.lower() if second.isalpha() else "alt-" + second))
            return
        final = seq[-1]
        if seq[1] == "O":  # SS3: one letter
            self._pending = ""
            out.append(Key(_CSI_FINAL.get(final, "unknown")))
            return
        if not ("\x40" <= final <= "\x7e") or len(seq) == 2:
            if len(seq) > 32:  # garbage: drop it
                self._pending = ""
            return
        self._pending = ""
        params = seq[2:-1]
        if final == "~":
            if params == "200":
                self._paste = []
                return
            first = params.split(";")[0]
            out.append(Key(_ctrl(_CSI_TILDE.get(first, "unknown"), params)))
            return
        name = _ctrl(_CSI_FINAL.get(final, "unknown"), params)
        if ";" in params and name in ("left", "right") and params.endswith(("3", "5")):
            name = "alt-b" if name == "left" else "alt-f"  # Alt/Ctrl-arrow: word motion
        out.append(Key(name))

    def _paste_char(self, ch: str, out: list[Key]) -> None:
        assert self._paste is not None
        self._paste.append(ch)
        tail = "".join(self._paste[-6:])
        if tail == "\x1b[" + PASTE_END:
            text = "".join(self._paste[:-6])
            self._paste = None
            out.append(Key("paste", text.replace("\r\n", "\n").replace("\r", "\n")))


# -- composer edits: pure (text, cursor) -> (text, cursor) ------------------------------

Edit = Callable[[str, int], tuple[str, int]]


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _word_back(text: str, i: int) -> int:
    while i > 0 and not text[i - 1].isalnum():
        i -= 1
    while i > 0 and text[i - 1].isalnum():
        i -= 1
    return i


def _word_forward(text: str, i: int) -> int:
    n = len(text)
    while i < n and not text[i].isalnum():
        i += 1
    while i < n and text[i].isalnum():
        i += 1
    return i


def _rubout_start(text: str, i: int) -> int:
    """Ctrl-W: back over spaces, then over non-spaces (readline's unix-word-rubout)."""
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    while i > 0 and text[i - 1] not in " \t\n":
        i -= 1
    return i


def line_start(text: str, i: int) -> tuple[str, int]:
    """Ctrl-A / Home."""
    return text, _line_start(text, i)


def line_end(text: str, i: int) -> tuple[str, int]:
    """Ctrl-E / End."""
    return text, _line_end(text, i)


def kill_to_end(text: str, i: int) -> tuple[str, int]:
    """Ctrl-K: delete to the end of the line (at the end: join the next line)."""
    j = _line_end(text, i)
    if j == i and j < len(text):
        j += 1
    return text[:i] + text[j:], i


def kill_to_start(text: str, i: int) -> tuple[str, int]:
    """Ctrl-U: delete to the start of the line."""
    j = _line_start(text, i)
    return text[:j] + text[i:], j


def kill_word_back(text: str, i: int) -> tuple[str, int]:
    """Ctrl-W: delete the whitespace-delimited word before the cursor."""
    j = _rubout_start(text, i)
    return text[:j] + text[i:], j


def kill_word_forward(text: str, i: int) -> tuple[str, int]:
    """Alt-D: delete to the end of the next word."""
    return text[:i] + text[_word_forward(text, i) :], i


def kill_alnum_back(text: str, i: int) -> tuple[str, int]:
    """Alt-Backspace: delete back to the start of the word."""
    j = _word_back(text, i)
    return text[:j] + text[i:], j


def word_back(text: str, i: int) -> tuple[str, int]:
    """Alt-B."""
    return text, _word_back(text, i)


def word_forward(text: str, i: int) -> tuple[str, int]:
    """Alt-F."""
    return text, _word_forward(text, i)


def char_back(text: str, i: int) -> tuple[str, int]:
    """Left / Ctrl-B."""
    return text, max(0, i - 1)


def char_forward(text: str, i: int) -> tuple[str, int]:
    """Right / Ctrl-F."""
    return text, min(len(text), i + 1)


def delete_back(text: str, i: int) -> tuple[str, int]:
    """Backspace."""
    if i == 0:
        return text, 0
    return text[: i - 1] + text[i:], i - 1


def delete_forward(text: str, i: int) -> tuple[str, int]:
    """Delete / Ctrl-D on a non-empty composer."""
    return text[:i] + text[i + 1 :], i


def newline(text: str, i: int) -> tuple[str, int]:
    """Ctrl-J / Alt-Enter: a new line in the composer."""
    return insert(text, i, "\n")


def insert(text: str, i: int, s: str) -> tuple[str, int]:
    """Typed or pasted text at the cursor."""
    return text[:i] + s + text[i:], i + len(s)


def transpose(text: str, i: int) -> tuple[str, int]:
    """Ctrl-T: swap the characters around the cursor (at the end of the text, the last two)."""
    if len(text) < 2 or i == 0:
        return text, i
    if i == len(text):
        i -= 1
    return text[: i - 1] + text[i] + text[i - 1] + text[i + 1 :], i + 1


EDITS: dict[str, Edit] = {
    "line-start": line_start,
    "line-end": line_end,
    "kill-to-end": kill_to_end,
    "kill-to-start": kill_to_start,
    "kill-word-back": kill_word_back,
    "kill-word-forward": kill_word_forward,
    "kill-alnum-back": kill_alnum_back,
    "word-back": word_back,
    "word-forward": word_forward,
    "char-back": char_back,
    "char-forward": char_forward,
    "delete-back": delete_back,
    "delete-forward": delete_forward,
    "newline": newline,
    "transpose": transpose,
}

# Key name -> edit command name (readline's emacs bindings).
COMPOSER_KEYS: dict[str, str] = {
    "ctrl-a": "line-start",
    "home": "line-start",
    "ctrl-e": "line-end",
    "end": "line-end",
    "ctrl-k": "kill-to-end",
    "ctrl-u": "kill-to-start",
    "ctrl-w": "kill-word-back",
    "alt-d": "kill-word-forward",
    "alt-backspace": "kill-alnum-back",
    "alt-b": "word-back",
    "alt-f": "word-forward",
    "left": "char-back",
    "ctrl-b": "char-back",
    "right": "char-forward",
    "ctrl-f": "char-forward",
    "backspace": "delete-back",
    "ctrl-h": "delete-back",
    "delete": "delete-forward",
    "ctrl-j": "newline",
    "alt-enter": "newline",
    "ctrl-t": "transpose",
}


def apply_edit(command: str, text: str, cursor: int) -> tuple[str, int]:
    """Run the edit named ``command``."""
    return EDITS[command](text, cursor)
