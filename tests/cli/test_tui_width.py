"""Cell widths and wrapping of the chat view (CJK, emoji, combining marks)."""

from __future__ import annotations

from reasonix.cli.tui.width import char_width, clip, fit, line_width, plain, text_width, wrap_spans


def test_cell_widths() -> None:
    assert text_width("abc") == 3
    assert text_width("中文") == 4  # East Asian Wide
    assert text_width("ｱ") == 1  # halfwidth katakana
    assert text_width("Ａ") == 2  # fullwidth Latin
    assert text_width("e\u0301") == 1  # a combining accent takes no cell
    assert text_width("👍") == 2
    assert char_width("\u200d") == 0  # zero-width joiner
    assert char_width("\ufe0f") == 0  # variation selector
    assert text_width("한국어") == 6


def test_clip_never_splits_a_wide_character() -> None:
    assert clip("中文字", 5) == "中文"
    assert clip("中文字", 1) == ""
    assert clip("abc", 0) == ""
    assert text_width(clip("a中b文", 4)) <= 4


def test_fit_adds_an_ellipsis_when_it_cuts() -> None:
    line = (("hello ", "bold"), ("world", "text"))
    assert plain(fit(line, 20)) == "hello world"
    cut = fit(line, 8, ellipsis=True)
    assert plain(cut) == "hello w…"
    assert line_width(cut) == 8
    assert cut[0][1] == "bold"


def test_word_wrap_with_hanging_indent() -> None:
    rows = wrap_spans(
        (("one two three four five", "text"),),
        12,
        first=(("• ", "dim"),),
        rest=(("  ", "text"),),
    )
    assert [plain(r) for r in rows] == ["• one two", "  three four", "  five"]
    assert all(line_width(r) <= 12 for r in rows)


def test_long_words_and_cjk_are_cut_by_cells() -> None:
    rows = wrap_spans((("abcdefghij", "text"),), 4)
    assert [plain(r) for r in rows] == ["abcd", "efgh", "ij"]
    rows = wrap_spans((("一二三四五", "text"),), 5)
    assert [plain(r) for r in rows] == ["一二", "三四", "五"]
    assert all(line_width(r) <= 5 for r in rows)


def test_code_wraps_by_character_and_keeps_spaces() -> None:
    rows = wrap_spans((("if  x:  y", "code"),), 5, words=False)
    assert [plain(r) for r in rows] == ["if  x", ":  y"]


def test_empty_line_is_one_row_with_its_prefix() -> None:
    assert wrap_spans((), 10, first=(("> ", "dim"),)) == [(("> ", "dim"),)]


def test_neighbouring_spans_of_one_style_merge() -> None:
    rows = wrap_spans((("ab", "x"), ("cd", "x"), ("ef", "y")), 20)
    assert rows == [(("abcd", "x"), ("ef", "y"))]
