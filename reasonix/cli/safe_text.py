"""The one sanitiser for untrusted text on its way to a terminal.

Text from the model, tools, MCP servers, files and error messages may carry
control characters: ESC starts colour changes, screen clears, title writes
and OSC 52 clipboard writes; CR and BS overwrite what was already shown;
C1 controls (0x9b is a one-byte CSI on some terminals) and bidi overrides
reorder or hide text. Every frontend that writes such text to a terminal
passes it through :func:`printable`, which shows each of these characters
visibly as a Python-style escape (``\\x1b``, ``\\u202e``) so nothing is ever
interpreted. Printable Unicode (CJK, emoji with their joiners and variation
selectors) is left untouched.

Structured output keeps the text itself: :func:`json_line` serialises one
object so that no raw control character reaches the stream either (JSON
escapes C0 itself; DEL, C1, bidi controls and lone surrogates are written
as ``\\uXXXX`` escapes, which decode back to the same text). The browser
frontend escapes HTML instead; ACP speaks JSON-RPC and uses ``json_line``'s
rule.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from reasonix.lazy import Pattern

if TYPE_CHECKING:
    from typing import Any

__all__ = ["json_line", "printable"]

# C0 controls except TAB and LF, DEL, C1 controls, the bidi embedding /
# override / isolate controls, and lone surrogates (undecodable bytes kept
# by surrogateescape; writing them to a UTF-8 stream would raise).
_UNSAFE_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = Pattern(f"\r\n|[{_UNSAFE_CLASS}]")
_UNSAFE_FLAT = Pattern(f"[{_UNSAFE_CLASS}\t\n]")
# The same set minus C0 (json.dumps escapes C0 itself), for JSON text.
_UNSAFE_JSON = Pattern("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(char: str) -> str:
    code = ord(char)
    if char == "\t":
        return "\\t"
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _replace(match: re.Match[str]) -> str:
    found = match.group()
    return "\n" if found == "\r\n" else _visible(found)


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character and escape introducer shown visibly.

    With ``keep_newlines`` TAB and LF pass through (and CRLF becomes LF); without
    it they are shown as ``\\t`` / ``\\n`` too, for one-line displays. Text with
    nothing to escape is returned as is (the common case stays cheap).
    """
    if text.isascii() and text.isprintable():
        return text  # no control character at all (the pattern need not be compiled)
    pattern = _UNSAFE if keep_newlines else _UNSAFE_FLAT
    if pattern.search(text) is None:
        return text
    if keep_newlines:
        return pattern.sub(_replace, text)
    return pattern.sub(lambda m: _visible(m.group()), text)


def json_line(obj: Any) -> str:
    """``obj`` as one line of JSON (no trailing newline) with no raw control character.

    Non-ASCII printable text stays readable (``ensure_ascii=False``); the
    characters a terminal could interpret are ``\\uXXXX`` escapes.
    """
    text = json.dumps(obj, ensure_ascii=False)
    if (text.isascii() and "\x7f" not in text) or _UNSAFE_JSON.search(text) is None:
        return text  # (ASCII JSON has no C1, bidi or surrogate: only DEL to look for)
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
