"""Project and user instruction files: REASONIX.md, AGENTS.md, CLAUDE.md, GEMINI.md.

Loaded once per session, in order of increasing precedence:

1. the user's own Claude Code and Gemini CLI files: ``~/.claude/CLAUDE.md``,
   ``~/.claude/rules/**/*.md``, ``~/.gemini/GEMINI.md``;
2. the user-global files in the Reasonix home;
3. every directory from the workspace root down to the cwd: its ``NAME.md`` files
   (a ``NAME.local.md`` — personal, usually git-ignored — right after its
   ``NAME.md`` so it wins where they disagree), then ``.claude/CLAUDE.md`` and
   ``.claude/rules/**/*.md`` (Claude Code's project memory locations).

A file's ``@path`` imports (:mod:`.instruction_imports`) follow it, each file once.
A workspace's files import from the workspace; from the rest of the user's home
only in a trusted workspace (a cloned repository must not pull ``~/.aws/…`` into
the model's context). A rule with Claude's ``paths:`` frontmatter is kept with its
patterns: the model is told it applies only to work on matching files (Claude
loads such a rule when it touches one; here every rule sits in the stable prefix,
so nothing is added mid-session).

The result is one block placed in the first user turn — not in the system
prompt, which must stay identical for every session of every project.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.safe_read import INSTRUCTIONS_LIMIT, read_bytes
from reasonix.errors import ReasonixError
from reasonix.lazy import dataclass

if TYPE_CHECKING:
    from collections.abc import Callable

    from reasonix.agent.instruction_imports import Reach

__all__ = [
    "FILE_CAP_BYTES",
    "INSTRUCTION_NAMES",
    "TOTAL_CAP_BYTES",
    "InstructionFile",
    "instruction_block",
    "load_instructions",
    "reference_block",
]

INSTRUCTION_NAMES = ("REASONIX.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md")
FILE_CAP_BYTES = 16 * 1024  # one runaway file must not eat the context window
TOTAL_CAP_BYTES = 48 * 1024
MAX_RULES = 100  # per rules folder
_CUT = "\n[... instructions truncated at {n} bytes ...]\n"


@dataclass(frozen=True)
class InstructionFile:
    """One loaded file: where it came from (display form) and its capped text.

    ``imported_by`` names the file whose ``@path`` brought it in; ``paths`` holds a
    rule's ``paths:`` patterns (it applies only to work on matching files).
    """

    label: str
    text: str
    imported_by: str = ""
    paths: str = ""


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


def _rules(folder: Path) -> list[Path]:
    """``folder/**/*.md`` sorted by path (Claude Code reads subfolders of rules/ too)."""
    if not folder.is_dir():
        return []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [Path(dirpath, n) for n in sorted(filenames) if n.endswith(".md")]
    return sorted(found)[:MAX_RULES]


class _Loader:
    """One load: the files so far, the budget, what was read and what was skipped."""

    def __init__(
        self, workspace: Path, user_home: Path | None, reach: Callable[[], dict[str, Reach]]
    ) -> None:
        self.workspace, self.user_home, self._make_reach = workspace, user_home, reach
        self._reach: dict[str, Reach] | None = None
        self.files: list[InstructionFile] = []
        self.notices: list[str] = []
        self.budget = TOTAL_CAP_BYTES
        self.texts: set[str] = set()  # AGENTS.md and CLAUDE.md are often one file or a symlink
        self.reals: set[Path] = set()

    def label(self, path: Path) -> str:
        for base, shown in ((self.workspace, ""), (self.user_home, "~/")):
            if base is not None:
                try:
                    return shown + path.relative_to(base).as_posix()
                except ValueError:
                    pass
        return str(path)

    def read(self, path: Path) -> str | None:
        """The stripped text of ``path``, or None when it does not exist or cannot be read.

        A FIFO, device or socket at a top-level name raises ConfigError (it would
        block or never end), as it always has; an import of one is a notice.
        """
        try:
            head = read_bytes(path, INSTRUCTIONS_LIMIT, truncate=True)
        except OSError:
            return None
        return head.decode("utf-8", errors="replace").strip()

    def add(self, path: Path, label: str, owner: str, *, rule: bool = False) -> None:
        """Read one top-level file (missing ones are normal) and then its imports."""
        text = self.read(path)
        if text is None:
            return
        paths = ""
        if rule:
            paths, text = _rule_paths(text)
        self._keep(path, label, text, owner, [os.path.realpath(path)], 0, paths=paths)

    def _keep(
        self, path: Path, label: str, text: str, owner: str, stack: list[str], depth: int,
        **extra: str,
    ) -> None:  # fmt: skip
        real = Path(os.path.realpath(path))
        if real in self.reals or not text or self.budget <= 0:
            return
        self.reals.add(real)
        if text in self.texts:
            return
        self.texts.add(text)
        capped = _cap(text, min(FILE_CAP_BYTES, self.budget))
        self.budget -= len(capped.encode("utf-8"))
        self.files.append(InstructionFile(label, capped, **extra))
        self._imports(path, label, text, owner, stack, depth)

    def _imports(
        self, path: Path, label: str, text: str, owner: str, stack: list[str], depth: int
    ) -> None:
        if "@" not in text:
            return  # most files import nothing: the import code stays unloaded
        from reasonix.agent.instruction_imports import MAX_DEPTH, find_imports, resolve

        for spellings, file_like in find_imports(text):
            token = spellings[-1]
            target = resolve(token, path, self.user_home)
            for spelling in spellings:  # the word as written first, then without punctuation
                if os.path.exists(resolve(spelling, path, self.user_home)):
                    token, target = spelling, resolve(spelling, path, self.user_home)
                    break
            real = os.path.realpath(target)
            if not os.path.isfile(real):
                if os.path.exists(real):  # a folder, a FIFO, a device: nothing to read
                    self.notices.append(f"{label}: @{token} not imported (not a regular file)")
                elif file_like:
                    self.notices.append(f"{label}: @{token} not imported (no such file)")
                continue
            if real in stack:
                self.notices.append(f"{label}: @{token} not imported (an import cycle)")
                continue
            if Path(real) in self.reals:
                continue  # read already: each file once
            if depth + 1 > MAX_DEPTH:
                self.notices.append(
                    f"{label}: @{token} not imported (imports nest at most {MAX_DEPTH} deep)"
                )
                continue
            if self._reach is None:
                self._reach = self._make_reach()
            why = self._reach[owner].refusal(Path(real))
            if why:
                self.notices.append(f"{label}: @{token} not imported ({why})")
                continue
            try:
                body = self.read(target)
            except ReasonixError as err:
                self.notices.append(f"{label}: @{token} not imported ({err})")
                continue
            if body is None:
                continue
            shown = self.label(Path(real))
            self._keep(target, shown, body, owner, [*stack, real], depth + 1, imported_by=label)


def _rule_paths(text: str) -> tuple[str, str]:
    """``(paths, body)`` of a rule file: Claude's ``paths:`` frontmatter, if any."""
    from reasonix.command.frontmatter import FrontmatterError, parse

    try:
        meta, body = parse(text)
    except FrontmatterError:
        return "", text
    return " ".join(meta.get("paths", "").replace(",", " ").split()), body.strip()


def _reach(workspace: Path, home: Path, user_home: Path | None, trusted: bool) -> dict[str, Reach]:
    from reasonix.agent.instruction_imports import Reach
    from reasonix.config.paths import secret_paths

    secrets = tuple(Path(os.path.realpath(p)) for p in secret_paths())
    mine = [workspace, home]
    if user_home is not None:
        mine.append(Path(os.path.realpath(user_home)))
    user = Reach(tuple(mine), secrets)
    if trusted:
        return {"user": user, "workspace": user}
    why = "it is outside the workspace, which is not trusted"
    return {"user": user, "workspace": Reach((workspace,), secrets, why)}


def load_instructions(
    home: Path,
    workspace: Path,
    cwd: Path | None = None,
    *,
    user_home: Path | None = None,
    trusted: bool = False,
    notices: list[str] | None = None,
) -> list[InstructionFile]:
    """Read the instruction files that exist, capped per file and in total.

    ``home`` is the Reasonix home; ``user_home`` the user's home directory, whose
    ``~/.claude`` and ``~/.gemini`` files are read when it is given. ``trusted``
    lets the workspace's files import from outside it (within the user's home).
    What an import could not bring in is appended to ``notices``.

    A FIFO, device or socket under one of the names is refused with a
    :class:`~reasonix.errors.ConfigError` naming it (it would block or never
    end); a huge file is read only as far as its cap.
    """
    workspace = workspace.resolve()
    cwd = (cwd or workspace).resolve()
    home = home.resolve()
    load = _Loader(workspace, user_home, lambda: _reach(workspace, home, user_home, trusted))
    if user_home is not None:
        claude = user_home / ".claude"
        load.add(claude / "CLAUDE.md", "~/.claude/CLAUDE.md", "user")
        for path in _rules(claude / "rules"):
            load.add(path, load.label(path), "user", rule=True)
        gemini = user_home / ".gemini" / "GEMINI.md"
        load.add(gemini, load.label(gemini), "user")
    for path in _candidates(home):
        load.add(path, f"<reasonix home>/{path.name}", "user")
    for directory in _dirs_down(workspace, cwd):
        dot = directory / ".claude"
        for path in [*_candidates(directory), dot / "CLAUDE.md"]:
            load.add(path, load.label(path), "workspace")
        for path in _rules(dot / "rules"):
            load.add(path, load.label(path), "workspace", rule=True)
    if notices is not None:
        notices.extend(load.notices)
    return load.files


def instruction_block(files: list[InstructionFile]) -> str:
    """The text prefixed to the first user message ("" when there are no files)."""
    if not files:
        return ""
    parts = [
        "<instructions>",
        "Instructions from the user's instruction files; later files take precedence.",
    ]
    if any(f.paths for f in files):
        parts.append(
            'A file with paths="…" applies only when you work on files matching those '
            "glob patterns (relative to the workspace root); ignore it otherwise."
        )
    for f in files:
        attrs = f' imported-by="{f.imported_by}"' if f.imported_by else ""
        attrs += f' paths="{f.paths}"' if f.paths else ""
        parts += [f'<file name="{f.label}"{attrs}>', f.text, "</file>"]
    parts.append("</instructions>")
    return "\n".join(parts)


def reference_block(files: list[InstructionFile]) -> str:
    """The instructions summarised by reference, for a small context window (issue 37).

    Each file by name and size, and how to read it: the whole text would take
    more of the window than the fixed prompt may (boot/smallprompt.py decides).
    """
    if not files:
        return ""
    parts = [
        "<instructions>",
        "The user's instruction files are too large for this model's context window to "
        "include here. Read the ones that matter for the task with read_file before you "
        "start; later files take precedence.",
    ]
    for f in files:
        where = os.path.expanduser(f.label) if f.label.startswith("~/") else f.label
        size = len(f.text.encode("utf-8"))
        attrs = f' paths="{f.paths}"' if f.paths else ""
        parts.append(f'<file name="{where}" bytes="{size}"{attrs}/>')
    parts.append("</instructions>")
    return "\n".join(parts)
