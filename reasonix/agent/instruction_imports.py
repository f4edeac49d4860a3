"""``@path`` imports in instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, REASONIX.md).

Claude Code's memory files may pull other files in with ``@path`` (documented at
code.claude.com/docs/en/memory, "Import additional files"; Gemini CLI reads the
same syntax in GEMINI.md). The rules followed here:

* an import is an ``@`` at the start of a line or after whitespace, followed by a
  path (``@docs/style.md``, ``@./x.md``, ``@~/.claude/prefs.md``, ``@/abs/x.md``);
  inside fenced code blocks and inline code spans it is text, and so is an ``@``
  word that names no file-like path (``@alice``);
* a relative path is relative to the importing file, ``~`` is the user's home;
* imports nest up to :data:`MAX_DEPTH` levels; each file is read once per load;
* a path that leaves the allowed roots (:class:`Reach`) is not read, nor is a
  secret Reasonix keeps (``<home>/.env`` …) whoever asks.

What is not read is named in a notice (missing file, cycle, too deep, outside
the allowed folders, a secret) so the user sees why.
"""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.lazy import dataclass

__all__ = ["MAX_DEPTH", "Reach", "find_imports", "resolve"]

MAX_DEPTH = 5  # Claude Code's limit: an import of an import … five levels down
_TRAILING = ".,;:!?)]}>'\""  # sentence punctuation after "see @README.md."
_FENCES = ("```", "~~~")


@dataclass(frozen=True)
class Reach:
    """Where the imports of one file may lead (real paths), and what is never read."""

    roots: tuple[Path, ...]
    secrets: tuple[Path, ...] = ()
    why_not: str = "it is outside the workspace and your home"

    def refusal(self, real: Path) -> str:
        """Why ``real`` may not be imported ("" when it may)."""
        for secret in self.secrets:
            if real == secret or real.is_relative_to(secret):
                return "it is a secret Reasonix keeps"
        if any(real == r or real.is_relative_to(r) for r in self.roots):
            return ""
        return self.why_not


def _strip_code(text: str) -> list[str]:
    """The lines of ``text`` outside fenced blocks, with inline code spans blanked."""
    out: list[str] = []
    fence = ""
    for line in text.splitlines():
        head = line.lstrip()
        if fence:
            if head.startswith(fence):
                fence = ""
            continue
        opener = next((f for f in _FENCES if head.startswith(f)), "")
        if opener:
            fence = opener
            continue
        parts = line.split("`")
        # even parts are outside backticks; an unclosed span keeps the rest as text
        if len(parts) % 2 == 0:
            parts[-2] = parts[-2] + "`" + parts.pop()
        out.append(" ".join(p for i, p in enumerate(parts) if i % 2 == 0))
    return out


def _file_like(token: str) -> bool:
    """True for a token that can only mean a file: a path prefix or a file extension."""
    if token.startswith(("./", "../", "~/", "/")):
        return True
    last = token.rsplit("/", 1)[-1]
    stem, dot, ext = last.rpartition(".")
    return bool(stem and dot and ext.isalnum() and not ext.isdigit())


def find_imports(text: str) -> list[tuple[tuple[str, ...], bool]]:
    """Each ``@path`` import candidate of ``text``, in order: ``(spellings, file_like)``.

    ``spellings`` is the word as written and, when it ends in punctuation, without
    it ("see @README.md." means README.md unless a file ``README.md.`` exists).
    ``file_like`` tells a token that must name a file (a missing one is worth a
    notice) from a word that may name one (``@docs/guide``: read if it exists).
    """
    found: list[tuple[tuple[str, ...], bool]] = []
    seen: set[str] = set()
    for line in _strip_code(text):
        for word in line.split():
            if not word.startswith("@") or len(word) < 2:
                continue
            token = word[1:]
            bare = token.rstrip(_TRAILING)
            if "/" not in bare and "." not in bare and not bare.startswith("~"):
                continue  # @alice, @param: a mention, not a path
            if not bare or bare in seen:
                continue
            seen.add(bare)
            found.append((tuple(dict.fromkeys((token, bare))), _file_like(bare)))
    return found


def resolve(token: str, importer: Path, user_home: Path | None) -> Path:
    """The absolute path ``token`` names, relative to ``importer``'s folder."""
    if token == "~" or token.startswith("~/"):
        base = user_home if user_home is not None else Path(os.path.expanduser("~"))
        return base / token[2:]
    path = Path(token)
    return path if path.is_absolute() else importer.parent / path
