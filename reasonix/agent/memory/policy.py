"""Who may write memory without asking (spec §3.6, MEM-9…MEM-12, D23). Pure.

Memory is persistent and later injected into prompts, so a bad write
outlives the session. The rules:

- explicit ``deny`` always wins; sub-agents and surfaces that do not own the
  store fail closed (they have no memory queue);
- a *safe create* — new, project-scoped, of type ``project``/``reference``,
  bounded, not sensitive, not a duplicate — is allowed without a prompt for
  the owning controller, headless included (also headless YOLO);
- interactive Ask (and Plan / acceptEdits) asks for everything else:
  global facts, ``user`` preferences, ``feedback``, updates, duplicates,
  sensitive or oversized content, and every ``forget``;
- interactive Auto treats memory writes as ordinary fallback (allow) but
  keeps an explicit ``ask``; interactive YOLO allows unless denied;
- headless anything else is denied (nobody can answer a prompt).
"""

from __future__ import annotations

import functools
import re

from reasonix.lazy import dataclass
from reasonix.permission.modes import Decision, Mode

__all__ = [
    "MAX_AUTO_FACT_CHARS",
    "WriteSurface",
    "decide_memory_write",
    "find_sensitive",
]

MAX_AUTO_FACT_CHARS = 1200  # "bounded": fits comfortably in the 2400-character recall budget

# Secret shapes, as (name, pattern source); compiled on first use by _sensitive().
_SENSITIVE_SOURCES: tuple[tuple[str, str], ...] = (
    ("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    ("bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
    (
        "API key",
        (
            r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}"
            r"|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,})"
        ),
    ),
    (
        "credential assignment",
        (
            r"(?i)(?<![a-z])(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token"
            r"|auth[_-]?token|client[_-]?secret)\b\s*[:=]\s*['\"]?[^\s'\"]{4,}"
        ),
    ),
)


@functools.cache
def _sensitive() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(src)) for name, src in _SENSITIVE_SOURCES)


def find_sensitive(text: str) -> list[str]:
    """Names of the secret shapes found in ``text`` (empty when none)."""
    return [name for name, pattern in _sensitive() if pattern.search(text)]


@dataclass(frozen=True)
class WriteSurface:
    """Who is asking to write memory, and how they are supervised."""

    interactive: bool  # a human can answer an approval prompt now
    mode: Mode = Mode.ASK
    subagent: bool = False
    owns_store: bool = True  # the parent controller owning this project's store
    explicit: Decision | None = None  # an explicit allow/ask/deny rule naming the tool


def decide_memory_write(
    op: str,
    *,
    scope: str,
    fact_type: str,
    content: str,
    duplicate: bool,
    surface: WriteSurface,
) -> tuple[Decision, str]:
    """Allow, Ask or Deny one memory write (``op``: create|update|forget|restore|recover)."""
    if surface.explicit is Decision.DENY:
        return Decision.DENY, "an explicit deny rule matches"
    if surface.subagent:
        return Decision.DENY, "sub-agents cannot write memory"
    if not surface.owns_store:
        return Decision.DENY, "this surface does not own the memory store"
    concerns = _concerns(op, scope, fact_type, content, duplicate)
    if not surface.interactive:
        if concerns or surface.explicit is Decision.ASK:
            why = ", ".join(concerns) or "an explicit ask rule matches"
            return Decision.DENY, f"needs a human to approve ({why}); none is available"
        return Decision.ALLOW, "bounded create-only project fact"
    if surface.mode is Mode.BYPASS:
        return Decision.ALLOW, "YOLO"
    if surface.explicit is Decision.ASK:
        return Decision.ASK, "an explicit ask rule matches"
    if surface.mode is Mode.AUTO:
        return Decision.ALLOW, "Auto: ordinary fallback"
    if not concerns:
        return Decision.ALLOW, "bounded create-only project fact"
    if surface.mode is Mode.DONT_ASK:
        return Decision.DENY, f"dontAsk: {', '.join(concerns)}"
    return Decision.ASK, ", ".join(concerns)


def _concerns(op: str, scope: str, fact_type: str, content: str, duplicate: bool) -> list[str]:
    out = []
    if op != "create":
        out.append(f"{op} of an existing fact")
    if scope != "project":
        out.append("global scope")
    if fact_type not in ("project", "reference"):
        out.append(f"{fact_type} fact")
    if duplicate:
        out.append("duplicate of an existing fact")
    sensitive = find_sensitive(content)
    if sensitive:
        out.append("looks sensitive (" + ", ".join(sensitive) + ")")
    if len(content) > MAX_AUTO_FACT_CHARS:
        out.append(f"longer than {MAX_AUTO_FACT_CHARS} characters")
    return out
