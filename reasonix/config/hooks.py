"""Hook declarations, in Claude Code's format, from every place they may live.

Read from ``~/.claude/settings.json``, ``<home>/config.toml`` ``[hooks]``,
``.claude/settings.json``, ``.claude/settings.local.json`` and ``./reasonix.toml``
``[hooks]`` — user scope first, then project scope; all of them apply (hooks
add up, like Claude Code's). The shape is the same everywhere::

    {"hooks": {"PreToolUse": [{"matcher": "Bash",
                               "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}}

or in TOML::

    [[hooks.PreToolUse]]
    matcher = "Bash"
    hooks = [{ type = "command", command = "…", timeout = 30 }]

Only ``type = "command"`` hooks run; other types and unknown events are
skipped with a warning. A matcher that is not a valid regular expression is a
warning naming the hook (it then selects only the tool spelled exactly like
it). A malformed file is a ConfigError naming it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config.safe_read import read_bytes
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = ["HOOK_EVENTS", "HookSpec", "hooks_from_data", "hooks_from_json_file"]

HOOK_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
    "SubagentStop", "PreCompact", "Notification", "SessionEnd", "PostToolUseFailure",
    "SubagentStart", "PermissionRequest",
)  # fmt: skip
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
SETTINGS_LIMIT = 1024 * 1024  # a settings file larger than this is not a settings file


@dataclass(frozen=True)
class HookSpec:
    """One hook command: the event, its tool matcher (regex; "" = every tool), its source."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: str

    def matches(self, names: tuple[str, ...]) -> bool:
        """True when the matcher selects any of ``names``.

        Tool events pass our tool name and Claude's alias; SessionStart its
        ``source``, SessionEnd its ``reason``, PreCompact its ``trigger``,
        Notification its ``notification_type`` and SubagentStart/SubagentStop
        the ``agent_type`` — the values Claude Code matches there.
        """
        if self.matcher in ("", "*"):
            return True
        try:
            rx = re.compile(self.matcher)
        except re.error:  # warned about at load time (hooks_from_data)
            return self.matcher in names
        return any(rx.fullmatch(n) for n in names)

    def describe(self) -> str:
        """The hook as a user finds it again: event, matcher, command and source file."""
        command = " ".join(self.command.split())  # one line, whatever the file held
        if len(command) > 80:
            command = command[:77] + "..."
        matcher = self.matcher if self.matcher not in ("", "*") else "*"
        return f"{self.event} hook (matcher {matcher!r}, command {command!r}, in {self.source})"


def _fail(source: str, key: str, message: str) -> ConfigError:
    return ConfigError(message, file=source, key=key)


def hooks_from_data(data: Any, source: str, warnings: list[str]) -> list[HookSpec]:
    """The hooks of one ``hooks`` mapping (from JSON or TOML), validated."""
    if data is None:
        return []
    if not isinstance(data, dict):
        raise _fail(source, "hooks", "expected a table of hook events")
    out: list[HookSpec] = []
    for event, groups in data.items():
        if event not in HOOK_EVENTS:
            warnings.append(f"{source}: unknown hook event {event!r} (ignored)")
            continue
        if not isinstance(groups, list):
            raise _fail(source, f"hooks.{event}", "expected a list of {matcher, hooks} entries")
        for i, group in enumerate(groups):
            key = f"hooks.{event}[{i}]"
            if not isinstance(group, dict):
                raise _fail(source, key, "expected a table with matcher and hooks")
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str):
                raise _fail(source, f"{key}.matcher", "expected a string")
            commands = group.get("hooks", [])
            if not isinstance(commands, list):
                raise _fail(source, f"{key}.hooks", "expected a list of hook commands")
            bad = _bad_regex(matcher)
            for j, hook in enumerate(commands):
                spec = _command(hook, f"{key}.hooks[{j}]", event, matcher, source, warnings)
                if spec is None:
                    continue
                out.append(spec)
                if bad:  # a guard that never fires must not look like one that does
                    warnings.append(
                        f"{spec.describe()}: the matcher is not a valid regular expression"
                        f" ({bad}); it selects only a tool named exactly {matcher!r}"
                    )
    return out


def _bad_regex(matcher: str) -> str:
    """Why ``matcher`` does not compile as a regular expression ("" when it does)."""
    if matcher in ("", "*"):
        return ""
    try:
        re.compile(matcher)
    except re.error as exc:
        return str(exc)
    return ""


def _command(
    hook: Any, key: str, event: str, matcher: str, source: str, warnings: list[str]
) -> HookSpec | None:
    if not isinstance(hook, dict):
        raise _fail(source, key, "expected a table with type and command")
    kind = hook.get("type", "command")
    if kind != "command":
        warnings.append(f"{source}: {key}: hook type {kind!r} is not supported (ignored)")
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _fail(source, f"{key}.command", "expected a non-empty command string")
    timeout = hook.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise _fail(source, f"{key}.timeout", "expected a number of seconds > 0")
    return HookSpec(event, matcher, command, min(float(timeout), MAX_TIMEOUT), source)


def hooks_from_json_file(path: Path, warnings: list[str]) -> list[HookSpec]:
    """The ``hooks`` of a Claude Code settings file; a missing file gives none."""
    try:  # a planted FIFO or device is refused, naming the file (safe_read)
        raw = read_bytes(path, SETTINGS_LIMIT, truncate=True)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if len(raw) > SETTINGS_LIMIT:
        raise ConfigError(
            f"larger than {SETTINGS_LIMIT} bytes; not a settings file", file=str(path)
        )
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc.reason}", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object", file=str(path))
    return hooks_from_data(data.get("hooks"), str(path), warnings)
