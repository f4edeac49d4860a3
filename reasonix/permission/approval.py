"""The approval gate every tool call passes (LOOP-5, PERM-8, PERM-9, D3).

:class:`Gate` wraps a :class:`~reasonix.permission.policy.Policy` with the two
things policy cannot know: a human (``approver``) and a place to save
"always allow" rules (``persist``, which the agent/cli layer points at
``reasonix.config.tomledit.append_to_array(path, "permissions", "allow", rule)``).

``approver=None`` means headless: Ask fails closed with a message the model can
read and the user can act on. Session grants live in memory only (D3).
"""

from __future__ import annotations

import contextlib
import enum
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from reasonix.errors import ConfigError, ReasonixError
from reasonix.lazy import dataclass, field
from reasonix.permission.modes import Decision, Mode
from reasonix.permission.policy import Policy, Verdict
from reasonix.permission.rules import parse_rule

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ESCAPE_ARG",
    "ApprovalChoice",
    "ApprovalRequest",
    "Approver",
    "Gate",
    "GateOutcome",
    "build_gate",
    "headless_message",
    "is_escape_request",
    "parse_allowed_tools",
    "savable_rule",
    "summarize_call",
]


ESCAPE_ARG = "escape_sandbox"  # bash: ask for one unsandboxed retry (permission.escape)


def is_escape_request(tool_name: str, args: dict[str, Any]) -> bool:
    """True for a bash call asking to run outside the sandbox."""
    return tool_name == "bash" and args.get(ESCAPE_ARG) is True


class ApprovalChoice(enum.Enum):
    """What the human answered."""

    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRequest:
    """Everything a frontend shows before the user answers.

    ``suggested_rule`` is exactly what SESSION/ALWAYS will add (shown before saving);
    ``alternative_rule`` is an optional broader bash scope (``Bash(git push:*)``) a
    frontend may offer — it can grant it itself via :meth:`Gate.grant` and answer ONCE.
    ``fresh``: nested/indirect bash that only a human (or an exact literal) may allow.
    ``preview(rule)``: replays a rule against the project's recorded calls and says what
    it would have approved (the rule simulator); frontends show it before saving ALWAYS.
    ``detail``: text to show in full before asking (a plan awaiting approval).
    """

    tool_name: str
    summary: str
    args: dict[str, Any]
    choices: tuple[ApprovalChoice, ...]
    suggested_rule: str
    reason: str
    alternative_rule: str = ""
    fresh: bool = False
    preview: Callable[[str], str] | None = field(default=None, compare=False, repr=False)
    detail: str = ""  # a longer body to show before the question (the plan to approve)


class GateOutcome(NamedTuple):
    """The gate's answer. ``message`` is model-readable text when not allowed.

    A named tuple, not a dataclass: every tool call of every run gets one (issue 39).
    """

    allowed: bool
    message: str
    decision: Decision
    rule: str = ""  # the rule granted by a SESSION/ALWAYS answer


Approver = Callable[[ApprovalRequest], ApprovalChoice]


class Gate:
    """Policy + approver + persistence. One per session; not thread-safe by design of use
    (the loop asks one approval at a time).

    ``session_rules``: the rules granted this session (memory only, D3); ``preview``: the
    rule simulator, for "always" answers; ``turn_rules``: a command's ``allowed-tools``
    while the turn it started runs (:meth:`for_turn`).
    """

    def __init__(
        self,
        policy: Policy,
        approver: Approver | None = None,
        persist: Callable[[str], None] | None = None,
        session_rules: list[str] | None = None,
        preview: Callable[[str], str] | None = None,
        turn_rules: tuple[str, ...] = (),
    ) -> None:
        self.policy = policy
        self.approver = approver
        self.persist = persist
        self.session_rules: list[str] = [] if session_rules is None else session_rules
        self.preview = preview
        self.turn_rules = turn_rules
        # Tool workers may call check() concurrently; prompts and grants are serialised.
        self._lock = threading.Lock()
        # (policy, turn_rules, both together): rebuilt when a grant or a mode change replaced
        # the policy or another turn's rules came
        self._turn_policy: tuple[Policy, tuple[str, ...], Policy] | None = None

    @property
    def headless(self) -> bool:
        """True when nobody can answer (``reasonix run``, headless sub-agents)."""
        return self.approver is None

    def grant(self, rule: str) -> None:
        """Allow ``rule`` for the rest of this session (validated; memory only)."""
        canonical = parse_rule(rule).text
        if canonical not in self.session_rules:
            self.session_rules.append(canonical)
            self.policy = self.policy.with_allow([canonical])

    @contextlib.contextmanager
    def for_turn(self, rules: Iterable[str]) -> Iterator[None]:
        """Allow ``rules`` until the block ends (a command's ``allowed-tools``, one turn).

        They are allow rules like any other: an explicit deny or ask rule, a protected
        file or a secret still wins over them. Grants and mode changes made meanwhile
        stay; only these rules go when the block ends.
        """
        canonical = tuple(parse_rule(r).text for r in rules)
        previous, self.turn_rules = self.turn_rules, canonical
        try:
            yield
        finally:
            self.turn_rules = previous

    def _policy(self) -> Policy:
        """The policy in force for one call: with the turn's rules while a turn has some."""
        rules = self.turn_rules
        if not rules:
            return self.policy
        cached = self._turn_policy
        if cached is None or cached[0] is not self.policy or cached[1] != rules:
            cached = (self.policy, rules, self.policy.with_allow(rules))
            self._turn_policy = cached
        return cached[2]

    def check(
        self,
        tool_name: str,
        read_only: bool,
        args: dict[str, Any],
        *,
        self_gated: bool = False,
        hook_allow: bool = False,
    ) -> GateOutcome:
        """Decide one call, asking the approver when the policy says Ask.

        ``self_gated``: the tool runs its own fresh approval (memory writes, MEM-9…12).
        Only explicit rules apply here, never the writer fallback: a deny rule
        denies; an explicit ask is *not* prompted but returned as allowed with
        decision Ask, for the caller to hand to the tool (one prompt, not two).
        """
        if self_gated:
            verdict = self._policy().evaluate(tool_name, True, args)  # True: skip the fallback
            if verdict.decision is Decision.DENY:
                return GateOutcome(False, f"denied: {verdict.reason}", Decision.DENY)
            return GateOutcome(True, verdict.reason, verdict.decision)
        verdict = self._policy().evaluate(tool_name, read_only, args)
        if is_escape_request(tool_name, args) and verdict.decision is not Decision.DENY:
            # The retry outside the sandbox is asked by the tool itself, always and only as a
            # fresh human question (EscapeGate): no rule or mode decides it here, and the
            # user is not asked twice. A deny rule still refuses it before anything else.
            return GateOutcome(True, "sandbox escape: a fresh human approval follows", Decision.ASK)
        if verdict.decision is Decision.ALLOW:
            return GateOutcome(True, verdict.reason, Decision.ALLOW)
        if verdict.decision is Decision.DENY:
            return GateOutcome(False, f"denied: {verdict.reason}", Decision.DENY)
        if hook_allow and not verdict.fresh and not verdict.explicit:
            # A PreToolUse hook's "allow" stands in for an ordinary prompt, never for a
            # mandatory fresh human approval or an explicit ask rule (PERM-12, PERM-15).
            return GateOutcome(True, "approved by a PreToolUse hook", Decision.ASK)
        if self.approver is None:
            return GateOutcome(False, headless_message(verdict), Decision.ASK)
        with self._lock:
            # Re-evaluate: a grant made while we waited for the lock may cover this call.
            verdict = self._policy().evaluate(tool_name, read_only, args)
            if verdict.decision is not Decision.ASK:
                return GateOutcome(
                    verdict.decision is Decision.ALLOW, verdict.reason, verdict.decision
                )
            return self._ask(tool_name, args, verdict)

    def _ask(self, tool_name: str, args: dict[str, Any], verdict: Verdict) -> GateOutcome:
        assert self.approver is not None
        rule = verdict.suggested_rule
        choices = _choices(verdict)
        alternative = ""
        if tool_name == "bash" and not verdict.fresh and not verdict.explicit:
            from reasonix.permission.suggest import conservative_prefix_rule

            alternative = conservative_prefix_rule(str(args.get("command", "")))
            alternative = alternative if savable_rule(alternative) else ""
        request = ApprovalRequest(
            tool_name=tool_name,
            summary=summarize_call(tool_name, args),
            args=dict(args),
            choices=choices,
            suggested_rule=rule if ApprovalChoice.SESSION in choices else "",
            reason=verdict.reason,
            alternative_rule=alternative if alternative != rule else "",
            fresh=verdict.fresh,
            preview=self.preview if ApprovalChoice.ALWAYS in choices else None,
        )
        choice = self.approver(request)
        if choice not in choices or choice is ApprovalChoice.DENY:
            return GateOutcome(False, "denied: the user declined this call", Decision.ASK)
        if choice is ApprovalChoice.ONCE:
            return GateOutcome(True, "approved once by the user", Decision.ASK)
        self.grant(rule)
        if choice is ApprovalChoice.SESSION or self.persist is None or not savable_rule(rule):
            return GateOutcome(True, f"approved for this session: {rule}", Decision.ASK, rule)
        try:
            self.persist(rule)
        except (OSError, ReasonixError) as exc:
            # The call itself was approved; only remembering failed — say so, don't block.
            note = f"approved for this session; saving {rule!r} failed: {exc}"
            return GateOutcome(True, note, Decision.ASK, rule)
        return GateOutcome(True, f"approved and saved: {rule}", Decision.ASK, rule)


def _choices(verdict: Verdict) -> tuple[ApprovalChoice, ...]:
    """What the approval card may offer for ``verdict`` (PERM-8, PERM-12)."""
    once_or_deny = (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    if verdict.explicit or not verdict.suggested_rule:
        return once_or_deny  # an explicit ask rule outranks every allow: remembering can't help
    if verdict.fresh:
        # Nested/indirect bash and managed-config writes: the card says only a person
        # can allow it, once; a remembered rule would contradict that.
        return once_or_deny
    if not savable_rule(verdict.suggested_rule):
        # A newline, ESC or bidi override in a saved rule hides what it allows (and the
        # text a terminal shows): such a literal may live in this session's memory only.
        return (ApprovalChoice.ONCE, ApprovalChoice.SESSION, ApprovalChoice.DENY)
    return tuple(ApprovalChoice)


# Characters a rule saved to a config file must not hold: C0 and C1 controls (newline,
# tab, ESC, NUL, DEL …), line/paragraph separators, zero-width and bidi controls.
_UNSAVABLE = frozenset(
    [*map(chr, range(0x20)), *map(chr, range(0x7F, 0xA0)), "\u2028", "\u2029", "\ufeff",
     *map(chr, range(0x200B, 0x2010)), *map(chr, range(0x202A, 0x202F)),
     *map(chr, range(0x2066, 0x206A))]
)  # fmt: skip


def savable_rule(rule: str) -> bool:
    """True when ``rule`` may be saved as written: no control or invisible characters."""
    return not any(c in _UNSAVABLE for c in rule)


def build_gate(
    *,
    mode: str | Mode = Mode.ASK,
    allow: Iterable[str] = (),
    ask: Iterable[str] = (),
    deny: Iterable[str] = (),
    allow_dynamic_bash: bool = False,
    workspace: str | os.PathLike[str] | None = None,
    allowed_tools: Iterable[str] = (),
    permission_mode: str | None = None,
    auto: bool = False,
    yolo: bool = False,
    approver: Approver | None = None,
    persist: Callable[[str], None] | None = None,
) -> Gate:
    """A Gate from ``[permissions]`` values plus the run flags.

    Posture: ``--yolo`` > ``--permission-mode`` > ``-y/--auto`` > config ``mode``.
    ``allowed_tools`` are the raw ``--allowed-tools`` values (session allow rules).
    """
    chosen: str | Mode = mode
    if yolo:
        chosen = Mode.BYPASS
    elif permission_mode:
        chosen = permission_mode
    elif auto:
        chosen = Mode.AUTO
    policy = Policy(chosen, allow, ask, deny, allow_dynamic_bash, workspace)
    extra = parse_allowed_tools(allowed_tools)
    if extra:
        policy = policy.with_allow(extra)
    return Gate(policy, approver, persist)


def headless_message(verdict: Verdict) -> str:
    """The fail-closed text for an Ask nobody can answer (PERM-9)."""
    import shlex  # only for this message

    rule = shlex.quote(verdict.suggested_rule) if verdict.suggested_rule else ""
    if verdict.secret:
        return (
            f"denied: {verdict.reason}; no flag or rule pre-approves reading Reasonix's "
            "secrets, so a headless run never does"
        )
    if verdict.explicit:
        return (
            f"denied: needs approval ({verdict.reason}); an explicit ask rule cannot be "
            "pre-approved headless; run interactively or with --yolo"
        )
    if verdict.fresh:
        hint = f"--allowed-tools {rule} or --yolo" if rule else "--yolo"
        return f"denied: {verdict.reason}; rerun with {hint}"
    hint = f"--auto or --allowed-tools {rule}" if rule else "--auto"
    return f"denied: needs approval; rerun with {hint}"


def summarize_call(tool_name: str, args: dict[str, Any]) -> str:
    """One line for the approval prompt: the bash command, the path, the URL …"""
    for key in ("command", "path", "file_path", "notebook_path", "url", "pattern", "query"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"{tool_name}: {value}"
    if isinstance(args.get("source_path"), str):
        return f"{tool_name}: {args['source_path']} -> {args.get('destination_path', '')}"
    return tool_name


def parse_allowed_tools(values: Iterable[str]) -> list[str]:
    """Split ``--allowed-tools`` values into canonical rules (session allow rules).

    Items are separated by commas or whitespace, except inside parentheses
    (``Bash(git diff:*)`` stays whole). A ``Bash=<literal>`` item takes the rest of
    its value verbatim, so give a literal its own ``--allowed-tools`` flag.
    Raises :class:`ConfigError` naming a malformed rule.
    """
    out: list[str] = []
    for value in values:
        for item in _split_rules(value):
            try:
                rule = parse_rule(item).text
            except ConfigError as exc:
                raise ConfigError(exc.detail, key="--allowed-tools") from None
            if rule not in out:
                out.append(rule)
    return out


def _split_rules(value: str) -> list[str]:
    items: list[str] = []
    buf: list[str] = []
    depth = 0
    i = 0
    while i < len(value):
        c = value[i]
        if depth == 0 and not buf and value.startswith(("Bash=", "bash="), i):
            items.append(value[i:].strip())
            return items
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (c == "," or c.isspace()):
            if buf:
                items.append("".join(buf))
                buf = []
        else:
            buf.append(c)
        i += 1
    if buf:
        items.append("".join(buf))
    return items
