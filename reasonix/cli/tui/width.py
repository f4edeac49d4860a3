"""Terminal cell widths and wrapping for styled text (CJK, emoji, combining marks).

A line on screen is a tuple of :data:`Span` ``(text, style)`` pairs; the style
is a name the screen maps to colours (``"text"``, ``"dim"``, ``"add"`` …), so
everything here stays pure and testable without a terminal.

East Asian Wide and Fullwidth characters (CJK ideographs, kana, Hangul
syllables, most emoji) take two cells; combining marks, zero-width joiners
and variation selectors take none; everything else takes one. Tabs are
expanded before text reaches this module.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = [
    "Line",
    "Span",
    "char_width",
    "clip",
    "fit",
    "line_width",
    "plain",
    "text_width",
    "wrap_spans",
]

Span = tuple[str, str]
Line = tuple[Span, ...]


@lru_cache(maxsize=4096)
def _wide_or_zero(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    if 0x1160 <= ord(ch) <= 0x11FF:  # Hangul medial vowels / final consonants join the syllable
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def char_width(ch: str) -> int:
    """Cells one character takes (0, 1 or 2)."""
    o = ord(ch)
    if 0x20 <= o < 0x7F:
        return 1
    if o < 0x20 or 0x7F <= o < 0xA0:
        return 0  # controls never reach the screen unescaped (safe_text.printable)
    return _wide_or_zero(ch)


def text_width(text: str) -> int:
    """Cells ``text`` takes on one terminal row."""
    if text.isascii():
        return len(text)
    return sum(char_width(c) for c in text)


def line_width(line: Line) -> int:
    """Cells a styled line takes."""
    return sum(text_width(t) for t, _ in line)


def plain(line: Line) -> str:
    """The characters of a styled line, without styles (for tests and searching)."""
    return "".join(t for t, _ in line)


def clip(text: str, width: int) -> str:
    """The longest prefix of ``text`` that fits in ``width`` cells."""
    if width <= 0:
        return ""
    if text.isascii():
        return text[:width]
    used = 0
    for i, c in enumerate(text):
        w = char_width(c)
        if used + w > width:
            return text[:i]
        used += w
    return text


def fit(line: Line, width: int, *, ellipsis: bool = False) -> Line:
    """``line`` cut to ``width`` cells (with a trailing ``…`` when ``ellipsis`` and cut)."""
    if line_width(line) <= width:
        return line
    room = width - 1 if ellipsis else width
    out: list[Span] = []
    used = 0
    for text, style in line:
        piece = clip(text, room - used)
        if piece:
            out.append((piece, style))
            used += text_width(piece)
        if len(piece) < len(text):
            break
    if ellipsis and width > 0:
        out.append(("…", out[-1][1] if out else "text"))
    return tuple(out)


def _tokens(line: Line, words: bool) -> list[Span]:
    """Split spans into words and single spaces (or single characters when not ``words``)."""
    out: list[Span] = []
    for text, style in line:
        if not words:
            out.extend((c, style) for c in text)
            continue
        start = 0
        for i, c in enumerate(text):
            if c == " ":
                if i > start:
                    out.append((text[start:i], style))
                out.append((" ", style))
                start = i + 1
        if start < len(text):
            out.append((text[start:], style))
    return out


def wrap_spans(
    line: Line,
    width: int,
    *,
    first: Line = (),
    rest: Line = (),
    words: bool = True,
) -> list[Line]:
    """Wrap one styled line into rows of at most ``width`` cells.

    ``first`` is put before the first row and ``rest`` before every other
    (a list bullet and its hanging indent). With ``words`` rows break at
    spaces and a word longer than a row is cut by cells; without it every
    character may end a row (code). Spaces at a row break are dropped.
    An empty line gives one row holding only ``first``.
    """
    rows: list[list[Span]] = [list(first)]
    used = line_width(first)
    rest_width = line_width(rest)
    width = max(width, rest_width + 1, line_width(first) + 1)

    def new_row() -> None:
        nonlocal used
        rows.append(list(rest))
        used = rest_width

    for text, style in _tokens(line, words):
        w = text_width(text)
        if text == " " and words:
            if used + 1 <= width:
                rows[-1].append((text, style))
                used += 1
            else:
                new_row()
            continue
        if used + w > width and used > rest_width and words:
            _strip_trailing_space(rows[-1])
            new_row()
        while text and used + w > width:  # longer than a row: cut by cells
            piece = clip(text, width - used)
            if not piece and used > rest_width:
                new_row()  # a wide character does not fit in the last cell
                continue
            piece = piece or text[:1]  # a row narrower than one wide character
            rows[-1].append((piece, style))
            used += text_width(piece)
            text = text[len(piece) :]
            w = text_width(text)
            if text:
                new_row()
        if text:
            rows[-1].append((text, style))
            used += w
    return [_merge(r) for r in rows]


def _strip_trailing_space(row: list[Span]) -> None:
    while row and row[-1][0] == " ":
        row.pop()


def _merge(row: list[Span]) -> Line:
    """Join neighbouring spans of one style (fewer curses calls, simpler comparisons)."""
    out: list[Span] = []
    for text, style in row:
        if out and out[-1][1] == style:
            out[-1] = (out[-1][0] + text, style)
        elif text:
            out.append((text, style))
    return tuple(out)
