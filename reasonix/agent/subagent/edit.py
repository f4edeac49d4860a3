"""Editing simple profiles from the CLI (SUB-2): refuse instead of flattening.

Only simple, manually invoked project or global profiles are edited. A
skill with ``references/`` or ``scripts/``, frontmatter keys the editor does
not manage, an invocation other than ``manual`` or a custom scope (Claude
Code's folders) is refused with the reason, so a simplified editor never
discards richer content. Built-in profiles take only model/effort overrides,
which live in ``[agent.subagent_models]`` / ``[agent.subagent_efforts]``.
"""

from __future__ import annotations

from collections.abc import Mapping

from .skills import Skill

__all__ = ["EDITABLE_SCOPES", "MANAGED_KEYS", "editable_problem", "render_profile"]

EDITABLE_SCOPES = ("project", "global")
# lower-cased frontmatter key -> how the editor writes it, in this order
MANAGED_KEYS = {
    "name": "name",
    "description": "description",
    "color": "color",
    "invocation": "invocation",
    "runas": "runAs",
    "model": "model",
    "effort": "effort",
    "read-only": "read-only",
    "allowed-tools": "allowed-tools",
}


def editable_problem(skill: Skill) -> str:
    """Why ``skill`` may not be edited by the CLI ("" when it may)."""
    if skill.run_as != "subagent":
        return f"{skill.name} is an inline skill, not a sub-agent profile"
    if skill.scope == "builtin":
        return ""  # model/effort overrides only; the caller checks the flags
    if skill.scope not in EDITABLE_SCOPES:
        return f"{skill.name} lives in a custom scope ({skill.path}); edit that file directly"
    if skill.has_resource_dirs():
        return (
            f"{skill.name} has references/ or scripts/ — a rich skill; edit {skill.path} "
            "directly so nothing is lost"
        )
    if skill.invocation != "manual":
        return (
            f"{skill.name} is not `invocation: manual`; only manual profiles are edited here "
            f"(edit {skill.path} directly)"
        )
    extra = sorted(k for k in skill.meta if k not in MANAGED_KEYS)
    if extra:
        return (
            f"{skill.name} has frontmatter the editor does not manage ({', '.join(extra)}); "
            f"edit {skill.path} directly"
        )
    return ""


def _value(text: str) -> str:
    """A frontmatter value on one line, quoted when YAML could misread it."""
    flat = " ".join(text.split())
    if flat and (flat[0] in "[{&*!|>'\"%@`#" or ": " in flat or flat.endswith(":")):
        return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return flat


def render_profile(meta: Mapping[str, str], body: str) -> str:
    """The SKILL.md text for managed ``meta`` (empty values left out) and ``body``."""
    lines = ["---"]
    for key, spelled in MANAGED_KEYS.items():
        value = meta.get(key, "").strip()
        if not value:
            continue
        if key == "allowed-tools":
            names = [n.strip() for n in value.strip("[]").replace(" ", ",").split(",")]
            lines.append(f"{spelled}: [{', '.join(n for n in names if n)}]")
        else:
            lines.append(f"{spelled}: {_value(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body.strip("\n") + "\n"
