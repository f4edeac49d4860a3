"""Scrolling a long transcript costs what the screen shows (issue 38).

``transcript_window`` keeps a row index across frames (``view.RowIndex``): the
rows it returns must be exactly those of the whole transcript laid out and
cut at the scroll position, whatever happened to the blocks in between
(streaming, a card finishing, blocks put in front, the list replaced, a new
width, details toggled). And a frame at the top of 5,000 blocks, once they
were counted, renders no more blocks than a frame of 50 (counted: no timing).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as stt

from reasonix.cli.tui import view
from reasonix.cli.tui.control import TOP, Controls
from reasonix.cli.tui.keys import Key
from reasonix.cli.tui.state import AnswerBlock, AppState, Block, NoticeBlock, ToolBlock
from reasonix.cli.tui.view import render_frame, transcript_window


def _reference(state: AppState, width: int, height: int) -> tuple[list[Any], int]:
    """The window the slow way: every block laid out, then cut."""
    blocks = state.transcript.blocks
    flat: list[Any] = []
    for i, block in enumerate(blocks):
        flat.extend(view._rows_of(block, blocks[i - 1] if i else None, width, state.detail))
    most = max(0, len(flat) - height)
    scroll = min(max(0, state.scroll), most)
    end = len(flat) - scroll
    window = flat[max(0, end - height) : end]
    return window + [()] * (height - len(window)), most


def _block(kind: int, lines: int) -> Block:
    text = "\n".join(f"row {n}" for n in range(lines))
    if kind == 0:
        return NoticeBlock(text, "info")
    if kind == 1:
        return AnswerBlock(text)
    tool = ToolBlock("bash", {"command": "echo hi"}, "c1")
    tool.finish("ok", text, 0.1)
    return tool


_BLOCK = stt.builds(_block, stt.integers(0, 2), stt.integers(0, 6))
_OP = stt.one_of(
    stt.tuples(stt.just("append"), _BLOCK),
    stt.tuples(stt.just("stream"), stt.text("ab \n", max_size=12)),
    stt.tuples(stt.just("touch"), stt.integers(0, 10_000)),
    stt.tuples(stt.just("front"), _BLOCK),
    stt.tuples(stt.just("replace"), stt.lists(_BLOCK, max_size=8)),
    stt.tuples(stt.just("pop"), stt.just(None)),
    stt.tuples(stt.just("detail"), stt.just(None)),
    stt.tuples(stt.just("width"), stt.integers(12, 50)),
    stt.tuples(stt.just("scroll"), stt.integers(0, 200)),
)


@settings(max_examples=300, deadline=None)
@given(
    start=stt.lists(_BLOCK, max_size=30),
    ops=stt.lists(_OP, max_size=25),
    height=stt.integers(1, 15),
)
def test_the_window_is_the_whole_transcript_cut_at_the_scroll(
    start: list[Block], ops: list[tuple[str, Any]], height: int
) -> None:
    state = AppState()
    t = state.transcript
    t.blocks.extend(start)
    width = 30
    for op, arg in ops:
        if op == "append":
            t.add(arg)
        elif op == "stream":
            t.stream(AnswerBlock).add(arg)
        elif op == "touch" and t.blocks:
            t.blocks[arg % len(t.blocks)].touch()
        elif op == "front":
            t.blocks.insert(0, arg)
        elif op == "replace":
            t.blocks.clear()
            t.blocks.extend(arg)
        elif op == "pop" and t.blocks:
            t.blocks.pop()
        elif op == "detail":
            state.detail = not state.detail
        elif op == "width":
            width = arg
        elif op == "scroll":
            state.scroll = arg
        got, most = transcript_window(state, width, height)
        want, true_most = _reference(state, width, height)
        assert got == want
        assert min(state.scroll, true_most) <= most <= true_most  # exact once all is counted
        if state.scroll >= true_most:
            assert most == true_most


def _long(blocks: int) -> AppState:
    state = AppState()
    for i in range(blocks):
        state.transcript.add(NoticeBlock(f"notice {i}\nsecond line\nthird line", "info"))
    return state


def _rendered_per_frame(state: AppState, keys: list[str]) -> list[int]:
    """Blocks whose rows were looked up for each frame after each key (the view's work)."""
    calls: list[int] = []
    real = view._rows_of

    def counting(*args: Any) -> Any:
        calls[-1] += 1
        return real(*args)

    controls = Controls(state)
    view._rows_of = counting  # type: ignore[assignment]
    try:
        for name in keys:
            controls.key(Key(name))
            calls.append(0)
            frame = render_frame(state, 80, 24)
            state.page = frame.transcript_rows
            state.scroll = min(state.scroll, frame.max_scroll)  # what the app does
    finally:
        view._rows_of = real  # type: ignore[assignment]
    return calls


def test_scrolling_5000_blocks_looks_at_no_more_blocks_than_50() -> None:
    keys = ["ctrl-home"] + ["pgdn"] * 5 + ["pgup"] * 5 + ["ctrl-end"] + ["pgup"] * 5
    keys += ["pgdn"] * 5 + ["home", "end"] * 3
    small, big = _long(50), _long(5000)
    render_frame(big, 80, 24)
    _rendered_per_frame(big, ["ctrl-home", "ctrl-end"])  # count every block once
    _rendered_per_frame(small, ["ctrl-home", "ctrl-end"])
    few, many = _rendered_per_frame(small, keys), _rendered_per_frame(big, keys)
    assert max(many) <= max(few) + 2, (few, many)  # the window's blocks, not the transcript's
    assert max(many) <= 12


def test_home_and_end_scroll_the_transcript_only_with_an_empty_composer() -> None:
    state = _long(100)
    controls = Controls(state)
    controls.key(Key("home"))
    assert state.scroll == TOP
    frame = render_frame(state, 80, 24)
    assert frame.max_scroll > 0
    controls.key(Key("end"))
    assert state.scroll == 0
    state.composer.set("abc")
    controls.key(Key("home"))
    assert state.scroll == 0 and state.composer.cursor == 0  # the line's start
    controls.key(Key("ctrl-home"))
    assert state.scroll == TOP
    controls.key(Key("ctrl-end"))
    assert state.scroll == 0


def test_ctrl_home_and_ctrl_end_are_decoded() -> None:
    from reasonix.cli.tui.keys import KeyDecoder

    keys = KeyDecoder().feed("\x1b[1;5H\x1b[1;5F\x1b[1;5~\x1b[4;5~\x1b[H\x1b[1;2H")
    assert [k.name for k in keys] == ["ctrl-home", "ctrl-end", "ctrl-home", "ctrl-end", "home",
                                      "home"]  # fmt: skip
