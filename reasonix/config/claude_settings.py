"""``permissions`` from Claude Code's settings files, in our rule syntax (issue 35).

Read from ``~/.claude/settings.json`` (the user's own), ``.claude/settings.json``
and ``.claude/settings.local.json`` (the workspace's)::

    {"permissions": {"allow": ["Bash(npm run test:*)"], "ask": [...], "deny": ["Read(./.env)"],
                     "additionalDirectories": ["../shared"], "defaultMode": "acceptEdits"}}

Claude's rule syntax is ours (``Bash(cmd:*)``, ``WebFetch(domain:…)``,
``mcp__server__tool``) except for the path forms of Read/Edit/Write rules, which
follow gitignore: ``//abs`` is an absolute path, ``~/p`` is in the home,
``/p`` is relative to the project root, ``p`` and ``./p`` to the working
directory. :func:`translate_rule` turns them into ours (an absolute path is
``/abs``; a relative one is anchored at the workspace).

The loader merges them with ``reasonix.toml`` at Claude's precedence: the lists
add up and deny > ask > allow decides; for ``defaultMode`` the more specific file
wins (local > project > user; ``./reasonix.toml`` and flags above them). What
needs trust (allow rules, extra directories, a wider mode) is the loader's
business; this module only reads. A problem in one value is a warning naming
the file and the value; the others still apply. A file that is not JSON is a
ConfigError, as for its hooks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.safe_read import read_bytes
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "RULE_LISTS",
    "ClaudePermissions",
    "RuleOrigin",
    "read_claude_permissions",
    "settings_files",
    "string_line",
    "translate_rule",
]

RULE_LISTS = ("allow", "ask", "deny")
_LIMIT = 1024 * 1024  # as for hooks: a larger "settings file" is not one
# Claude's defaultMode names -> ours ("manual" is Claude's alias of "default").
_MODES = {
    "default": "ask",
    "manual": "ask",
    "acceptEdits": "acceptEdits",
    "plan": "plan",
    "auto": "auto",
    "dontAsk": "dontAsk",
    "bypassPermissions": "bypassPermissions",
}
# Claude tools whose specifier is a gitignore-style path.
_PATH_TOOLS = frozenset(
    {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead", "LS"}
)


@dataclass(frozen=True)
class RuleOrigin:
    """One permission rule and where it came from (``reasonix permission list``).

    ``rule`` is what the policy reads; ``written`` the text in the file when it
    differs (a Claude path form). ``skipped`` says why the rule is not in force
    ("" = in force).
    """

    kind: str  # "allow" | "ask" | "deny"
    rule: str
    file: str  # a file path, or "flag"
    line: int | None = None
    written: str = ""
    skipped: str = ""

    def where(self) -> str:
        """``file:line``, or the file alone when the line is not known."""
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass
class ClaudePermissions:
    """The ``permissions`` object of one settings file, checked and translated."""

    file: str
    rules: list[RuleOrigin] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)  # absolute
    mode: str = ""  # our name; "" = not set
    mode_written: str = ""
    status_command: str = ""  # statusLine.command ("" = not set)


def settings_files(workspace: Path, user_home: Path | None = None) -> list[tuple[Path, bool]]:
    """``(path, is_workspace_file)`` for the three settings files, lowest precedence first."""
    home = user_home if user_home is not None else Path(os.path.expanduser("~"))
    claude = workspace / ".claude"
    return [
        (home / ".claude" / "settings.json", False),
        (claude / "settings.json", True),
        (claude / "settings.local.json", True),
    ]


def translate_rule(rule: str, project: Path) -> str:
    """Claude's rule text in our syntax: only the path forms of file rules change.

    ``Read(//etc/x)`` -> ``Read(/etc/x)``; ``Edit(/src/**)`` -> ``Edit(<project>/src/**)``;
    ``Read(~/x)``, ``Read(./x)`` and ``Read(x)`` stay (ours anchors them the same way).
    """
    text = rule.strip()
    name, paren, rest = text.partition("(")
    if not paren or name not in _PATH_TOOLS or not rest.endswith(")"):
        return text
    spec = rest[:-1]
    if spec.startswith("//"):
        spec = "/" + spec.lstrip("/")
    elif spec.startswith("/"):
        spec = project.as_posix().rstrip("/") + spec
    return f"{name}({spec})"


def string_line(text: str, value: str, start: int = 0) -> int | None:
    """The line (1-based) where ``value`` appears as a quoted string at or after ``start``."""
    for quoted in (json.dumps(value, ensure_ascii=False), json.dumps(value), f"'{value}'"):
        pos = text.find(quoted, start)
        if pos >= 0:
            return text.count("\n", 0, pos) + 1
    return None


def _read(path: Path) -> tuple[dict[str, Any], str] | None:
    """The parsed object and text of a settings file; None when it does not exist."""
    try:  # a planted FIFO or device is refused, naming the file (safe_read)
        raw = read_bytes(path, _LIMIT, truncate=True)
    except (FileNotFoundError, IsADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if len(raw) > _LIMIT:
        raise ConfigError(f"larger than {_LIMIT} bytes; not a settings file", file=str(path))
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc.reason}", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    except RecursionError:
        raise ConfigError("invalid JSON: nested too deeply", file=str(path)) from None
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object", file=str(path))
    return data, text


def read_claude_permissions(
    path: Path, project: Path, warnings: list[str]
) -> ClaudePermissions | None:
    """The ``permissions`` (and ``statusLine``) of one Claude Code settings file.

    None: no file, or neither key. ``project`` anchors ``/p`` rule paths and
    relative ``additionalDirectories``. A value of the wrong shape is skipped with
    a warning; the rest applies.
    """
    found = _read(path)
    if found is None:
        return None
    data, text = found
    file = str(path)
    status = _status_command(data.get("statusLine"), file, warnings)
    perms = data.get("permissions")
    if perms is None:
        return ClaudePermissions(file, status_command=status) if status else None
    if not isinstance(perms, dict):
        warnings.append(f"{file}: permissions is not an object (ignored)")
        return ClaudePermissions(file, status_command=status) if status else None
    out = ClaudePermissions(file, status_command=status)
    key_at = {k: text.find(f'"{k}"') for k in (*RULE_LISTS, "additionalDirectories")}
    for kind in RULE_LISTS:
        for written in _strings(perms.get(kind), f"permissions.{kind}", file, warnings):
            rule = translate_rule(written, project)
            line = string_line(text, written, max(key_at[kind], 0))
            shown = written if rule != written.strip() else ""
            out.rules.append(RuleOrigin(kind, rule, file, line, shown))
    dirs = perms.get("additionalDirectories")
    for entry in _strings(dirs, "permissions.additionalDirectories", file, warnings):
        where = Path(os.path.expanduser(entry))
        absolute = os.path.normpath(where if where.is_absolute() else project / where)
        if os.path.isdir(absolute):
            out.directories.append(absolute)
        else:
            warnings.append(
                f"{file}: permissions.additionalDirectories: {entry!r} is not a directory (ignored)"
            )
    mode = perms.get("defaultMode")
    if mode is not None:
        ours = _MODES.get(mode) if isinstance(mode, str) else None
        if ours is None:
            warnings.append(
                f"{file}: permissions.defaultMode {mode!r} is not one of "
                f"{', '.join(_MODES)} (ignored)"
            )
        else:
            out.mode, out.mode_written = ours, mode
    return out


def _strings(value: Any, key: str, file: str, warnings: list[str]) -> list[str]:
    """The strings of a list value; anything else is skipped with a warning."""
    if value is None:
        return []
    if not isinstance(value, list):
        warnings.append(f"{file}: {key} is not a list (ignored)")
        return []
    good = [v for v in value if isinstance(v, str) and v.strip()]
    for bad in (v for v in value if not (isinstance(v, str) and v.strip())):
        warnings.append(f"{file}: {key}: {bad!r} is not a non-empty string (ignored)")
    return good


def _status_command(value: Any, file: str, warnings: list[str]) -> str:
    """``statusLine.command`` when it is a ``{"type": "command", "command": …}`` object."""
    if value is None:
        return ""
    command = None
    if isinstance(value, dict) and value.get("type", "command") == "command":
        command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f'{file}: statusLine is not {{"type": "command", "command": …}} (ignored)')
        return ""
    return command.strip()
