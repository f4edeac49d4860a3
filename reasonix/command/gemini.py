"""Gemini CLI's custom commands: ``.gemini/commands/**/*.toml`` (issue 35).

Users leaving Gemini CLI (or Qwen Code, which reads the same files) bring TOML
command files (geminicli.com/docs/cli/custom-commands)::

    description = "Review the staged changes"
    prompt = \"\"\"Review this change for bugs: {{args}}\"\"\"

``prompt`` is required, ``description`` optional (default: the prompt's first
line). ``{{args}}`` becomes the typed argument text; a prompt without it gets
the whole typed command appended after a blank line, as Gemini CLI does.
``@{path}`` (Gemini's file injection) becomes our ``@path`` reference, which the
frontend resolves like typed text. ``!{cmd}`` shell injection is left as text:
it is not run. A file in a subfolder is namespaced with ``:``
(``git/commit.toml`` → ``/git:commit``). The project's folder comes before the
user's (``~/.gemini/commands``); a Markdown command of the same name wins over
both (the registry notes the shadowed one).

:func:`gemini_commands` is a registry :data:`~reasonix.command.registry.CommandSource`,
so nothing of ``custom.py``'s Markdown loading changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.charsets import ASCII_ALNUM
from reasonix.command.api import CommandResult
from reasonix.command.registry import Command, CommandSource
from reasonix.config.safe_read import read_bytes
from reasonix.errors import ReasonixError
from reasonix.lazy import dataclass

__all__ = ["GeminiCommand", "gemini_commands", "gemini_dirs", "load_gemini", "render"]

MAX_FILE_BYTES = 64 * 1024  # a prompt template, as for Markdown commands
MAX_FILES = 1000
MAX_DEPTH = 8
ARGS = "{{args}}"
_NAME_CHARS = frozenset(ASCII_ALNUM + "_.-")
_DESCRIPTION_LEN = 80


@dataclass(frozen=True)
class GeminiCommand:
    """One loaded ``.toml`` command."""

    name: str  # namespaces joined by ":"
    prompt: str
    description: str
    scope: str  # "project" | "user"
    source: str  # the file


def gemini_dirs(workspace: Path, user_home: Path) -> list[tuple[Path, str]]:
    """Gemini CLI's command folders in precedence order (the project's first)."""
    return [
        (workspace / ".gemini" / "commands", "project"),
        (user_home / ".gemini" / "commands", "user"),
    ]


def _part_ok(part: str) -> bool:
    return bool(part) and (part[0].isalnum() or part[0] == "_") and _NAME_CHARS.issuperset(part)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= _DESCRIPTION_LEN else line[: _DESCRIPTION_LEN - 1] + "…"
    return ""


def _parse(path: Path, parts: list[str], scope: str) -> GeminiCommand:
    """One file → a command; ValueError with the reason otherwise."""
    from reasonix.config.tomlparse import loads

    if not all(_part_ok(p) for p in parts):
        raise ValueError(f"{':'.join(parts)!r} is not a command name (letters, digits, _ . -)")
    try:
        data = read_bytes(path, MAX_FILE_BYTES)
        text = data.decode("utf-8")
        table = loads(text, str(path))
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text (byte {err.start})") from None
    except ReasonixError as err:
        raise ValueError(str(err)) from None
    prompt = table.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("no `prompt` string (Gemini CLI requires one)")
    description = table.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError("`description` must be a string")
    return GeminiCommand(
        ":".join(parts), prompt, (description or "").strip() or _first_line(prompt), scope,
        str(path),
    )  # fmt: skip


def _walk(root: Path, notices: list[str]) -> list[tuple[Path, list[str]]]:
    """``(file, name parts)`` of every ``*.toml`` under ``root``, sorted, hidden ones left out."""
    out: list[tuple[Path, list[str]]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).parts
        if len(rel) >= MAX_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or not name.endswith(".toml"):
                continue
            if len(out) >= MAX_FILES:
                notices.append(f"{root}: more than {MAX_FILES} command files; the rest skipped")
                return out
            out.append((Path(dirpath, name), [*rel, name[: -len(".toml")]]))
    return out


def load_gemini(dirs: list[tuple[Path, str]], notices: list[str]) -> list[GeminiCommand]:
    """The commands of ``dirs`` (earlier folders win a name); bad files become notices."""
    found: list[GeminiCommand] = []
    names: set[str] = set()
    for root, scope in dirs:
        if not root.is_dir():
            continue
        for path, parts in _walk(root, notices):
            try:
                cmd = _parse(path, parts, scope)
            except (ValueError, OSError) as err:
                notices.append(f"{path}: {err}; skipped")
                continue
            if cmd.name not in names:
                names.add(cmd.name)
                found.append(cmd)
    return found


def _files(prompt: str) -> str:
    """Gemini's ``@{path}`` → our ``@path`` (a path with blanks stays as written)."""
    out, rest = [], prompt
    while (at := rest.find("@{")) >= 0:
        end = rest.find("}", at)
        if end < 0:
            break
        path = rest[at + 2 : end].strip()
        out.append(rest[:at])
        out.append(
            f"@{path}" if path and not any(c.isspace() for c in path) else rest[at : end + 1]
        )
        rest = rest[end + 1 :]
    out.append(rest)
    return "".join(out)


def render(cmd: GeminiCommand, argument_text: str) -> str:
    """The user turn for ``/name ARGS``, as Gemini CLI builds it."""
    text = argument_text.strip()
    prompt = _files(cmd.prompt)
    if ARGS in prompt:
        return prompt.replace(ARGS, text)
    if text:
        return f"{prompt.rstrip()}\n\n/{cmd.name} {text}"
    return prompt


def _command(cmd: GeminiCommand) -> Command:
    def run(argument_text: str, cmd: GeminiCommand = cmd) -> CommandResult:
        return CommandResult(prompt=render(cmd, argument_text))

    return Command(cmd.name, cmd.description, cmd.scope, run, "", cmd.source)


def gemini_commands(workspace: Path, user_home: Path) -> CommandSource:
    """The registry source of Gemini CLI's command files (re-read on every refresh)."""

    def source(notices: list[str]) -> list[Command]:
        return [_command(c) for c in load_gemini(gemini_dirs(workspace, user_home), notices)]

    return source
