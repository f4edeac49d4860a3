"""Closed vocabularies of the config file, kept as data (D2, D8, D14, D16).

The config layer may not import :mod:`reasonix.provider`, so the provider
kinds live here as strings; the provider registry rejects anything else again
when it builds the client.
"""

from __future__ import annotations

from reasonix.errors import ConfigError

__all__ = [
    "COMPACT_RATIO_DEFAULT",
    "COMPACT_RATIO_MAX",
    "COMPACT_RATIO_MIN",
    "COMPACT_RATIO_PRESETS",
    "DEFAULT_MODEL_REF",
    "LEGACY_AGENT_KEYS",
    "LEGACY_UPDATE_KEYS",
    "MCP_CONCURRENCY",
    "MCP_DEFER_MODES",
    "MCP_TYPES",
    "PERMISSION_MODES",
    "PERMISSION_MODE_ALIASES",
    "PROVIDER_KINDS",
    "SANDBOX_BASH_MODES",
    "SERVE_AUTH_MODES",
    "compact_ratio_error",
    "normalize_permission_mode",
]

PROVIDER_KINDS = ("openai", "anthropic", "responses")

DEFAULT_MODEL_REF = "deepseek"  # the embedded default: works with only DEEPSEEK_API_KEY set

COMPACT_RATIO_DEFAULT = 0.80
COMPACT_RATIO_MIN = 0.65
COMPACT_RATIO_MAX = 0.85
COMPACT_RATIO_PRESETS = (0.70, 0.80, 0.85)

PERMISSION_MODES = ("ask", "auto", "acceptEdits", "dontAsk", "plan", "bypassPermissions")
# Aliases (D14) and the legacy values allow/deny map onto the canonical names.
PERMISSION_MODE_ALIASES = {
    "manual": "ask",
    "yolo": "bypassPermissions",
    "allow": "auto",
    "deny": "dontAsk",
}

SANDBOX_BASH_MODES = ("enforce", "auto", "off")
SERVE_AUTH_MODES = ("none", "token", "password")
MCP_TYPES = ("stdio", "http", "streamable-http", "sse")
MCP_CONCURRENCY = ("", "serial", "parallel")
MCP_DEFER_MODES = ("auto", "always", "never")  # [mcp] defer_tools (issue 37)

# Retired context keys (CTX-15): ignored, and removed from the file on start.
LEGACY_AGENT_KEYS = (
    "soft_compact_ratio",
    "tool_result_snip_ratio",
    "compact_force_ratio",
    "cold_resume_prune",
    "context_editing",
)
# Retired update-channel settings (DIST-6): parsed, ignored, omitted on the next save.
# (table, key); table "" is the top level.
LEGACY_UPDATE_KEYS = (
    ("", "update_channel"),
    ("", "release_channel"),
    ("", "channel"),
    ("update", "channel"),
    ("updates", "channel"),
    ("updater", "channel"),
)


def normalize_permission_mode(
    value: str, *, file: str | None = None, line: int | None = None
) -> str:
    """Map a mode name or alias to its canonical name; unknown names are a ConfigError."""
    if value in PERMISSION_MODES:
        return value
    if value in PERMISSION_MODE_ALIASES:
        return PERMISSION_MODE_ALIASES[value]
    # Be forgiving about case only: "acceptedits" is clearly acceptEdits.
    folded = {m.lower(): m for m in PERMISSION_MODES}
    folded.update({a.lower(): m for a, m in PERMISSION_MODE_ALIASES.items()})
    if value.lower() in folded:
        return folded[value.lower()]
    names = ", ".join([*PERMISSION_MODES, "manual", "yolo"])
    raise ConfigError(
        f"unknown permission mode {value!r}: expected one of {names}",
        file=file,
        line=line,
        key="permissions.mode",
    )


def compact_ratio_error(value: object) -> str | None:
    """Why ``value`` is not a valid compact_ratio (D8), or None when it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return (
            f"compact_ratio must be a number from {COMPACT_RATIO_MIN:.2f} to "
            f"{COMPACT_RATIO_MAX:.2f}, got {value!r}"
        )
    if not COMPACT_RATIO_MIN <= float(value) <= COMPACT_RATIO_MAX:
        return (
            f"compact_ratio = {value} is out of range: expected {COMPACT_RATIO_MIN:.2f} to "
            f"{COMPACT_RATIO_MAX:.2f} inclusive (presets 0.70, 0.80, 0.85); it is never clamped"
        )
    return None
