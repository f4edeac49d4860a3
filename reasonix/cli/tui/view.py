"""``render(state, width, height) -> (rows, cursor)``: the whole frame, pure.

From the top: the transcript (following new output unless scrolled up), then
the bottom region — an overlay panel, the composer unless the overlay is
modal (CMD-7), and the footer. Each block's rows are cached on the block for
its (width, version, detail), and a row index kept across frames
(:class:`RowIndex`) finds the visible window by bisection: a block is rendered
when the view first reaches it, and a frame costs what its screen shows
however long the transcript and wherever it is scrolled.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from .state import ApprovalOverlay, AppState, Block, Composer, ToolBlock, hide_composer, stamp
from .width import Line, char_width, fit, text_width

# The cards (with Markdown and diffs) and the overlay panels are imported when a block or
# an overlay is first drawn: the first frame, an empty chat, needs neither.

__all__ = [
    "SPINNER",
    "Frame",
    "RowIndex",
    "changed_rows",
    "composer_rows",
    "footer_row",
    "human_tokens",
    "render",
    "render_frame",
    "rule_row",
    "tail_rows",
    "transcript_window",
]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PLACEHOLDER = "Ask anything · / for commands · @ for files · Ctrl-D leaves"
_PROMPT, _CONT = "› ", "  "


def human_tokens(n: int) -> str:
    """1234 -> 1.2k, 128000 -> 128k, 1500000 -> 1.5M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        value, unit = n / 1000, "k"
    else:
        value, unit = n / 1_000_000, "M"
    text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
    return text.removesuffix(".0") + unit


def _gap(prev: Block | None, block: Block) -> bool:
    if prev is None:
        return False
    return not (isinstance(prev, ToolBlock) and isinstance(block, ToolBlock))


def _rows_of(block: Block, prev: Block | None, width: int, detail: bool) -> list[Line]:
    gap = _gap(prev, block)
    key = (width, block.version, detail, gap)
    cached = block.cache
    if cached is not None and cached[0] == key:
        rows: list[Line] = cached[1]
        return rows
    from .cards import render_block

    rows = ([()] if gap else []) + render_block(block, width, detail)
    block.cache = (key, rows)
    return rows


def tail_rows(state: AppState, width: int, first: int) -> int:
    """Rows the blocks from index ``first`` on take (to keep a scrolled-up view still)."""
    blocks = state.transcript.blocks
    return sum(
        len(_rows_of(blocks[i], blocks[i - 1] if i > 0 else None, width, state.detail))
        for i in range(max(0, first), len(blocks))
    )


class RowIndex:
    """Where each transcript block's rows start, kept across frames (``Transcript.index``).

    Scrolling a long transcript must cost what the screen shows, not what the
    transcript holds (issue 38: Home/End and PgUp/PgDn on 5,000 blocks within
    2x of 50). Blocks are counted lazily outward from an *anchor*: ``down[k]``
    is the rows of blocks ``anchor..anchor+k`` (new output at the end only
    changes its tail), ``up[k]`` the rows of blocks ``anchor-1-k..anchor-1``
    (filled as the view is scrolled further up than before). The window is
    then found by bisection. A frame in which no block was made or touched
    (:func:`~reasonix.cli.tui.state.stamp`) and the list kept its length and
    ends checks nothing else; otherwise the block versions (unique, so they
    also tell a replaced block) are compared to find the first change.
    """

    def __init__(self, key: tuple[int, bool], blocks: list[Block]) -> None:
        self.key = key
        self.anchor = len(blocks)
        self.versions = [b.version for b in blocks]
        self.up: list[int] = []
        self.down: list[int] = []
        self.seen = stamp()
        self.last: Block | None = blocks[-1] if blocks else None

    def sync(self, blocks: list[Block], rows_of: Callable[[int], list[Line]]) -> None:
        """Bring the counts up to date with ``blocks`` and count the blocks after the anchor."""
        now = stamp()
        last = blocks[-1] if blocks else None
        same = now == self.seen + 1 and len(blocks) == len(self.versions) and last is self.last
        self.seen, self.last = now, last
        if not same:
            versions = [b.version for b in blocks]
            k = _first_difference(self.versions, versions)
            self.versions = versions
            if k < self.anchor:  # something before the anchor changed: count afresh
                self.anchor, self.up, self.down = len(blocks), [], []
            else:  # the blocks from k on are counted again (k's change may move k+1's gap)
                del self.down[k - self.anchor :]
        total = self.down[-1] if self.down else 0
        for i in range(self.anchor + len(self.down), len(blocks)):
            total += len(rows_of(i))
            self.down.append(total)

    def reach(self, top: int, rows_of: Callable[[int], list[Line]]) -> None:
        """Count blocks before the anchor until row ``top`` (<= 0: above the anchor) is known."""
        above = self.up[-1] if self.up else 0
        while -above > top and len(self.up) < self.anchor:
            above += len(rows_of(self.anchor - 1 - len(self.up)))
            self.up.append(above)

    def block_at(self, row: int) -> int:
        """The block holding ``row`` (rows count from the anchor's first; above it < 0)."""
        if row >= 0:
            return self.anchor + bisect_right(self.down, row)
        return self.anchor - 1 - bisect_left(self.up, -row)

    def start(self, i: int) -> int:
        """The row block ``i`` starts at."""
        if i >= self.anchor:
            return self.down[i - self.anchor - 1] if i > self.anchor else 0
        return -self.up[self.anchor - 1 - i]


def _first_difference(a: list[int], b: list[int]) -> int:
    """The first index where ``a`` and ``b`` differ (the shorter length if one extends the
    other), by bisection over slice comparisons: C-speed, for lists of many thousands."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # the first difference is in [lo, hi)
        mid = (lo + hi) // 2
        if a[lo : mid + 1] == b[lo : mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def transcript_window(state: AppState, width: int, height: int) -> tuple[list[Line], int]:
    """The visible transcript rows (top-aligned) and how far up it can scroll at most."""
    t = state.transcript
    blocks = t.blocks

    def rows_of(i: int) -> list[Line]:
        return _rows_of(blocks[i], blocks[i - 1] if i > 0 else None, width, state.detail)

    index = t.index
    key = (width, state.detail)
    if not isinstance(index, RowIndex) or index.key != key:
        index = t.index = RowIndex(key, blocks)
    index.sync(blocks, rows_of)
    bottom = index.down[-1] if index.down else 0
    index.reach(bottom - max(0, state.scroll) - height, rows_of)
    top = -index.up[-1] if index.up else 0
    exhausted = len(index.up) == index.anchor
    count = bottom - top
    most = max(0, count - height) if exhausted else max(state.scroll, count - height)
    scroll = min(max(0, state.scroll), most)
    end = bottom - scroll
    first = max(top, end - height)
    window: list[Line] = []
    if end > first:
        i = index.block_at(first)
        skip = first - index.start(i)
        while len(window) < skip + (end - first) and i < len(blocks):
            window.extend(rows_of(i))
            i += 1
        window = window[skip : skip + (end - first)]
    return window + [()] * (height - len(window)), most


def composer_rows(
    c: Composer, width: int, max_rows: int, placeholder: str = ""
) -> tuple[list[Line], tuple[int, int]]:
    """The composer's rows (prompt, wrapped text) and the cursor (row, column) within them."""
    avail = max(1, width - len(_PROMPT))
    rows: list[list[tuple[str, str]]] = []
    cursor = (0, len(_PROMPT))
    pos = 0
    for li, line in enumerate(c.text.split("\n")):
        rows.append([(_PROMPT if li == 0 else _CONT, "prompt")])
        used, start = 0, 0
        for ci, ch in enumerate(line):
            w = char_width(ch)
            if used + w > avail:
                rows[-1].append((line[start:ci], "input"))
                rows.append([(_CONT, "prompt")])
                used, start = 0, ci
            if pos + ci == c.cursor:
                cursor = (len(rows) - 1, len(_PROMPT) + used)
            used += w
        rows[-1].append((line[start:], "input"))
        if pos + len(line) == c.cursor:
            if used >= avail:
                rows.append([(_CONT, "prompt")])
                cursor = (len(rows) - 1, len(_PROMPT))
            else:
                cursor = (len(rows) - 1, len(_PROMPT) + used)
        pos += len(line) + 1
    if not c.text and placeholder:
        rows[0].append((placeholder, "dim"))
    out: list[Line] = [fit(tuple(r), width) for r in rows]
    if len(out) > max_rows:  # keep the cursor's row in view
        first = max(0, min(cursor[0] - max_rows + 1, len(out) - max_rows))
        out = out[first : first + max_rows]
        cursor = (cursor[0] - first, cursor[1])
    return out, cursor


def rule_row(state: AppState, width: int) -> Line:
    """The line above the composer; while something runs it says what, and how to stop it."""
    if not state.busy:
        return (("─" * width, "rule"),)
    spin = SPINNER[state.tick % len(SPINNER)]
    stop = "" if state.busy in ("starting", "cancelling") else " · Esc cancels"
    label = f"{spin} {state.busy}{stop} "
    row: Line = (("── ", "rule"), (label, "busy"), ("─" * width, "rule"))
    return fit(row, width)


def footer_row(state: AppState, width: int) -> Line:
    """Model · mode · context used/window and headroom · cache hit · cost, plus activity."""
    s = state.status
    facts: list[tuple[str, str]] = []
    if s.model:
        facts.append((s.model, "footer"))
    if s.mode:
        facts.append((s.mode, "mode"))
    if s.context_window or s.context_used is not None:
        used = "–" if s.context_used is None else human_tokens(s.context_used)
        ctx = f"ctx {used}/{human_tokens(s.context_window)}" if s.context_window else f"ctx {used}"
        if s.compact_at and s.context_used is not None:
            ctx += f" ({human_tokens(max(0, s.compact_at - s.context_used))} to compact)"
        facts.append((ctx, "footer"))
    if s.cache_ratio is not None:
        facts.append((f"cache {s.cache_ratio:.0%}", "footer"))
    if s.cost:
        facts.append((s.cost, "footer"))
    if s.budget:
        facts.append((s.budget, "footer"))
    if s.script:
        facts.append((s.script, "footer"))
    right = state.hint
    if state.scroll > 0:
        right = ("↑ scrolled · PgDn follows  " + right).rstrip()
    spans: list[tuple[str, str]] = [(" ", "footer")]
    for i, fact in enumerate(facts):
        if i:
            spans.append((" · ", "footer"))
        spans.append(fact)
    room = width - text_width(right) - 2 if right else width
    left = fit(tuple(spans), max(0, room), ellipsis=True)
    taken = sum(text_width(t) for t, _ in left)
    gap = max(1, width - taken - text_width(right) - 1) if right else 0
    line = (*left, (" " * gap + right + " ", "hint")) if right else left
    return fit(line, width)


class Frame:
    """One rendered screen: its rows, the cursor, and facts the app needs for scrolling."""

    def __init__(
        self,
        rows: list[Line],
        cursor: tuple[int, int] | None,
        transcript_rows: int,
        max_scroll: int,
        panel_page: int = 0,
    ) -> None:
        self.rows, self.cursor = rows, cursor
        self.transcript_rows, self.max_scroll = transcript_rows, max_scroll
        self.panel_page = panel_page  # rows of the approval diff window (0: none)


def render_frame(state: AppState, width: int, height: int) -> Frame:
    """The frame: ``height`` rows of at most ``width`` cells, the cursor, scroll limits."""
    width, height = max(1, width), max(1, height)
    footer = footer_row(state, width)
    overlay = state.overlay
    hidden = hide_composer(overlay)
    comp: list[Line] = []
    cursor_in: tuple[int, int] = (0, 0)
    if not hidden:
        placeholder = PLACEHOLDER  # typing may start while the runtime is still being built
        max_comp = max(1, min(10, (height - 2) // 3))
        comp, cursor_in = composer_rows(state.composer, width, max_comp, placeholder)
        comp = [rule_row(state, width), *comp]
        cursor_in = (cursor_in[0] + 1, cursor_in[1])
    fleet: list[Line] = []
    if state.subagents:  # the sub-agent panel (issue 36), only while a turn has children
        from .subagents import panel_rows

        fleet = panel_rows(state, width)
    panel: list[Line] = []
    room = 0
    if overlay is not None:
        from .overlays import overlay_rows

        room = height - len(comp) - len(fleet) - 1 - (1 if height > 6 else 0)
        panel = overlay_rows(overlay, width, max(0, room))
    panel += fleet
    bottom = panel + comp + [footer]
    cut = max(0, len(bottom) - height)  # a terminal smaller than the bottom region
    bottom = bottom[cut:]
    trans_h = height - len(bottom)
    rows, most = transcript_window(state, width, trans_h) if trans_h > 0 else ([], 0)
    panel_page = 0
    if isinstance(overlay, ApprovalOverlay) and overlay.diff:
        from .overlays import approval_diff_room

        panel_page = approval_diff_room(overlay, width, max(0, room))
    cursor: tuple[int, int] | None = None
    if not hidden and comp:
        row = trans_h + len(panel) + cursor_in[0] - cut
        if trans_h <= row < height:
            cursor = (row, min(cursor_in[1], width - 1))
    return Frame(rows + bottom, cursor, trans_h, most, panel_page)


def changed_rows(before: list[Line | None], after: list[Line]) -> list[int]:
    """Indexes of the rows of ``after`` that differ from ``before`` (what a paint touches)."""
    return [y for y, row in enumerate(after) if y >= len(before) or before[y] != row]


def render(state: AppState, width: int, height: int) -> tuple[list[Line], tuple[int, int] | None]:
    """The frame's rows (``height`` of them, each at most ``width`` cells) and the cursor."""
    frame = render_frame(state, width, height)
    return frame.rows, frame.cursor
