"""Light Markdown of the transcript: fences, headings, lists, quotes, bold, inline code."""

from __future__ import annotations

import random

from reasonix.cli.tui.markdown import MarkdownCache, inline_spans, render_markdown
from reasonix.cli.tui.width import line_width, plain

TEXT = """# Title **bold**

Some **strong** words and `code` here.

- first item
  - nested item
1. numbered

> quoted text

---

```python
def f(x):
    return x  # **not bold**
```
after"""


def _styles(row: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return {text: style for text, style in row}


def test_inline_bold_and_code() -> None:
    assert inline_spans("a **b** `c` __d__") == [
        ("a ", "text"), ("b", "bold"), (" ", "text"), ("c", "code"), (" ", "text"), ("d", "bold"),
    ]  # fmt: skip
    assert inline_spans("plain") == [("plain", "text")]


def test_blocks_render_as_a_reader_expects() -> None:
    rows = render_markdown(TEXT, 60)
    text = [plain(r) for r in rows]
    assert text[0] == "Title bold"  # the hashes go, the heading style stays
    assert all(style == "heading" for _, style in rows[0])
    assert "Some strong words and code here." in text
    assert _styles(rows[2])["strong"] == "bold" and _styles(rows[2])["code"] == "code"
    assert "• first item" in text
    assert "  • nested item" in text
    assert "1. numbered" in text
    assert "│ quoted text" in text
    assert any(t.startswith("─") and set(t) == {"─"} for t in text)
    assert "── python ──" in text
    code = [
        r for r in rows if plain(r).startswith("│ ") and ("def" in plain(r) or "return" in plain(r))
    ]
    assert [plain(r) for r in code] == ["│ def f(x):", "│     return x  # **not bold**"]
    assert all(style in ("dim", "code") for r in code for _, style in r)
    assert text[-1] == "after"


def test_rows_fit_the_width() -> None:
    for width in (8, 20, 33):
        assert all(line_width(r) <= width for r in render_markdown(TEXT * 3, width))


def test_a_fence_with_an_info_string_does_not_close_an_open_fence() -> None:
    rows = render_markdown("```\n```py\nx\n```\nout", 40)
    assert [plain(r) for r in rows] == ["────", "│ ```py", "│ x", "────", "out"]


def test_the_cache_matches_a_fresh_render_while_text_streams() -> None:
    rng = random.Random(7)
    cache = MarkdownCache()
    text = TEXT * 2
    pos = 0
    while pos < len(text):
        pos = min(len(text), pos + rng.randint(1, 9))
        assert cache.render(text[:pos], 30) == render_markdown(text[:pos], 30)
    assert cache.render(text, 50) == render_markdown(text, 50)  # a resize re-renders
