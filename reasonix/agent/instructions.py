"""Project and user instruction files: REASONIX.md, AGENTS.md, CLAUDE.md.

Loaded once per session, in order of increasing precedence: the user-global
files in the Reasonix home, then every directory from the workspace root down
to the cwd. In each directory a ``NAME.local.md`` (personal, usually
git-ignored) comes right after ``NAME.md`` so it wins where they disagree.
The result is one block placed in the first user turn — not in the system
prompt, which must stay identical for every session of every project.
"""

from __future__ import annotations

from pathlib import Path

from reasonix.config.safe_read import INSTRUCTIONS_LIMIT, read_bytes
from reasonix.lazy import dataclass

__all__ = [
    "FILE_CAP_BYTES",
    "INSTRUCTION_NAMES",
    "TOTAL_CAP_BYTES",
    "InstructionFile",
    "instruction_block",
    "load_instructions",
]

INSTRUCTION_NAMES = ("REASONIX.md", "AGENTS.md", "CLAUDE.md")
FILE_CAP_BYTES = 16 * 1024  # one runaway file must not eat the context window
TOTAL_CAP_BYTES = 48 * 1024
_CUT = "\n[... instructions truncated at {n} bytes ...]\n"


@dataclass(frozen=True)
class InstructionFile:
    """One loaded file: where it came from (display form) and its capped text."""

    label: str
    text: str


def _cap(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + _CUT.format(n=limit)


def _dirs_down(root: Path, cwd: Path) -> list[Path]:
    """``root`` and each directory below it on the way to ``cwd`` (just root if cwd is outside)."""
    try:
        rel = cwd.relative_to(root)
    except ValueError:
        return [root]
    out = [root]
    for part in rel.parts:
        out.append(out[-1] / part)
    return out


def _candidates(directory: Path) -> list[Path]:
    out = []
    for name in INSTRUCTION_NAMES:
        out.append(directory / name)
        out.append(directory / name.replace(".md", ".local.md"))
    return out


def load_instructions(
    home: Path, workspace: Path, cwd: Path | None = None
) -> list[InstructionFile]:
    """Read the instruction files that exist, capped per file and in total.

    A FIFO, device or socket under one of the names is refused with a
    :class:`~reasonix.errors.ConfigError` naming it (it would block or never
    end); a huge file is read only as far as its cap.
    """
    workspace = workspace.resolve()
    cwd = (cwd or workspace).resolve()
    seen: set[str] = set()  # AGENTS.md and CLAUDE.md are often the same file or a symlink
    files: list[InstructionFile] = []
    budget = TOTAL_CAP_BYTES
    places = [(home.resolve(), "~"), *((d, "") for d in _dirs_down(workspace, cwd))]
    for directory, tag in places:
        for path in _candidates(directory):
            try:
                head = read_bytes(path, INSTRUCTIONS_LIMIT, truncate=True)
                text = head.decode("utf-8", errors="replace").strip()
            except OSError:
                continue
            if not text or text in seen or budget <= 0:
                continue
            seen.add(text)
            text = _cap(text, min(FILE_CAP_BYTES, budget))
            budget -= len(text.encode("utf-8"))
            label = f"<reasonix home>/{path.name}" if tag else _rel(path, workspace)
            files.append(InstructionFile(label, text))
    return files


def _rel(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def instruction_block(files: list[InstructionFile]) -> str:
    """The text prefixed to the first user message ("" when there are no files)."""
    if not files:
        return ""
    parts = [
        "<instructions>",
        "Instructions from the user's instruction files; later files take precedence.",
    ]
    for f in files:
        parts += [f'<file name="{f.label}">', f.text, "</file>"]
    parts.append("</instructions>")
    return "\n".join(parts)
