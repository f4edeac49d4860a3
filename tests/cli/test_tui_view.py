"""The frame layout, painted into a small screen model: transcript, overlays, composer, footer.

CMD-7/8: modal overlays hide the composer, input-owned ones keep it, and every
overlay class is classified in ``hide_composer()``.
"""

from __future__ import annotations

from typing import Any

import pytest

from reasonix.cli.tui import state as st
from reasonix.cli.tui.state import (
    AnswerBlock,
    ApprovalOverlay,
    AppState,
    CompletionOverlay,
    ConfirmOverlay,
    NoticeBlock,
    Overlay,
    PickerItemView,
    PickerOverlay,
    ToolBlock,
    hide_composer,
)
from reasonix.cli.tui.view import changed_rows, composer_rows, human_tokens, render, render_frame
from reasonix.cli.tui.width import line_width, plain

W, H = 40, 12


def screen(state: AppState, width: int = W, height: int = H) -> list[str]:
    rows, _ = render(state, width, height)
    assert len(rows) == height
    assert all(line_width(r) <= width for r in rows)
    return [plain(r) for r in rows]


def _approval() -> ApprovalOverlay:
    return ApprovalOverlay(
        request=None,
        event=None,
        title="allow edit_file: a.txt?",
        detail=["edit_file: needs approval (mode ask)"],
        diff=["--- a/a.txt", "+++ b/a.txt", "@@ -1 +1 @@", "-old", "+new"],
        choices=[("1", "allow once", "ONCE"), ("4", "deny", "DENY")],
    )


def _examples() -> dict[type[Overlay], Overlay]:
    return {
        ApprovalOverlay: _approval(),
        PickerOverlay: PickerOverlay("model", [PickerItemView("a/b", "a/b", "desc")], "/model"),
        ConfirmOverlay: ConfirmOverlay("Clear the conversation?", "/clear --yes"),
        CompletionOverlay: CompletionOverlay("slash", 0, [("/help", "the commands")]),
    }


def _all_overlay_classes() -> set[type[Overlay]]:
    found: set[type[Overlay]] = set()
    todo = list(Overlay.__subclasses__())
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_cmd8_every_overlay_class_is_classified_exactly_once() -> None:
    classes = _all_overlay_classes()
    assert classes == set(_examples()), "add the new overlay to _examples() and hide_composer()"
    for cls in classes:
        assert (cls in st.MODAL_OVERLAYS) != (cls in st.INPUT_OVERLAYS), cls.__name__


def test_an_unclassified_overlay_is_an_error() -> None:
    class Stray(Overlay):
        pass

    with pytest.raises(TypeError, match="hide_composer"):
        hide_composer(Stray())


@pytest.mark.parametrize("cls", sorted(_examples(), key=lambda c: c.__name__))
def test_cmd7_bottom_region_is_panel_status_or_panel_composer_status(cls: type[Overlay]) -> None:
    state = AppState()
    state.status.model, state.status.mode = "fake/m", "ask"
    state.composer.set("typed text")
    state.overlays.append(_examples()[cls])
    frame = render_frame(state, W, H)
    rows = [plain(r) for r in frame.rows]
    assert rows[-1].startswith(" fake/m · ask")  # the footer (status) is always last
    composer_shown = any(r.startswith("› typed text") for r in rows)
    assert composer_shown == (cls in st.INPUT_OVERLAYS)
    assert (frame.cursor is None) == (cls in st.MODAL_OVERLAYS)
    if composer_shown:  # panel + composer + status
        assert rows[-2] == "› typed text" and set(rows[-3]) == {"─"}
    else:  # panel + status
        assert rows[-2].strip() != "" and not rows[-2].startswith("›")


def test_empty_screen_has_placeholder_rule_and_footer() -> None:
    state = AppState()
    state.status.model, state.status.mode = "deepseek/chat", "plan"
    rows = screen(state)
    assert rows[-3] == "─" * W
    assert rows[-2].startswith("› Ask anything")
    assert rows[-1].startswith(" deepseek/chat · plan")


def test_footer_names_mode_verbatim_and_shows_context_cache_cost() -> None:
    state = AppState()
    s = state.status
    s.model, s.mode, s.context_used, s.context_window, s.compact_at = (
        "p/m",
        "bypassPermissions",
        12_345,
        128_000,
        102_400,
    )
    s.cache_ratio, s.cost = 0.873, "$0.0123"
    footer = screen(state, width=100)[-1]
    assert (
        footer.strip()
        == "p/m · bypassPermissions · ctx 12k/128k (90k to compact) · cache 87% · $0.0123"
    )


def test_footer_shortens_on_a_narrow_screen_but_keeps_the_hint() -> None:
    state = AppState()
    state.status.model, state.status.mode = "provider/a-very-long-model-name", "auto"
    state.hint = "press Ctrl-C again to leave"
    footer = screen(state, width=50)[-1]
    assert footer.endswith("press Ctrl-C again to leave ")
    assert "…" in footer


def test_busy_shows_on_the_rule_above_the_composer() -> None:
    state = AppState(busy="working")
    rows = screen(state)
    assert "working · Esc cancels" in rows[-3]


def test_human_tokens() -> None:
    assert [human_tokens(n) for n in (999, 1000, 1234, 12_345, 128_000, 1_500_000)] == [
        "999", "1k", "1.2k", "12k", "128k", "1.5M",
    ]  # fmt: skip


def test_transcript_follows_new_output_and_scrolls_back() -> None:
    state = AppState()
    for i in range(30):
        state.transcript.add(NoticeBlock(f"line {i}", "info"))
    rows = screen(state)
    assert "line 29" in rows[H - 4]  # the newest line sits right above the composer
    state.scroll = 6  # three notices up (each has a blank row before it)
    rows = screen(state)
    assert "line 26" in rows[H - 4]
    assert "PgDn follows" in rows[-1]
    state.scroll = 10_000
    frame = render_frame(state, W, H)
    assert plain(frame.rows[0]) == "line 0"  # clamped at the top
    assert frame.max_scroll == 30 + 29 - frame.transcript_rows  # rows plus the gaps between


def test_a_long_transcript_renders_only_what_reaches_the_screen() -> None:
    state = AppState()
    blocks = [AnswerBlock(f"paragraph {i}\n\nwith **two** lines") for i in range(5000)]
    for b in blocks:
        b.open = False
        state.transcript.blocks.append(b)
    rows = screen(state, 80, 24)
    assert "with two lines" in rows[-4]
    rendered = [b for b in blocks if b.cache is not None]
    assert 0 < len(rendered) < 20  # not 5000: the cost is what the screen shows
    state.scroll = 3000
    screen(state, 80, 24)
    assert len([b for b in blocks if b.cache is not None]) < 1100


def test_composer_wraps_by_cells_and_places_the_cursor() -> None:
    c = st.Composer()
    c.set("中文中文中文", cursor=5)  # 12 cells after a 2-cell prompt, width 10: wraps
    rows, cursor = composer_rows(c, 10, 5)
    assert [plain(r) for r in rows] == ["› 中文中文", "  中文"]
    assert cursor == (1, 4)  # after the fifth character: the second row, cells 2..4
    c.set("ab\ncd", cursor=3)
    rows, cursor = composer_rows(c, 10, 5)
    assert [plain(r) for r in rows] == ["› ab", "  cd"] and cursor == (1, 2)
    c.set("x" * 8)  # the cursor at the end of a full row goes to the next row
    rows, cursor = composer_rows(c, 10, 5)
    assert cursor == (1, 2)


def test_composer_keeps_the_cursor_row_in_view() -> None:
    c = st.Composer()
    c.set("\n".join(f"l{i}" for i in range(20)), cursor=0)
    rows, cursor = composer_rows(c, 20, 4)
    assert next(plain(r) for r in rows) == "› l0" and cursor == (0, 2)
    c.cursor = len(c.text)
    rows, cursor = composer_rows(c, 20, 4)
    assert plain(rows[-1]) == "  l19" and cursor == (3, 5)


def test_approval_overlay_shows_the_diff_choices_and_rule() -> None:
    state = AppState()
    state.transcript.add(NoticeBlock("earlier output", "info"))
    state.composer.set("draft")
    state.overlays.append(_approval())
    rows = screen(state, 60, 20)
    text = "\n".join(rows)
    assert "allow edit_file: a.txt?" in text
    assert "  -old" in rows and "  +new" in rows
    assert any(r.startswith("  1  allow once") for r in rows)
    assert "n or Esc deny" in text
    assert not any("draft" in r for r in rows)  # modal: no composer


def test_approval_diff_scrolls_and_says_how_much_is_hidden() -> None:
    o = _approval()
    o.diff = ["@@ -1,40 +1,40 @@"] + [f"-old {i}" for i in range(40)]
    state = AppState()
    state.overlays.append(o)
    rows = screen(state, 60, 16)
    assert any("more diff lines below" in r for r in rows)
    o.scroll = 1000
    rows = screen(state, 60, 16)
    assert "  -old 39" in rows and any("above" in r for r in rows)
    assert any(r.startswith("  1  allow once") for r in rows)  # the choices never scroll away


def test_tool_card_collapsed_and_expanded() -> None:
    state = AppState()
    card = ToolBlock("bash", {"command": "pytest -q"}, "c1")
    card.finish("ok", "\n".join(f"out {i}" for i in range(10)), 1.25)
    state.transcript.add(card)
    rows = screen(state, 60, 14)
    assert "✓ bash pytest -q  1.2s" in rows
    assert "  out 2" in rows and "  out 3" not in rows
    assert any("7 more lines · Ctrl-O" in r for r in rows)
    state.detail = True
    rows = screen(state, 60, 16)
    assert "  out 9" in rows


def test_edit_card_shows_the_diff_not_the_tool_text() -> None:
    state = AppState()
    card = ToolBlock("edit_file", {"path": "a.txt"}, "c1")
    card.diff = ["--- a/a.txt", "+++ b/a.txt", "@@ -1 +1 @@", "-hello", "+bye"]
    card.finish("ok", "Edited a.txt: replaced 1 occurrence", 0.004)
    state.transcript.add(card)
    rows = screen(state, 60, 12)
    assert "✓ edit_file a.txt  +1 -1 · 4ms" in rows
    assert "  -hello" in rows and "  +bye" in rows
    assert not any("Edited a.txt" in r for r in rows)


def test_picker_filters_and_highlights() -> None:
    items = [PickerItemView(f"model-{i}", f"m{i}", "") for i in range(30)]
    o = PickerOverlay("switch model", items, "/model", selected=12)
    state = AppState()
    state.overlays.append(o)
    frame = render_frame(state, W, H)
    rows = [plain(r) for r in frame.rows]
    assert "› model-12" in rows
    selected = next(r for r in frame.rows if plain(r) == "› model-12")
    assert selected[0][1] == "select"
    o.query, o.selected = "model-2", 0
    rows = screen(state)
    assert "filter: model-2" in "\n".join(rows) and "› model-2" in rows


def test_a_tiny_terminal_still_renders() -> None:
    state = AppState()
    state.transcript.add(NoticeBlock("hello", "info"))
    state.overlays.append(_approval())
    for width, height in ((1, 1), (5, 2), (10, 3), (20, 5)):
        rows, _ = render(state, width, height)
        assert len(rows) == height
        assert all(line_width(r) <= width for r in rows)


def _render_any(overlay: Any) -> list[str]:
    state = AppState()
    state.overlays.append(overlay)
    return screen(state)


def test_completion_rows_show_descriptions() -> None:
    rows = _render_any(
        CompletionOverlay("slash", 0, [("/help", "list commands"), ("/new", "fresh")])
    )
    assert any(r.startswith("  /help  list commands") for r in rows)


def test_a_keystroke_repaints_only_the_rows_it_changed() -> None:
    state = AppState()
    state.status.model, state.status.mode = "fake/m", "ask"
    for i in range(50):
        state.transcript.add(NoticeBlock(f"line {i}", "info"))
    before, _ = render(state, 60, 20)
    state.composer.set("h")
    after, _ = render(state, 60, 20)
    assert changed_rows(list(before), after) == [18]  # the composer row only
    assert changed_rows([], after) == list(range(20))  # after a resize: everything
    state.transcript.add(NoticeBlock("new output", "info"))
    scrolled, _ = render(state, 60, 20)
    moved = changed_rows(list(after), scrolled)  # the transcript moved up one notice
    assert moved and max(moved) < 17  # the rule, composer and footer were not touched


def test_tail_rows_counts_what_new_output_adds() -> None:
    from reasonix.cli.tui.view import tail_rows

    state = AppState()
    for i in range(5):
        state.transcript.add(NoticeBlock(f"line {i}", "info"))
    assert tail_rows(state, 40, 4) == 2  # a gap row and the notice
    state.transcript.add(NoticeBlock("a\nb\nc", "info"))
    assert tail_rows(state, 40, 4) == 2 + 4
    assert tail_rows(state, 40, 0) == 1 + 2 * 4 + 4
