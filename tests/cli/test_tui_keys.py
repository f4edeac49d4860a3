"""Terminal input decoding and the readline-style composer edits (pure, no terminal)."""

from __future__ import annotations

import pytest

from reasonix.cli.tui.keys import COMPOSER_KEYS, EDITS, Key, KeyDecoder, apply_edit


def names(keys: list[Key]) -> list[str]:
    return [k.name if k.name not in ("text", "paste") else f"{k.name}:{k.text}" for k in keys]


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ("\x1b[A\x1b[B\x1b[C\x1b[D", ["up", "down", "right", "left"]),
        ("\x1bOA\x1bOH\x1bOF", ["up", "home", "end"]),  # application keypad mode
        ("\x1b[H\x1b[F\x1b[1~\x1b[4~\x1b[7~\x1b[8~", ["home", "end"] * 3),
        ("\x1b[5~\x1b[6~\x1b[3~", ["pgup", "pgdn", "delete"]),
        ("\x1b[Z", ["shift-tab"]),
        ("\x1bb\x1bf\x1bd", ["alt-b", "alt-f", "alt-d"]),
        ("\x1b\r", ["alt-enter"]),
        ("\x1b\x7f", ["alt-backspace"]),
        ("\x1b[1;5D\x1b[1;3C", ["alt-b", "alt-f"]),  # Ctrl/Alt-arrows move by word
        ("\r\n\t\x7f\x08", ["enter", "ctrl-j", "tab", "backspace", "backspace"]),
        ("\x01\x05\x0b\x15\x17\x03\x04\x0f", ["ctrl-a", "ctrl-e", "ctrl-k", "ctrl-u", "ctrl-w",
                                              "ctrl-c", "ctrl-d", "ctrl-o"]),
        ("héllo 中文", ["text:héllo 中文"]),
    ],
)  # fmt: skip
def test_sequences(data: str, want: list[str]) -> None:
    d = KeyDecoder()
    assert names(d.feed(data) + d.flush()) == want


def test_a_lone_escape_is_esc_only_after_a_pause() -> None:
    d = KeyDecoder()
    assert d.feed("\x1b") == []
    assert d.waiting
    assert names(d.flush()) == ["esc"]
    assert names(d.feed("\x1b\x1b[A")) == ["esc", "up"]


def test_bracketed_paste_keeps_newlines_even_split_across_reads() -> None:
    d = KeyDecoder()
    got = d.feed("\x1b[200~line 1\r\nline 2\rline")
    assert got == []
    got += d.feed(" 3\x1b[20")
    assert d.flush() == []  # a pause inside a paste ends nothing
    got += d.feed("1~after")
    assert names(got) == ["paste:line 1\nline 2\nline 3", "text:after"]


def test_pasted_escape_sequences_stay_text() -> None:
    d = KeyDecoder()
    assert names(d.feed("\x1b[200~a\x1b[Ab\x1b[201~")) == ["paste:a\x1b[Ab"]


@pytest.mark.parametrize(
    ("command", "text", "cursor", "want"),
    [
        ("line-start", "ab\ncd", 4, ("ab\ncd", 3)),
        ("line-end", "ab\ncd", 0, ("ab\ncd", 2)),
        ("kill-to-end", "ab\ncd", 1, ("a\ncd", 1)),
        ("kill-to-end", "ab\ncd", 2, ("abcd", 2)),  # at the end of a line: join the next
        ("kill-to-start", "ab\ncd", 5, ("ab\n", 3)),
        ("kill-word-back", "git commit -m", 13, ("git commit ", 11)),
        ("kill-word-back", "a  b  ", 6, ("a  ", 3)),
        ("kill-word-forward", "one two", 0, (" two", 0)),
        ("kill-alnum-back", "path/to/file", 12, ("path/to/", 8)),
        ("word-back", "foo bar.baz", 11, ("foo bar.baz", 8)),
        ("word-back", "foo bar", 4, ("foo bar", 0)),
        ("word-forward", "foo bar.baz", 0, ("foo bar.baz", 3)),
        ("word-forward", "foo bar", 3, ("foo bar", 7)),
        ("char-back", "ab", 0, ("ab", 0)),
        ("char-forward", "ab", 2, ("ab", 2)),
        ("delete-back", "ab", 1, ("b", 0)),
        ("delete-back", "ab", 0, ("ab", 0)),
        ("delete-forward", "ab", 0, ("b", 0)),
        ("newline", "ab", 1, ("a\nb", 2)),
        ("transpose", "ab", 2, ("ba", 2)),
        ("transpose", "abc", 1, ("bac", 2)),
    ],
)
def test_edits(command: str, text: str, cursor: int, want: tuple[str, int]) -> None:
    assert apply_edit(command, text, cursor) == want


def test_every_bound_key_names_an_edit() -> None:
    assert set(COMPOSER_KEYS.values()) <= set(EDITS)
    for key in ("ctrl-a", "ctrl-e", "ctrl-k", "ctrl-u", "ctrl-w", "home", "end", "alt-b", "alt-f"):
        assert key in COMPOSER_KEYS
    assert COMPOSER_KEYS["ctrl-j"] == COMPOSER_KEYS["alt-enter"] == "newline"


def test_keys_typed_before_raw_mode_have_their_enter_back() -> None:
    from reasonix.cli.tui.screen import typeahead_text

    assert typeahead_text(b"fix calc.py\n") == "fix calc.py\r"
    assert typeahead_text(b"a\r\nb\n\xe4\xb8\xad") == "a\rb\r中"
    assert typeahead_text(b"") == ""
    keys = KeyDecoder().feed(typeahead_text(b"hi\n"))
    assert [k.name for k in keys][-1] == "enter"
