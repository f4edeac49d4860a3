"""Shell lines and allow rules in command files, and what of them needs trust (issue 35).

Claude Code's command files may run shell commands before their turn — an
inline ``!`git status``` (the ``!`` at the start of a line or after
whitespace) or a fenced block opened by ```` ```! ```` — and pre-approve tools
for that turn with ``allowed-tools`` in their frontmatter (the shape of
Anthropic's ``commit-commands`` plugin). Both run code or widen reach, so a
*workspace's* command files (``.reasonix/commands``, ``.claude/commands``) get
them only in a trusted workspace (DESIGN §5.1): :func:`command_items` lists
them as :class:`~reasonix.config.trust.TrustItem` s for ``reasonix trust
--show``, the trust question and the run's warnings. The user's own command
directories are always in force and are not scanned here.

:func:`find_shell_lines` is the one parser of shell lines; the command layer
runs what it finds (``reasonix/boot/command_turn.py``). It lives in ``config``
because the trust scan needs it and ``config`` may import nothing above it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reasonix.config.trust import TrustItem
from reasonix.lazy import Pattern, dataclass

__all__ = ["COMMAND_DIRS", "ShellLine", "command_items", "find_shell_lines"]

# The workspace's command directories (reasonix/command/registry.py command_dirs).
COMMAND_DIRS = (".reasonix/commands", ".claude/commands")
_MAX_FILES, _MAX_DEPTH, _MAX_BYTES = 1000, 8, 64 * 1024  # as the command loader bounds them
_SHOWN = 3  # commands named in one trust item; the rest counted
_FLAGS = 8 | 16  # re.MULTILINE | re.DOTALL, without importing re for the constants
# A fenced ```! block (its lines are one script), else an inline !`cmd` whose ! starts
# a line or follows whitespace: Claude Code reads `KEY=!`cmd`` as literal text.
_SHELL = Pattern(
    r"^[ \t]*```![ \t]*\r?\n(?P<block>.*?)^[ \t]*```[ \t]*$"
    r"|(?:(?<=\s)|^)!`(?P<inline>[^`\n]+)`",
    _FLAGS,
    needs=("!`", "```!"),
)


@dataclass(frozen=True)
class ShellLine:
    """One shell line of a command body: where it stands and the command it runs."""

    start: int
    end: int
    command: str
    fenced: bool = False


def find_shell_lines(text: str) -> list[ShellLine]:
    """The shell lines of ``text`` in order (inline and fenced); empty ones are skipped."""
    if "!`" not in text and "```!" not in text:
        return []
    out = []
    for m in _SHELL.finditer(text):
        fenced = m.group("block") is not None
        command = (m.group("block") if fenced else m.group("inline")).strip()
        if command:
            out.append(ShellLine(m.start(), m.end(), command, fenced))
    return out


def _frontmatter_value(text: str, key: str) -> str:
    """The raw value of ``key`` in a ``---`` frontmatter (continuation lines joined), or ""."""
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != "---":
        return ""
    value: list[str] | None = None
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            break
        if value is not None and line[:1] in (" ", "\t", "-"):
            value.append(line.strip().lstrip("-").strip())
            continue
        if value is not None:
            break
        head, colon, rest = line.partition(":")
        if colon and head.strip().lower() == key:
            value = [rest.strip()]
    return " ".join(v for v in value or [] if v)


def _body(text: str) -> str:
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    return "".join(lines[end + 1 :]) if end is not None else ""


def _read(path: Path) -> str:
    """The text of a regular file of at most 64 KiB, else "" (the loader names the problem)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
                return ""
            data = os.read(fd, _MAX_BYTES + 1)
        finally:
            os.close(fd)
        return data.decode("utf-8") if len(data) <= _MAX_BYTES else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _files(root: Path) -> list[Path]:
    """``*.md`` below ``root`` (hidden entries skipped, symlink loops and size bounded)."""
    out: list[Path] = []
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack and len(out) < _MAX_FILES:
        directory, depth = stack.pop()
        try:
            info = os.stat(directory)
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir and depth + 1 < _MAX_DEPTH:
                stack.append((Path(entry.path), depth + 1))
            elif not is_dir and entry.name.endswith(".md"):
                out.append(Path(entry.path))
    return out[:_MAX_FILES]


def _listed(items: list[str]) -> str:
    shown = ", ".join(f"`{i}`" for i in items[:_SHOWN])
    more = len(items) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def command_items(workspace: Path) -> list[TrustItem]:
    """One item per workspace command file that runs shell lines or pre-approves tools."""
    out: list[TrustItem] = []
    for rel in COMMAND_DIRS:
        root = workspace / rel
        if not root.is_dir():
            continue
        for path in _files(root):
            text = _read(path)
            if not text:
                continue
            shell = [" ".join(s.command.split()) for s in find_shell_lines(_body(text))]
            allowed = _frontmatter_value(text, "allowed-tools")
            what = []
            if shell:
                what.append(f"runs {_listed(shell)} before its turn")
            if allowed:
                what.append(f"pre-approves {allowed} for its turn")
            if what:
                name = path.name[: -len(".md")]
                out.append(TrustItem("command", f"command /{name} " + "; ".join(what), str(path)))
    return out
