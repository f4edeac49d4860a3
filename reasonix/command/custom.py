"""Custom slash commands from Markdown files (CMD-2…5, D24).

A command file is a prompt template, optionally opened by a ``---`` fenced
frontmatter of ``key: value`` lines (read without a YAML library)::

    ---
    description: Review a file for bugs
    argument-hint: <file> [focus]
    ---
    Review $1 for bugs. Focus on: $ARGUMENTS

Recognised keys: ``description`` (default: the body's first line),
``argument-hint``, ``allowed-tools`` (permission rules allowed for the turn the
command starts: :class:`~reasonix.command.api.CommandTurn`) and
``disable-model-invocation`` (recorded; the model has no tool that runs
commands). ``model`` is read but not applied (switching the model for one turn
would break the prompt cache — use ``/model``); other keys are accepted and
ignored, so Claude Code command files load unchanged. ``!`cmd``` and
```` ```! ```` shell lines in the body run before the turn (see
``reasonix/boot/command_turn.py``). The body is expanded in one left-to-right
pass: ``$$`` → ``$``, ``$ARGUMENTS`` → the argument text, ``$1``…``$N`` →
the N-th argument (shell quoting rules split them) or nothing. A body that
uses no placeholder gets typed arguments appended as ``ARGUMENTS: …``.

:func:`load` is a pure function over directories: ``review.md`` becomes
``/review``, ``git/commit.md`` becomes ``/git:commit`` (the registry also gives it
its short name ``/commit``, as Claude Code does); the first directory
that defines a name wins. A file that cannot be a command — unreadable,
not a regular file, larger than :data:`MAX_FILE_BYTES`, binary, not UTF-8,
broken frontmatter, an empty body, a name that is not a command name — is
skipped with a notice and never stops the application.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from reasonix.command.api import CommandResult, CommandTurn
from reasonix.command.args import split_args
from reasonix.command.frontmatter import FrontmatterError, parse
from reasonix.command.registry import Command
from reasonix.lazy import Pattern, dataclass, field

__all__ = [
    "MAX_FILE_BYTES",
    "CommandDir",
    "CustomCommand",
    "FrontmatterError",
    "Loaded",
    "as_command",
    "expand",
    "load",
    "parse",
    "tool_rules",
]

MAX_FILE_BYTES = 64 * 1024  # a prompt template; anything bigger is a mistake
MAX_FILES = 1000  # per directory tree
MAX_DEPTH = 8  # namespace levels
_DESCRIPTION_LEN = 80
_PART = Pattern(r"^[\w][\w.-]*$")  # one name component: letters, digits, _ . -
_PLACEHOLDER = Pattern(r"\$(\$|ARGUMENTS|[1-9][0-9]*)")


@dataclass(frozen=True)
class CommandDir:
    """A directory of command files and the scope its commands belong to."""

    path: Path
    scope: str = "project"  # "project" | "user"


@dataclass(frozen=True)
class CustomCommand:
    """One loaded command file."""

    name: str  # without the slash, namespaces joined by ":"
    body: str
    description: str = ""
    argument_hint: str = ""
    scope: str = "project"
    source: str = ""  # the file it came from
    model: str = ""  # frontmatter ``model``: recorded, not applied
    allowed_tools: tuple[str, ...] = ()  # canonical allow rules for the command's turn
    model_invocable: bool = True  # ``disable-model-invocation: true`` makes it False


@dataclass
class Loaded:
    """What :func:`load` found: the commands (precedence applied) and the skipped files."""

    commands: list[CustomCommand] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


# -- parsing -------------------------------------------------------------------------


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text if len(text) <= _DESCRIPTION_LEN else text[: _DESCRIPTION_LEN - 1] + "…"
    return ""


def expand(body: str, argument_text: str) -> str:
    """The prompt for ``/name ARGUMENT_TEXT`` (D24: one left-to-right pass).

    ``$$`` → ``$``; ``$ARGUMENTS`` → the whole argument text; ``$N`` → the
    N-th word (shell quoting) or "". When the body has no ``$ARGUMENTS`` or
    ``$N`` and arguments were typed, they are appended as ``ARGUMENTS: …``.
    """
    argument_text = argument_text.strip()
    words = split_args(argument_text)
    used = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal used
        token = match.group(1)
        if token == "$":
            return "$"
        used = True
        if token == "ARGUMENTS":
            return argument_text
        index = int(token)
        return words[index - 1] if index <= len(words) else ""

    out = _PLACEHOLDER.sub(substitute, body)
    if argument_text and not used:
        out = f"{out.rstrip()}\n\nARGUMENTS: {argument_text}"
    return out


def _items(value: str) -> list[str]:
    """The items of an ``allowed-tools`` value: a ``[…]`` flow list, a YAML list folded to
    commas, or words; commas and spaces split except inside parentheses and quotes."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    items: list[str] = []
    buf: list[str] = []
    depth, quote = 0, ""
    for c in value:
        if quote:
            if c == quote:
                quote = ""
            else:
                buf.append(c)
            continue
        if c in "\"'" and depth == 0:
            quote = c
            continue
        if c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        if depth == 0 and (c == "," or c.isspace()):
            if buf:
                items.append("".join(buf))
                buf = []
        else:
            buf.append(c)
    if buf:
        items.append("".join(buf))
    return items


def tool_rules(value: str) -> tuple[list[str], list[str]]:
    """``(canonical rules, items that are no rule)`` of an ``allowed-tools`` value."""
    from reasonix.errors import ConfigError
    from reasonix.permission.rules import parse_rule

    rules: list[str] = []
    bad: list[str] = []
    for item in _items(value):
        try:
            rule = parse_rule(item).text
        except ConfigError:
            bad.append(item)
            continue
        if rule not in rules:
            rules.append(rule)
    return rules, bad


# -- loading ---------------------------------------------------------------------------


def _read(path: Path) -> str:
    """The text of one command file; ValueError with the reason when it cannot be one."""
    try:
        info = os.stat(path)  # follows a symlink: its target must be a regular file
    except OSError as err:
        raise ValueError(f"cannot read it ({err.strerror or err})") from err
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise ValueError(f"too large ({info.st_size:,} bytes; at most {MAX_FILE_BYTES:,})")
    try:
        # O_NONBLOCK: if the file was swapped for a FIFO since the stat, open does not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError("not a regular file")
            data = os.read(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as err:
        raise ValueError(f"cannot read it ({err.strerror or err})") from err
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"too large (more than {MAX_FILE_BYTES:,} bytes)")
    if b"\x00" in data:
        raise ValueError("a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text (byte {err.start})") from err


def _command(path: Path, rel: list[str], scope: str, notices: list[str]) -> CustomCommand:
    parts = [*rel[:-1], rel[-1][: -len(".md")]]
    if not all(_PART.match(p) for p in parts):
        raise ValueError(f"{':'.join(parts)!r} is not a command name (letters, digits, _ . -)")
    try:
        meta, body = parse(_read(path))
    except FrontmatterError as err:
        raise ValueError(f"bad frontmatter: {err}") from err
    if not body.strip():
        raise ValueError("the command has no body")
    rules, bad = tool_rules(meta.get("allowed-tools", ""))
    if bad:  # the command still loads; only these items allow nothing
        notices.append(f"{path}: allowed-tools: not a permission rule, ignored: {', '.join(bad)}")
    return CustomCommand(
        name=":".join(parts),
        body=body,
        description=meta.get("description") or _first_line(body),
        argument_hint=meta.get("argument-hint", ""),
        scope=scope,
        source=str(path),
        model=meta.get("model", ""),
        allowed_tools=tuple(rules),
        model_invocable=meta.get("disable-model-invocation", "").strip().lower() != "true",
    )


def _walk(root: Path, notices: list[str]) -> list[tuple[Path, list[str]]]:
    """``(file, relative parts)`` of every ``*.md`` below ``root``, depth-first, sorted."""
    out: list[tuple[Path, list[str]]] = []
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Path, list[str]]] = [(root, [])]
    while stack:
        directory, rel = stack.pop()
        try:
            info = os.stat(directory)
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            notices.append(f"{directory}: cannot list it ({err.strerror or err}); skipped")
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue  # a symlink loop
        seen.add((info.st_dev, info.st_ino))
        subdirs: list[tuple[Path, list[str]]] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue  # hidden files and directories are not commands
            try:
                is_dir = entry.is_dir()  # follows symlinks; loops are caught above
            except OSError:
                is_dir = False
            if is_dir:
                if len(rel) + 1 < MAX_DEPTH:
                    subdirs.append((Path(entry.path), [*rel, entry.name]))
            elif entry.name.endswith(".md"):
                if len(out) >= MAX_FILES:
                    notices.append(f"{root}: more than {MAX_FILES} command files; the rest skipped")
                    return out
                out.append((Path(entry.path), [*rel, entry.name]))
        stack.extend(reversed(subdirs))
    return out


def load(*dirs: CommandDir | Path) -> Loaded:
    """The commands of ``dirs`` (earlier directories win a name) and the skip notices."""
    loaded = Loaded()
    names: set[str] = set()
    for d in dirs:
        where = d if isinstance(d, CommandDir) else CommandDir(Path(d))
        if not where.path.exists():
            continue
        if not where.path.is_dir():
            loaded.notices.append(f"{where.path}: not a directory; no commands read from it")
            continue
        for path, rel in _walk(where.path, loaded.notices):
            try:
                cmd = _command(path, rel, where.scope, loaded.notices)
            except ValueError as err:
                loaded.notices.append(f"{path}: {err}; skipped")
                continue
            if cmd.name not in names:
                names.add(cmd.name)
                loaded.commands.append(cmd)
    return loaded


def as_command(cmd: CustomCommand) -> Command:
    """The registry entry of a loaded file: running it sends the expanded body."""

    def run(argument_text: str) -> CommandResult:
        prompt = expand(cmd.body, argument_text)
        turn = CommandTurn(
            command=f"/{cmd.name}", prompt=prompt, scope=cmd.scope, source=cmd.source,
            allow=cmd.allowed_tools, model=cmd.model,
        )  # fmt: skip
        return CommandResult(prompt=prompt, turn=turn)

    return Command(
        name=cmd.name,
        description=cmd.description,
        kind=cmd.scope,
        run=run,
        argument_hint=cmd.argument_hint,
        source=cmd.source,
    )
