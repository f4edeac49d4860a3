"""Screen rows for one transcript block: user turns, answers, thinking, tool cards, notices.

Pure: ``render_block(block, width, detail)`` returns rows of at most
``width`` cells. ``detail`` (Ctrl-O) expands tool output, diffs and thinking;
collapsed cards show the first lines and say how many more there are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .diff import EDIT_TOOLS, diff_rows, diff_stats
from .markdown import MarkdownCache
from .state import AnswerBlock, Block, NoticeBlock, ReasoningBlock, ToolBlock, UserBlock
from .width import Line, fit, wrap_spans

if TYPE_CHECKING:
    from typing import Any

__all__ = ["key_argument", "render_block"]

COLLAPSED_OUTPUT = 3  # output lines of a collapsed card
COLLAPSED_DIFF = 12  # diff lines of a collapsed card
EXPANDED_OUTPUT = 400
_KEY_ARGS = ("path", "file_path", "command", "pattern", "url", "query", "name", "source_path",
             "notebook_path", "uri", "description")  # fmt: skip
_GLYPH = {"waiting": ("?", "warn"), "running": ("…", "tool"), "ok": ("✓", "ok"),
          "error": ("✗", "err"), "blocked": ("⊘", "err"), "done": ("•", "tool")}  # fmt: skip


def key_argument(name: str, args: dict[str, Any]) -> str:
    """The one argument that says what a call does (its path, command, pattern …)."""
    for key in _KEY_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            if key == "source_path" and isinstance(args.get("destination_path"), str):
                return f"{value} → {args['destination_path']}"
            return value
    for value in args.values():
        if isinstance(value, str) and value.strip():
            return value
    import json

    return json.dumps(args, ensure_ascii=False)[:200] if args else ""


def _flat(text: str) -> str:
    return " ".join(text.split())


def _more(count: int, what: str) -> Line:
    return ((f"  … {count} more {what} · Ctrl-O shows all", "dim"),)


def _text_rows(text: str, width: int, style: str, limit: int, indent: str = "  ") -> list[Line]:
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    shown = lines[:limit]
    pad: Line = ((indent, "text"),)
    rows: list[Line] = []
    for line in shown:
        rows.extend(
            wrap_spans(((line.expandtabs(4), style),), width, first=pad, rest=pad, words=False)
        )
    if len(lines) > limit:
        rows.append(_more(len(lines) - limit, "lines"))
    return rows


def _tool_rows(block: ToolBlock, width: int, detail: bool, spin: str) -> list[Line]:
    glyph, style = _GLYPH.get(block.status, ("·", "tool"))
    if block.status == "running" and spin:
        glyph = spin
    meta = {"waiting": "waiting for approval", "running": "running"}.get(block.status, "")
    if block.status == "blocked":
        meta = "blocked"
    if block.seconds is not None and block.status in ("ok", "error"):
        meta = f"{block.seconds:.1f}s" if block.seconds >= 0.1 else f"{block.seconds * 1000:.0f}ms"
    if block.diff:
        added, removed = diff_stats(block.diff)
        meta = f"+{added} -{removed}" + (f" · {meta}" if meta else "")
    head: list[tuple[str, str]] = [(glyph + " ", style), (block.name, "bold")]
    arg = _flat(key_argument(block.name, block.arguments))
    tail = f"  {meta}" if meta else ""
    room = width - len(glyph) - 1 - len(block.name) - len(tail) - 1
    if arg and room > 3:
        head.append((" ", "text"))
        head.extend(fit(((arg, "text"),), room, ellipsis=True))
    if tail:
        head.append((tail, "dim"))
    rows: list[Line] = [fit(tuple(head), width, ellipsis=True)]
    if block.diff:
        body = [ln for ln in block.diff if not ln.startswith(("--- ", "+++ "))]
        limit = len(body) if detail else COLLAPSED_DIFF
        rows.extend(diff_rows(body[:limit], width, indent=2))
        if len(body) > limit:
            rows.append(_more(len(body) - limit, "diff lines"))
    edit_ok = block.name in EDIT_TOOLS and block.status in ("ok", "done") and bool(block.diff)
    if block.output and (detail or not edit_ok):
        out_style = "err" if block.status in ("error", "blocked") else "dim"
        limit = EXPANDED_OUTPUT if detail else COLLAPSED_OUTPUT
        rows.extend(_text_rows(block.output, width, out_style, limit))
    return rows


def _reasoning_rows(block: ReasoningBlock, width: int, detail: bool) -> list[Line]:
    lines = [ln for ln in block.text.strip().split("\n") if ln.strip()]
    if detail:
        rows: list[Line] = [(("✻ thinking", "dim"),)]
        rows.extend(_text_rows("\n".join(lines), width, "dim", EXPANDED_OUTPUT * 5, indent="  "))
        return rows
    if block.open:
        last = lines[-1] if lines else ""
        return [fit((("✻ thinking… ", "dim"), (_flat(last)[-width:], "dim")), width, ellipsis=True)]
    tail = " · Ctrl-O"
    head = fit((("✻ " + _flat(block.text), "dim"),), max(4, width - len(tail)), ellipsis=True)
    return [fit((*head, (tail, "dim")), width)]


def _notice_rows(block: NoticeBlock, width: int) -> list[Line]:
    style = {"error": "err", "warn": "warn", "info": "text"}.get(block.kind, "dim")
    lead = {"error": "✗ ", "warn": "! ", "info": ""}.get(block.kind, "· ")
    rows: list[Line] = []
    for i, line in enumerate(block.text.rstrip("\n").split("\n")):
        first: Line = ((lead if i == 0 else " " * len(lead), style),) if lead else ()
        rest: Line = ((" " * len(lead), style),) if lead else ()
        rows.extend(wrap_spans(((line.expandtabs(4), style),), width, first=first, rest=rest))
    return rows


def _user_rows(block: UserBlock, width: int) -> list[Line]:
    rows: list[Line] = []
    for i, line in enumerate(block.text.split("\n")):
        first: Line = (("› " if i == 0 else "  ", "prompt"),)
        rows.extend(
            wrap_spans(((line.expandtabs(4), "user"),), width, first=first, rest=(("  ", "user"),))
        )
    return rows


def render_block(block: Block, width: int, detail: bool, spin: str = "") -> list[Line]:
    """The rows of one block at ``width`` cells."""
    if isinstance(block, AnswerBlock):
        markdown = block.markdown
        if not isinstance(markdown, MarkdownCache):
            markdown = block.markdown = MarkdownCache()
        rows = markdown.render(block.text.strip("\n"), width)
        return rows or [()]
    if isinstance(block, ToolBlock):
        return _tool_rows(block, width, detail, spin)
    if isinstance(block, ReasoningBlock):
        return _reasoning_rows(block, width, detail)
    if isinstance(block, UserBlock):
        return _user_rows(block, width)
    if isinstance(block, NoticeBlock):
        return _notice_rows(block, width)
    return []
