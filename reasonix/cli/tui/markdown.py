"""Light Markdown for the transcript: code fences, headings, lists, quotes, bold, inline code.

Rendering is line by line: the only state carried from one source line to
the next is "inside a code fence", so a streamed answer re-renders only its
last, still-growing line (:class:`MarkdownCache`). Everything else about
Markdown (tables, links, nested emphasis) shows as the text it is.
"""

from __future__ import annotations

from reasonix.lazy import Pattern

from .width import Line, Span, fit, text_width, wrap_spans

__all__ = ["MarkdownCache", "inline_spans", "render_line", "render_markdown"]

# Compiled on first use (reasonix.lazy.Pattern): importing this module imports no `re`,
# and the chat view's first frame, which renders no Markdown, waits for none.
_INLINE = Pattern(r"(`+)(.+?)\1|\*\*(.+?)\*\*|__(.+?)__")
_HEADING = Pattern(r"(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST = Pattern(r"(\s*)([-*+]|\d{1,3}[.)])\s+(.*)")
_RULE = Pattern(r"\s{0,3}([-*_])(\s*\1){2,}\s*$")
_QUOTE = Pattern(r"\s{0,3}>\s?(.*)")
_FENCE = Pattern(r"\s{0,3}(```+|~~~+)\s*(\S*)")


def inline_spans(text: str, base: str = "text") -> list[Span]:
    """``**bold**``, ``__bold__`` and `` `code` `` as styled spans; the rest in ``base``."""
    if "`" not in text and "**" not in text and "__" not in text:
        return [(text, base)] if text else []
    out: list[Span] = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], base))
        if m.group(2) is not None:
            out.append((m.group(2), "code"))
        else:
            out.append((m.group(3) or m.group(4), "heading" if base == "heading" else "bold"))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], base))
    return out


def render_line(src: str, width: int, in_fence: bool) -> tuple[list[Line], bool]:
    """One source line as screen rows, and whether a code fence is open after it."""
    src = src.expandtabs(4)
    fence = _FENCE.match(src)
    if fence is not None and not (in_fence and fence.group(2)):  # "```py" never closes
        label = fence.group(2) if not in_fence else ""
        rule: Line = (("─" * 2 + (f" {label} " if label else "") + "─" * 2, "dim"),)
        return [fit(rule, width)], not in_fence
    if in_fence:
        bar: Line = (("│ ", "dim"),)
        return wrap_spans(((src, "code"),), width, first=bar, rest=bar, words=False), True
    stripped = src.strip()
    if not stripped:
        return [()], False
    heading = _HEADING.match(src)
    if heading is not None:
        spans = tuple(inline_spans(heading.group(2), "heading"))
        return wrap_spans(spans, width), False
    if _RULE.match(src):
        return [(("─" * max(1, min(width, 40)), "dim"),)], False
    item = _LIST.match(src)
    if item is not None:
        indent, marker, body = item.groups()
        bullet = "•" if marker in "-*+" else marker
        lead = " " * min(len(indent), 8) + bullet + " "
        first: Line = ((lead, "dim" if bullet == "•" else "text"),)
        rest: Line = ((" " * text_width(lead), "text"),)
        return wrap_spans(tuple(inline_spans(body)), width, first=first, rest=rest), False
    quote = _QUOTE.match(src)
    if quote is not None:
        bar = (("│ ", "dim"),)
        spans = tuple(inline_spans(quote.group(1), "dim"))
        return wrap_spans(spans, width, first=bar, rest=bar), False
    return wrap_spans(tuple(inline_spans(src)), width), False


def render_markdown(text: str, width: int) -> list[Line]:
    """A whole Markdown text as screen rows of at most ``width`` cells."""
    rows: list[Line] = []
    in_fence = False
    for src in text.split("\n"):
        got, in_fence = render_line(src, width, in_fence)
        rows.extend(got)
    return rows


class MarkdownCache:
    """Renders a growing text, reusing the rows of every source line that did not change."""

    def __init__(self) -> None:
        self._width = -1
        self._lines: list[tuple[str, bool, list[Line]]] = []  # (source, fence before, rows)

    def render(self, text: str, width: int) -> list[Line]:
        """Rows for ``text`` at ``width``; unchanged source lines are not re-rendered."""
        if width != self._width:
            self._width, self._lines = width, []
        sources = text.split("\n")
        kept: list[tuple[str, bool, list[Line]]] = []
        in_fence = False
        for i, src in enumerate(sources):
            if i < len(self._lines):
                old_src, old_fence, _old_rows = self._lines[i]
                if old_src == src and old_fence == in_fence:
                    kept.append(self._lines[i])
                    in_fence = _fence_after(src, in_fence)
                    continue
            rows, after = render_line(src, width, in_fence)
            kept.append((src, in_fence, rows))
            in_fence = after
        self._lines = kept
        out: list[Line] = []
        for _, _, rows in kept:
            out.extend(rows)
        return out


def _fence_after(src: str, in_fence: bool) -> bool:
    fence = _FENCE.match(src.expandtabs(4))
    if fence is None or (in_fence and fence.group(2)):
        return in_fence
    return not in_fence
