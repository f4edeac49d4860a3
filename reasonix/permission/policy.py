"""The pure permission policy: rules × mode → decision (PERM-1…13, D13, D14).

``Policy.decide`` is the contract (DESIGN §3); ``Policy.evaluate`` returns the
same decision with the reason and the hints a gate needs (whether a human must
approve afresh, which rule "always allow" would save). The only I/O is reading
symlinks (``realpath``) so a path rule judges where a file call really lands;
``~`` is expanded once when the policy is built.

Order for one call: explicit deny → explicit ask → allow → fallback. Bash is
decided per segment (D13) and the whole command gets the most restrictive
segment result.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from reasonix.errors import ConfigError
from reasonix.lazy import Pattern
from reasonix.permission.modes import Decision, Mode, parse_mode
from reasonix.permission.rules import (
    EDIT_TOOLS,
    Rule,
    absolute_path,
    domain_match,
    glob_match,
    parse_rule,
    path_match,
    subjects,
)

if TYPE_CHECKING:  # the bash classifier loads with the first bash call it judges
    from typing import Any

    from reasonix.permission.bash import BashAnalysis, Segment

__all__ = [
    "PROTECTED_IN_WORKSPACE",
    "Policy",
    "Verdict",
    "parse_rules",
]

# Workspace files whose edit could widen the agent's own permissions or run code
# on the next git command; other protected files (the user config) are passed in.
PROTECTED_IN_WORKSPACE = (
    "reasonix.toml", ".mcp.json", ".git/hooks", ".git/config",
    ".claude/settings.json", ".claude/settings.local.json",  # rules, modes, hooks (issue 35)
)  # fmt: skip


class Verdict(NamedTuple):
    """A decision with its reason (a named tuple: every tool call of every run gets one).

    ``fresh``: only a human answering now (or an exact ``Bash=<literal>``) may allow it —
    nested/indirect bash (PERM-12). ``explicit``: an explicit ``ask`` rule matched, so a
    session/always grant would not help (ask beats allow). ``suggested_rule``: what an
    "allow for the session / always" answer would add. ``secret``: the Reasonix secret
    file a bash command names (no mode, rule or hook passes it; only a human, once).
    """

    decision: Decision
    reason: str
    fresh: bool = False
    explicit: bool = False
    suggested_rule: str = ""
    secret: str = ""

    def __str__(self) -> str:
        return f"{self.decision}: {self.reason}"


def parse_rules(rules: Iterable[str], key: str = "") -> tuple[Rule, ...]:
    """Parse a list of rule strings; the ConfigError names the list (``key``) and the rule."""
    out = []
    for text in rules:
        try:
            out.append(parse_rule(text))
        except ConfigError as exc:
            if not key or exc.key:
                raise
            raise ConfigError(exc.detail, file=exc.file, line=exc.line, key=key) from None
    return tuple(out)


class Policy:
    """Decides one tool call from rules and a mode. Immutable; build a new one to change it.

    ``workspace`` anchors relative path specifiers and arguments (``None``: compared as
    written). ``home`` expands ``~`` in path rules (default: the user's home).
    ``secrets``: Reasonix's own secret files; a bash command that names one asks a
    human in every mode (dontAsk: denied), whatever the allow rules say.
    """

    def __init__(
        self,
        mode: Mode | str = Mode.ASK,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        allow_dynamic_bash: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        home: str | None = None,
        protected: Iterable[str | os.PathLike[str]] = (),
        secrets: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        self.mode = parse_mode(mode)
        self.allow = parse_rules(allow, "permissions.allow")
        self.ask = parse_rules(ask, "permissions.ask")
        self.deny = parse_rules(deny, "permissions.deny")
        self.allow_dynamic_bash = allow_dynamic_bash
        self.workspace = os.fspath(workspace) if workspace is not None else None
        self.home = home if home is not None else os.path.expanduser("~")
        # Files that steer the agent itself (its config, git hooks): a file edit
        # there always needs a human, whatever the mode (bypassPermissions aside).
        ws = self.workspace
        defaults = [] if ws is None else [
            os.path.join(ws, name) for name in PROTECTED_IN_WORKSPACE
        ]  # fmt: skip
        self.protected = tuple(os.path.normpath(os.fspath(p)) for p in [*defaults, *protected])
        self.secrets = tuple(os.fspath(p) for p in secrets)
        # Plan mode as a collaboration state, independent of the posture (PERM-15):
        # Mode.PLAN is "ask + planning"; `planning` adds it to any other posture.
        self.planning = False
        # The short auto-execution window after an approved plan: what to restore.
        self._window: tuple[Mode, bool] | None = None

    def with_allow(self, rules: Iterable[str]) -> Policy:
        """A copy with extra allow rules (session grants, ``--allowed-tools``)."""
        new = self._copy()
        new.allow = self.allow + parse_rules(rules, "allowed-tools")
        return new

    def with_deny(self, rules: Iterable[str]) -> Policy:
        """A copy with extra deny rules (an editor's "always reject" answer)."""
        new = self._copy()
        new.deny = self.deny + parse_rules(rules, "permissions.deny")
        return new

    def with_mode(self, mode: Mode | str) -> Policy:
        """A copy in another posture."""
        new = self._copy()
        new.mode = parse_mode(mode)
        return new

    def with_planning(self, on: bool) -> Policy:
        """A copy with Plan mode on or off; the posture stays as it is (PERM-15)."""
        new = self._copy()
        new.planning = on
        if not on and new.mode is Mode.PLAN:
            new.mode = Mode.ASK
        return new

    @property
    def planning_active(self) -> bool:
        """True while planning: the PLAN posture or the planning flag."""
        return self.planning or self.mode is Mode.PLAN

    def plan_window(self) -> Policy:
        """Leave Plan mode into the short auto-execution window of an approved plan.

        Ordinary writers run without asking (as in auto), but nested/indirect
        bash still needs a fresh human answer (``allow_dynamic_bash`` does not
        apply), protected files still ask, and no later plan is approved by it
        (PERM-15). :meth:`end_window` restores the posture.
        """
        new = self.with_planning(False)
        new._window = (new.mode, self.allow_dynamic_bash)
        if new.mode in (Mode.ASK, Mode.ACCEPT_EDITS):
            new.mode = Mode.AUTO
        new.allow_dynamic_bash = False
        return new

    @property
    def in_window(self) -> bool:
        """True inside the auto-execution window of an approved plan."""
        return self._window is not None

    def end_window(self) -> Policy:
        """Close the auto-execution window (a no-op copy when none is open)."""
        new = self._copy()
        if self._window is not None:
            new.mode, new.allow_dynamic_bash = self._window
            new._window = None
        return new

    def _copy(self) -> Policy:
        new = Policy.__new__(Policy)
        new.__dict__.update(self.__dict__)
        return new

    # ----------------------------------------------------------------- API
    def decide(self, tool_name: str, read_only: bool, args: dict[str, Any]) -> Decision:
        """Allow, Ask or Deny for one call (pure)."""
        return self.evaluate(tool_name, read_only, args).decision

    def evaluate(self, tool_name: str, read_only: bool, args: dict[str, Any]) -> Verdict:
        """The decision with its reason and approval hints."""
        args = args if isinstance(args, dict) else {}
        if tool_name == "bash":
            return self._bash(str(args.get("command", "")), read_only, args)
        from reasonix.permission.suggest import suggest_rule  # the first call judged loads it

        suggestion = suggest_rule(tool_name, args, self.workspace)
        hit = self._first(self.deny, tool_name, args, any_subject=True)
        if hit:
            return Verdict(Decision.DENY, f"matches deny rule {hit.text!r}")
        if self.planning_active and not read_only and _mcp_target(tool_name):
            # PERM-14: a single-model Plan keeps MCP writers blocked for the whole
            # planning phase (directly or through the use_capability proxy);
            # built-ins and bash still go through Ask/Auto/YOLO below.
            return Verdict(Decision.DENY, "plan mode blocks MCP writer tools while planning")
        hit = self._first(self.ask, tool_name, args, any_subject=True)
        if hit:
            return self._explicit_ask(hit.text, read_only, suggestion)
        guarded = self._protected_target(tool_name, args)
        if guarded:  # spec §3.7: not even YOLO passes a managed-config write
            why = f"{tool_name}: {guarded} steers Reasonix or git; editing it needs approval"
            return Verdict(Decision.ASK, why, fresh=True)
        hit = self._first(self.allow, tool_name, args, any_subject=False)
        if hit:
            return Verdict(Decision.ALLOW, f"matches allow rule {hit.text!r}")
        if read_only:
            return Verdict(Decision.ALLOW, "read-only tool")
        d, why = self._writer_fallback(tool_name)
        return Verdict(d, f"{tool_name}: {why}", suggested_rule=suggestion)

    def _protected_target(self, tool: str, args: dict[str, Any]) -> str:
        """The protected path a file edit would touch, or "" (lexical and resolved)."""
        if tool not in EDIT_TOOLS or not self.protected:
            return ""
        for raw in subjects("path", args):
            path = os.path.expanduser(raw)
            if self.workspace is not None and not os.path.isabs(path):
                path = os.path.join(self.workspace, path)
            # the resolved form catches a symlink planted to reach a protected file
            try:
                resolved = os.path.realpath(path)
            except (OSError, ValueError):  # a NUL byte: no such file can exist anyway
                resolved = os.path.normpath(path)
            for candidate in {os.path.normpath(path), resolved}:
                for guarded in self.protected:
                    if candidate == guarded or candidate.startswith(guarded + os.sep):
                        return raw
        return ""

    # ---------------------------------------------------------- rule match
    def _first(
        self, rules: Sequence[Rule], tool: str, args: dict[str, Any], any_subject: bool
    ) -> Rule | None:
        for rule in rules:
            if self._matches(rule, tool, args, any_subject):
                return rule
        return None

    def _matches(self, rule: Rule, tool: str, args: dict[str, Any], any_subject: bool) -> bool:
        if not rule.covers_tool(tool):
            return False
        if rule.kind in ("bare", "server"):
            return True
        subs = subjects(rule.subject, args)
        if not subs:
            return False  # PERM-4: a rule whose subject the args do not expose is bare-only
        if rule.subject == "path":
            # A symlink (docs/link -> ../src) must not stretch an allow, nor dodge a deny:
            # the written path and its resolved form both count.
            subs = [form for sub in subs for form in dict.fromkeys((sub, self._resolved(sub)))]
        hits = [self._subject_match(rule, s) for s in subs]
        # move_file: an allow needs both paths inside the rule, a deny/ask either of them.
        return any(hits) if any_subject else all(hits)

    def _resolved(self, path: str) -> str:
        """``path`` with symlinks resolved, re-anchored at the workspace/home as configured."""
        lexical = absolute_path(path, self.workspace, self.home)
        if not lexical.startswith("/"):
            return path  # no workspace to anchor a relative path: compare as written
        try:
            real = os.path.realpath(lexical)
        except (OSError, ValueError):
            return path
        for base in (self.workspace, self.home):
            if not base:
                continue
            try:
                real_base = os.path.realpath(base)
            except (OSError, ValueError):
                continue
            if real == real_base or real.startswith(real_base.rstrip("/") + "/"):
                return base.rstrip("/") + real[len(real_base.rstrip("/")) :]
        return real

    def _subject_match(self, rule: Rule, subject: str) -> bool:
        spec = rule.specifier
        if rule.subject == "path":
            return path_match(spec, subject, self.workspace, self.home)
        if rule.subject == "url" and spec.startswith("domain:"):
            return domain_match(spec, subject)
        return glob_match(spec, subject)

    # ------------------------------------------------------------ fallback
    def _writer_fallback(self, tool: str) -> tuple[Decision, str]:
        m = self.mode
        if m is Mode.ASK:
            return Decision.ASK, "needs approval (mode ask)"
        if m is Mode.AUTO:
            return Decision.ALLOW, "allowed by mode auto"
        if m is Mode.BYPASS:
            return Decision.ALLOW, "allowed by mode bypassPermissions"
        if m is Mode.ACCEPT_EDITS:
            if tool in EDIT_TOOLS:
                return Decision.ALLOW, "file edit allowed by mode acceptEdits"
            return Decision.ASK, "needs approval (acceptEdits covers file edits only)"
        if m is Mode.PLAN:
            # Plan is a workflow, not a read-only jail (PERM-14): writers ask.
            return Decision.ASK, "needs approval (mode plan)"
        return Decision.DENY, "not pre-approved (mode dontAsk)"

    def _explicit_ask(self, rule_text: str, read_only: bool, suggestion: str) -> Verdict:
        why = f"matches ask rule {rule_text!r}"
        if self.mode is Mode.BYPASS:
            return Verdict(Decision.ALLOW, f"{why}; passed by mode bypassPermissions")
        if self.mode is Mode.DONT_ASK:
            return Verdict(Decision.DENY, f"{why}; mode dontAsk never prompts")
        return Verdict(Decision.ASK, why, explicit=True, suggested_rule=suggestion)

    # ---------------------------------------------------------------- bash
    def _bash(self, command: str, read_only: bool, args: dict[str, Any]) -> Verdict:
        from reasonix.permission.bash import analyze
        from reasonix.permission.suggest import suggest_rule

        analysis = analyze(command)
        literal = command.strip()
        suggestion = suggest_rule("bash", args, self.workspace, analysis)
        for rule in self.deny:
            if rule.is_bash and _bash_hit(rule, literal, analysis):
                return Verdict(Decision.DENY, f"matches deny rule {rule.text!r}")
        secret = self._secret_named(command, analysis)
        if secret:  # before any allow rule, literal grant or mode: only a human, once
            why = f"bash: the command names {secret}, which holds Reasonix's own secrets"
            if self.mode is Mode.DONT_ASK:
                return Verdict(Decision.DENY, f"{why}; mode dontAsk never prompts")
            return Verdict(
                Decision.ASK, f"{why}; a human must approve it", fresh=True, secret=secret
            )
        for rule in self.ask:
            if rule.is_bash and _bash_hit(rule, literal, analysis):
                return self._explicit_ask(rule.text, read_only, suggestion)
        for rule in self.allow:
            if rule.is_bash and rule.kind == "literal" and rule.specifier == literal:
                return Verdict(Decision.ALLOW, f"matches allow rule {rule.text!r}")
        if not analysis.segments:
            return Verdict(Decision.ALLOW, "empty command")
        worst = Verdict(Decision.ALLOW, "")
        for seg in analysis.segments:
            v = self._segment(seg, read_only)
            if v.decision > worst.decision or (
                v.fresh and not worst.fresh and v.decision == worst.decision
            ):
                worst = v
        if worst.decision is Decision.ALLOW:
            return Verdict(Decision.ALLOW, _allow_reason(analysis, self, read_only))
        return worst._replace(suggested_rule=suggestion)

    def _secret_named(self, command: str, analysis: BashAnalysis) -> str:
        """The secret file ``command`` reads or names ("" for none): issue 32."""
        if not self.secrets:
            return ""
        from reasonix.permission.bash.secrets import secret_mention

        return secret_mention(
            command, analysis, self.secrets, cwd=self.workspace, home=self.home, env=os.environ
        )

    def _segment(self, seg: Segment, read_only: bool) -> Verdict:
        from reasonix.permission.bash import Kind

        label = f"bash segment {seg.source or seg.text!r}"
        if seg.kind is Kind.STATIC:
            for rule in self.allow:
                if rule.is_bash and rule.kind != "literal" and _static_hit(rule, seg):
                    return Verdict(Decision.ALLOW, f"{label} matches {rule.text!r}")
        if seg.kind is Kind.NESTED:
            return self._nested(seg, label, read_only)
        if read_only:
            return Verdict(Decision.ALLOW, f"{label}: read-only")
        d, why = self._writer_fallback("bash")
        detail = (
            "matches no allow rule" if seg.kind is Kind.STATIC else f"is dynamic ({seg.reasons[0]})"
        )
        return Verdict(d, f"{label} {detail}; {why}")

    def _nested(self, seg: Segment, label: str, read_only: bool) -> Verdict:
        why = f"{label} is nested/indirect execution ({seg.reasons[0]})"
        if self.mode is Mode.BYPASS:
            return Verdict(Decision.ALLOW, f"{why}; passed by mode bypassPermissions")
        fallback, _ = self._writer_fallback("bash")
        if self.allow_dynamic_bash and (read_only or fallback is Decision.ALLOW):
            return Verdict(Decision.ALLOW, f"{why}; allow_dynamic_bash")
        if self.mode is Mode.DONT_ASK:
            return Verdict(Decision.DENY, f"{why}; mode dontAsk never prompts")
        return Verdict(Decision.ASK, f"{why}; needs fresh human approval", fresh=True)


def _mcp_target(tool_name: str) -> bool:
    """A direct MCP tool, or the proxy calling an MCP target (its readers pass as read-only)."""
    return tool_name.startswith("mcp__") or tool_name == "use_capability"


def _allow_reason(analysis: BashAnalysis, policy: Policy, read_only: bool) -> str:
    parts = [policy._segment(s, read_only).reason for s in analysis.segments]
    return "; ".join(parts)


def _prefix_words(seg: Segment, use_basename: bool) -> tuple[str, ...]:
    if use_basename and seg.argv:
        return (seg.name, *seg.argv[1:])
    return seg.argv


# git options before the subcommand; the first group takes a separate value.
_GIT_VALUED = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
)


def _git_words(seg: Segment) -> tuple[str, ...]:
    """``git -C x --no-pager push`` as ``git push``: deny/ask rules see past global options."""
    if seg.name != "git":
        return ()
    k = 1
    while k < len(seg.argv) and seg.argv[k].startswith("-"):
        k += 2 if seg.argv[k] in _GIT_VALUED else 1
    return ("git", *seg.argv[k:]) if k > 1 else ()


_IFS_RE = Pattern(r"\$\{IFS\}|\$IFS(?![A-Za-z0-9_])")


# Crude word runs for nested commands the parser cannot see into (stdin-fed shells,
# unsupported syntax such as `case`, `function`, `coproc`): split at shell punctuation
# and quotes, drop leading keywords. Only deny/ask rules use them (a false hit is safe).
_CRUDE_SPLIT_RE = Pattern(r"[;&|(){}\n`$<>'\"]+")
_CRUDE_KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "for",
        "in",
        "case",
        "esac",
        "function",
        "coproc",
        "select",
        "time",
        "!",
        "{",
        "}",
        "[[",
        "]]",
    }
)


def _crude_segments(literal: str) -> tuple[Segment, ...]:
    from reasonix.permission.bash import Kind, Segment

    out = []
    for chunk in _CRUDE_SPLIT_RE.split(literal.replace("\\\n", "")):
        words = [w.replace("\\", "") for w in chunk.split()]
        while words and words[0] in _CRUDE_KEYWORDS:
            words.pop(0)
        if words:
            out.append(Segment(tuple(words), chunk.strip(), Kind.NESTED))
    return tuple(out)


def _eager_analyses(literal: str, analysis: BashAnalysis) -> tuple[BashAnalysis, ...]:
    """What deny/ask rules inspect: the analysis, ``$IFS`` read as the space it splits on,
    and for nested commands the crude word runs of the raw text."""
    from reasonix.permission.bash import BashAnalysis, Kind, analyze

    out = [analysis]
    if "IFS" in literal:
        out.append(analyze(_IFS_RE.sub(" ", literal)))
    if analysis.kind is Kind.NESTED:
        out.append(BashAnalysis(literal, _crude_segments(literal)))
    return tuple(out)


def _prefix_hit(prefix: str, argv: tuple[str, ...]) -> bool:
    want = tuple(prefix.split())
    return len(argv) >= len(want) and argv[: len(want)] == want


def _static_hit(rule: Rule, seg: Segment) -> bool:
    """Allow matching: only literal segments, word-boundary prefixes, whole-text globs."""
    if rule.kind == "bare":
        return True
    if rule.kind == "prefix":
        return _prefix_hit(rule.specifier, seg.argv)
    return rule.kind == "spec" and glob_match(rule.specifier, seg.text)


def _bash_hit(rule: Rule, literal: str, analysis: BashAnalysis) -> bool:
    """Deny/ask matching is eager: any segment, wrapped commands, `/bin/rm` as `rm`, raw text."""
    if rule.kind == "bare":
        return True
    if rule.kind == "literal":
        return rule.specifier == literal
    segments = [seg for a in _eager_analyses(literal, analysis) for seg in a.segments]
    for seg in segments:
        for argv in {_prefix_words(seg, False), _prefix_words(seg, True), _git_words(seg)} - {()}:
            if rule.kind == "prefix" and _prefix_hit(rule.specifier, argv):
                return True
            if rule.kind == "spec" and glob_match(rule.specifier, " ".join(argv)):
                return True
        if rule.kind == "spec" and glob_match(rule.specifier, seg.source):
            return True
    return rule.kind == "spec" and glob_match(rule.specifier, literal)
