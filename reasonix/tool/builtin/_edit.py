"""Exact string replacement shared by edit_file and multi_edit.

The model's strings are converted to the file's newline style before matching,
so a CRLF file can be edited with LF strings and stays CRLF. When nothing
matches, the error shows the closest lines and says whether only whitespace
or line endings differ, because that is the usual cause.
"""

from __future__ import annotations

import re

from reasonix.errors import ToolError
from reasonix.tool.builtin._files import TextFile

__all__ = ["apply_edit", "changed_line_span", "line_span", "snippet"]

_MAX_HINTS = 3


def apply_edit(
    tf: TextFile, text: str, old_string: str, new_string: str, replace_all: bool
) -> tuple[str, int]:
    """Replace ``old_string`` in ``text``; returns (new text, replacements).

    Raises ToolError when old == new, old is empty, not found, or ambiguous.
    """
    if old_string == "":
        raise ToolError("old_string is empty; to create or rewrite a whole file use write_file")
    if old_string == new_string:
        raise ToolError("old_string and new_string are identical; nothing would change")
    old = tf.to_file_newlines(old_string)
    new = tf.to_file_newlines(new_string)
    count = text.count(old)
    if count == 0 and old != old_string and old_string in text:
        # A file with mixed line endings: the model's text matches as given.
        old, new = old_string, new_string
        count = text.count(old)
    if count == 0:
        raise ToolError(_not_found(text, old_string))
    if count > 1 and not replace_all:
        lines = _match_lines(text, old)
        raise ToolError(
            f"old_string matches {count} times (lines {', '.join(map(str, lines))}); add "
            "surrounding context to make it unique, or set replace_all=true to replace every one"
        )
    if replace_all:
        return text.replace(old, new), count
    return text.replace(old, new, 1), 1


def _match_lines(text: str, old: str, limit: int = 10) -> list[int]:
    out: list[int] = []
    start = 0
    while len(out) < limit:
        idx = text.find(old, start)
        if idx < 0:
            break
        out.append(text.count("\n", 0, idx) + 1)
        start = idx + max(1, len(old))
    return out


def _squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _not_found(text: str, old_string: str) -> str:
    """An error message for a missing old_string, with the most likely reason."""
    norm_text = text.replace("\r\n", "\n")
    norm_old = old_string.replace("\r\n", "\n")
    parts = ["old_string was not found in the file."]
    file_lines = norm_text.split("\n")
    if _squash(norm_old) and _squash(norm_old) in _squash(norm_text):
        parts.append(
            "It matches if whitespace is ignored: check indentation (tabs vs spaces), "
            "trailing spaces and line breaks, and copy the text exactly from read_file output "
            "(without the line-number prefix)."
        )
    elif "\r" in norm_old or ("\t" in norm_old and "\t" not in norm_text):
        parts.append("Check for tab or carriage-return characters that the file does not use.")
    if re.match(r"\s*\d+\t", norm_old):
        parts.append("Remove the line-number prefixes that read_file adds (digits and a tab).")
    probe = next((ln for ln in norm_old.split("\n") if ln.strip()), "")
    if probe:
        hints = _closest_lines(file_lines, probe)
        if hints:
            parts.append("Closest lines in the file:")
            parts.extend(f"  {n}: {line}" for n, line in hints)
    parts.append("Re-read the file with read_file and retry with the exact current text.")
    return "\n".join(parts)


def _closest_lines(lines: list[str], probe: str) -> list[tuple[int, str]]:
    import difflib  # only a failed match needs it: not at import

    stripped = [ln.strip() for ln in lines]
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(probe.strip())
    scored: list[tuple[float, int]] = []
    for i, cand in enumerate(stripped):
        if not cand:
            continue
        matcher.set_seq1(cand)
        if matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5:
            continue
        ratio = matcher.ratio()
        if ratio >= 0.5:
            scored.append((ratio, i))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(i + 1, lines[i][:200]) for _, i in scored[:_MAX_HINTS]]


def changed_line_span(before: str, after: str) -> tuple[int, int]:
    """1-based first and last line of ``after`` that differ from ``before``."""
    a = before.split("\n")
    b = after.split("\n")
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start + 1, max(start + 1, end_b)


def snippet(text: str, start: int, end: int, context: int = 2, max_lines: int = 12) -> str:
    """Lines ``start``..``end`` (1-based) of ``text`` with a little context, numbered."""
    lines = text.replace("\r\n", "\n").split("\n")
    lo = max(1, start - context)
    hi = min(len(lines), end + context, lo + max_lines - 1)
    return "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(lo, hi + 1))


def line_span(first: int, last: int) -> str:
    """``line 6`` or ``lines 6-9``."""
    return f"line {first}" if first == last else f"lines {first}-{last}"
