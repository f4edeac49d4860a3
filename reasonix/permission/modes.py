"""Permission decisions and approval postures (PERM-1, PERM-10, D14).

A :class:`Decision` is what one tool call gets; a :class:`Mode` is the posture
that resolves everything no explicit rule decides. Both are plain enums so
they compare, sort and serialise cheaply.
"""

from __future__ import annotations

import enum

from reasonix.errors import ConfigError

__all__ = ["MODE_NAMES", "Decision", "Mode", "parse_mode"]


class Decision(enum.IntEnum):
    """Allow < Ask < Deny: ``max()`` of several decisions is the most restrictive."""

    ALLOW = 0
    ASK = 1
    DENY = 2

    def __str__(self) -> str:
        return self.name.lower()


class Mode(enum.Enum):
    """Approval posture (D14). The value is the canonical config/CLI name."""

    ASK = "ask"
    AUTO = "auto"
    ACCEPT_EDITS = "acceptEdits"
    DONT_ASK = "dontAsk"
    PLAN = "plan"
    BYPASS = "bypassPermissions"

    def __str__(self) -> str:
        return self.value


# Aliases accepted on input. "allow"/"deny" are the legacy `[permissions].mode`
# values (D14): they meant "writers run" / "writers refused" before the posture names.
_ALIASES: dict[str, Mode] = {
    "ask": Mode.ASK,
    "manual": Mode.ASK,
    "default": Mode.ASK,
    "auto": Mode.AUTO,
    "acceptedits": Mode.ACCEPT_EDITS,
    "accept-edits": Mode.ACCEPT_EDITS,
    "dontask": Mode.DONT_ASK,
    "dont-ask": Mode.DONT_ASK,
    "plan": Mode.PLAN,
    "bypasspermissions": Mode.BYPASS,
    "bypass": Mode.BYPASS,
    "yolo": Mode.BYPASS,
    "allow": Mode.AUTO,
    "deny": Mode.DONT_ASK,
}

MODE_NAMES: tuple[str, ...] = (
    "ask",
    "manual",
    "auto",
    "acceptEdits",
    "dontAsk",
    "plan",
    "bypassPermissions",
    "yolo",
)


def parse_mode(value: str | Mode) -> Mode:
    """Map a config/CLI posture name (case-insensitive, aliases included) to a :class:`Mode`."""
    if isinstance(value, Mode):
        return value
    mode = _ALIASES.get(value.strip().lower())
    if mode is None:
        raise ConfigError(
            f"unknown permission mode {value!r}; expected one of {', '.join(MODE_NAMES)}",
            key="permissions.mode",
        )
    return mode
