"""Screen rows for the overlays: approval question, picker, confirmation, autocomplete.

Pure: each function gets the overlay, the width and the most rows it may use,
and returns at most that many rows.
"""

from __future__ import annotations

from .diff import diff_rows
from .state import ApprovalOverlay, CompletionOverlay, ConfirmOverlay, Overlay, PickerOverlay
from .width import Line, fit, text_width, wrap_spans

__all__ = ["approval_diff_room", "overlay_rows"]

MAX_COMPLETIONS = 8


def _title(text: str, width: int) -> Line:
    label = f"── {text} "
    return fit(((label + "─" * max(0, width - text_width(label)), "panel"),), width)


def _wrapped(text: str, width: int, style: str, indent: str = "  ") -> list[Line]:
    rows: list[Line] = []
    pad: Line = ((indent, style),)
    for line in text.split("\n"):
        rows.extend(wrap_spans(((line, style),), width, first=pad, rest=pad))
    return rows


def _approval_fixed(
    o: ApprovalOverlay, width: int, scrolls: bool = True
) -> tuple[list[Line], list[Line]]:
    head = [_title(o.title, width)]
    for line in o.detail:
        head.extend(_wrapped(line, width, "text"))
    tail: list[Line] = []
    for key, label, _ in o.choices:
        first: Line = (("  ", "text"), (key, "key"), ("  ", "text"))
        pad: Line = ((" " * (4 + text_width(key)), "text"),)
        tail.extend(wrap_spans(((label, "text"),), width, first=first, rest=pad))
    hint = "y allow once · n or Esc deny"
    if o.diff and scrolls:
        hint += " · PgUp/PgDn scroll the diff"
    tail.append(fit(((f"  {hint}", "dim"),), width, ellipsis=True))
    return head, tail


def approval_diff_room(o: ApprovalOverlay, width: int, max_rows: int) -> int:
    """Rows the diff gets in the approval overlay (PgUp/PgDn scroll by this much)."""
    head, tail = _approval_fixed(o, width)
    return max(1, max_rows - len(head) - len(tail) - 1)


def _approval(o: ApprovalOverlay, width: int, max_rows: int) -> list[Line]:
    body = diff_rows(o.diff, width, indent=2) if o.diff else []
    room = approval_diff_room(o, width, max_rows)
    head, tail = _approval_fixed(o, width, scrolls=len(body) > room)
    rows = list(head)
    if o.diff:
        start = max(0, min(o.scroll, max(0, len(body) - room)))
        window = body[start : start + room]
        below = len(body) - start - len(window)
        rows.extend(window)
        if below > 0:
            rows.append(((f"  … {below} more diff lines below (PgDn)", "dim"),))
        elif start > 0:
            rows.append(((f"  ({start} diff lines above, PgUp)", "dim"),))
    rows.extend(tail)
    if len(rows) > max_rows:  # a tiny terminal: the title and the choices come first
        rows = (head[:1] + tail)[-max_rows:]
    return rows


def _picker(o: PickerOverlay, width: int, max_rows: int) -> list[Line]:
    rows = [_title(o.title, width)]
    if o.query:
        rows.append(fit(((f"  filter: {o.query}", "dim"),), width, ellipsis=True))
    items = o.visible()
    room = max(1, max_rows - len(rows) - 1)
    if not items:
        rows.append((("  (nothing matches)", "dim"),))
    selected = max(0, min(o.selected, len(items) - 1))
    start = max(0, min(selected - room // 2, len(items) - room))
    shown = items[start : start + room]
    col = min(max((text_width(i.label) for i in shown), default=0), width // 2)
    for i, item in enumerate(shown, start=start):
        style = "select" if i == selected else "text"
        marker = "› " if i == selected else "  "
        line: list[tuple[str, str]] = [(marker + item.label, style)]
        if item.description:
            pad = " " * max(2, col - text_width(item.label) + 2)
            line.append((pad + item.description, "dim" if i != selected else style))
        rows.append(fit(tuple(line), width, ellipsis=True))
    rows.append(fit((("  ↑↓ choose · Enter select · Esc close · type to filter", "dim"),), width))
    return rows[:max_rows]


def _confirm(o: ConfirmOverlay, width: int, max_rows: int) -> list[Line]:
    rows = [_title(o.title, width)]
    rows.extend(_wrapped(o.question, width, "text"))
    rows.append(fit((("  y or Enter: yes · n or Esc: no", "dim"),), width))
    return rows[-max_rows:] if len(rows) > max_rows else rows


def _completion(o: CompletionOverlay, width: int, max_rows: int) -> list[Line]:
    room = max(1, min(MAX_COMPLETIONS, max_rows))
    start = max(0, min(o.selected - room + 1, len(o.items) - room))
    start = max(0, start)
    col = min(max((text_width(t) for t, _ in o.items), default=0) + 2, width // 2)
    rows: list[Line] = []
    for i, (text, desc) in enumerate(o.items[start : start + room], start=start):
        style = "select" if i == o.selected else "text"
        pad = " " * max(1, col - text_width(text))
        spans = [("  " + text + pad, style), (desc, style if i == o.selected else "dim")]
        rows.append(fit(tuple(spans), width, ellipsis=True))
    return rows


def overlay_rows(overlay: Overlay, width: int, max_rows: int) -> list[Line]:
    """The rows of ``overlay``, at most ``max_rows``."""
    if max_rows <= 0:
        return []
    if isinstance(overlay, ApprovalOverlay):
        return _approval(overlay, width, max_rows)
    if isinstance(overlay, PickerOverlay):
        return _picker(overlay, width, max_rows)
    if isinstance(overlay, ConfirmOverlay):
        return _confirm(overlay, width, max_rows)
    if isinstance(overlay, CompletionOverlay):
        return _completion(overlay, width, max_rows)
    raise TypeError(f"no rows for overlay {type(overlay).__name__}")
