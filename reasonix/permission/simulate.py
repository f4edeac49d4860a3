"""Replay an "always allow" rule against recorded tool calls, before it is saved.

Pure: calls in, counts out. :func:`simulate` reports how many past calls the
rule would approve (calls the ordinary posture — ``ask`` with no rules —
would not have approved on its own), how many of those were *not* approved
back then (refused, or asked and declined), a few examples, and for Bash rules
a narrower and a wider alternative (exact command, program + subcommand
prefix, program prefix) with their own counts. Nothing is executed.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, field
from reasonix.permission.modes import Decision
from reasonix.permission.policy import Policy
from reasonix.permission.rules import parse_rule

if TYPE_CHECKING:
    from typing import Any

__all__ = ["RecordedCall", "RuleCount", "Simulation", "simulate"]

EXAMPLES = 5
ALTERNATIVES = 5


@dataclass(frozen=True)
class RecordedCall:
    """One tool call read back from a transcript; ``ran`` = it was approved and run then."""

    tool: str
    args: dict[str, Any]
    ran: bool
    session: str = ""
    read_only: bool = False

    def describe(self) -> str:
        """A short text for examples (the command for bash, else the tool and its path)."""
        if self.tool == "bash":
            return str(self.args.get("command", ""))
        subject = self.args.get("path") or self.args.get("url") or self.args.get("pattern") or ""
        return f"{self.tool} {subject}".strip()


@dataclass
class RuleCount:
    """What one rule would have approved."""

    rule: str
    matched: int = 0  # calls the rule approves that the plain posture would not
    newly: int = 0  # of those, calls not approved back then
    examples: list[str] = field(default_factory=list)  # of the newly approved

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"rule": self.rule, "matched": self.matched, "newly_approved": self.newly,
                "examples": self.examples}  # fmt: skip


@dataclass
class Simulation:
    """The rule's counts plus narrower and wider alternatives."""

    rule: RuleCount
    calls: int
    narrower: list[RuleCount] = field(default_factory=list)
    wider: list[RuleCount] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``reasonix permission simulate --json``)."""
        return {"calls_recorded": self.calls, **self.rule.as_dict(),
                "narrower": [r.as_dict() for r in self.narrower],
                "wider": [r.as_dict() for r in self.wider]}  # fmt: skip

    def summary(self) -> str:
        """A few lines for an approval prompt or the CLI."""
        r = self.rule
        lines = [f"{r.rule} would approve {r.matched} of {self.calls} recorded calls; "
                 f"{r.newly} of them were not approved then"]  # fmt: skip
        lines += [f"  e.g. {e}" for e in r.examples[:3]]
        for label, alts in (("narrower", self.narrower), ("wider", self.wider)):
            for alt in alts:
                lines.append(f"  {label}: {alt.rule} — {alt.matched} calls, {alt.newly} new")
        return "\n".join(lines)


def _count(rule: str, calls: Sequence[RecordedCall], workspace: str | None) -> RuleCount:
    with_rule = Policy(mode="ask", allow=[rule], workspace=workspace)
    plain = Policy(mode="ask", workspace=workspace)
    out = RuleCount(parse_rule(rule).text)
    for call in calls:
        if with_rule.evaluate(call.tool, call.read_only, call.args).decision is not Decision.ALLOW:
            continue
        if plain.evaluate(call.tool, call.read_only, call.args).decision is Decision.ALLOW:
            continue  # approved anyway: the rule adds nothing for this call
        out.matched += 1
        if not call.ran:
            out.newly += 1
            if len(out.examples) < EXAMPLES and call.describe() not in out.examples:
                out.examples.append(call.describe())
    return out


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _bash_alternatives(rule: str, calls: Sequence[RecordedCall]) -> tuple[list[str], list[str]]:
    parsed = parse_rule(rule)
    prefix = parsed.specifier.split() if parsed.kind == "prefix" else []
    spec = parsed.specifier if parsed.kind in ("spec", "literal") else ""
    commands = [str(c.args.get("command", "")).strip() for c in calls if c.tool == "bash"]
    if len(prefix) == 1:  # program prefix: narrower by subcommand; nothing wider but all bash
        subs = Counter(
            w[1] for w in map(_words, commands) if len(w) > 1 and w[0] == prefix[0]
            and not w[1].startswith("-")
        )  # fmt: skip
        return [f"Bash({prefix[0]} {s}:*)" for s, _ in subs.most_common(ALTERNATIVES)], []
    if len(prefix) >= 2:  # program + subcommand: narrower exact commands, wider the program
        exact = Counter(c for c in commands if _words(c)[: len(prefix)] == prefix)
        narrower = [f"Bash({c})" for c, _ in exact.most_common(3) if not any(ch in c for ch in
                                                                            "*?()\n")]  # fmt: skip
        return narrower, [f"Bash({prefix[0]}:*)"]
    words = _words(spec)
    if len(words) >= 2:  # an exact command: wider by subcommand and by program
        return [], [f"Bash({words[0]} {words[1]}:*)", f"Bash({words[0]}:*)"]
    if words:
        return [], [f"Bash({words[0]}:*)"]
    return [], []


def simulate(rule: str, calls: Sequence[RecordedCall], workspace: str | None = None) -> Simulation:
    """Replay ``rule`` over ``calls`` (raises ConfigError for a malformed rule)."""
    parse_rule(rule)  # a bad rule is reported before any counting
    sim = Simulation(_count(rule, calls, workspace), len(calls))
    if parse_rule(rule).name == "Bash":
        narrower, wider = _bash_alternatives(rule, calls)
        sim.narrower = [_count(r, calls, workspace) for r in narrower]
        sim.wider = [_count(r, calls, workspace) for r in wider]
    return sim
